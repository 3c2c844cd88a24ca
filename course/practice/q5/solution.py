q5_rnn_path = T - 1  # T and factor: this student's, from the cell under the prompt
q5_attention_path = 1
q5_rnn_product = factor ** q5_rnn_path
