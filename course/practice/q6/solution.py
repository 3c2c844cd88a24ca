q6_bahdanau_queries = 'A'
q6_vaswani_queries = 'B'
