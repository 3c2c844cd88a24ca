T = 4096
q2_scores = T ** 2
q2_bytes = q2_scores * 4
q2_megabytes = q2_bytes / 1e6
