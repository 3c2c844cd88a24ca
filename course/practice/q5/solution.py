T = 50
q5_rnn_path = T - 1
q5_attention_path = 1
q5_rnn_product = 0.9 ** q5_rnn_path
