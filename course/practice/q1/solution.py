tokens = ['cat', 'sat', 'on', 'it']
q1_lstm_sequential_steps = len(tokens)  # step t waits for step t - 1
q1_attention_sequential_steps = 1  # all queries meet all keys in one matmul
q1_choice = 'B'
