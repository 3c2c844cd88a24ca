q3_choice = 'C'
