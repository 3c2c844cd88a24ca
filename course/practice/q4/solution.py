q4_scores_T8 = 8 ** 2
q4_scores_T32 = 32 ** 2
q4_ratio = q4_scores_T32 // q4_scores_T8
