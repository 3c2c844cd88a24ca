q7_changes_training_cost = False
