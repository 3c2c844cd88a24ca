# idiom: swap the axis to the end, reshape to 2-D rows, loop over the rows, reshape and swap back (self-contained)
def softmax(x, axis=-1):
    """Softmax of a NumPy array along `axis`.

    x: np.ndarray of any shape, float32 or float64. Returns an array of the same shape and dtype whose
    slices along `axis` are non-negative and sum to 1. Must not modify x.
    """
    moved = np.swapaxes(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    result = np.empty_like(rows)
    for r in range(rows.shape[0]):
        row = rows[r]
        e = np.exp(row - row.max())
        result[r] = e / e.sum()
    return np.swapaxes(result.reshape(moved.shape), axis, -1)
