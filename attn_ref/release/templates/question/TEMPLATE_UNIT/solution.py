TEMPLATE_UNIT_count = len([2, 4, 4, 4, 5, 5, 7, 9])
TEMPLATE_UNIT_mean = sum([2, 4, 4, 4, 5, 5, 7, 9]) / TEMPLATE_UNIT_count
