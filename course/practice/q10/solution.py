tokens = ['cat', 'sat', 'on', 'it']
q10_rnn_steps = tokens.index('it') - tokens.index('cat')
q10_attention_path = 1
q10_scores = len(tokens) ** 2
