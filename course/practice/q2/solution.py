q2_scores = T ** 2  # T: this student's, from the cell under the prompt
q2_bytes = q2_scores * 4
q2_megabytes = q2_bytes / 1e6
