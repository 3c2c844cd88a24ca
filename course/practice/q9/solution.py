q9_scores = {T: T ** 2 for T in (32, 512, 4096)}
