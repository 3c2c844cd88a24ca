# mutant: uses the log-sum-exp form but leaves the max out of the normaliser (exp(x − log Σ exp(x − max)), the max never added back), so every entry is off by a factor exp(max)
# must fail: matches the reference on random logits
def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    log_z = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - log_z)
