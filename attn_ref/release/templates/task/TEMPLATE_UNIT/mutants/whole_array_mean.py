# mutant: subtracts the mean of the whole array, not the mean of each slice along axis
# must fail: rows of a 4 × 6 array
def TEMPLATE_FUNCTION(x, axis=-1):
    return x - x.mean()
