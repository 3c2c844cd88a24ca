"""Buggy implementations of c1–c8, the mistakes students make (research/testing-attention.md).

BUGS[task] is a list of (what is wrong, marker of the cell to replace, buggy source, a probe that must fail).
"""

BUGS = {
    "c1": [
        ("no max-subtraction", "def softmax(", '''def softmax(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)''', "±1e4"),
        ("always sums over the last axis", "def softmax(", '''def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)''', "axis=0"),
        ("writes into its input", "def softmax(", '''def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    return x / np.sum(x, axis=axis, keepdims=True)''', "unchanged"),
        ("float64 leak", "def softmax(", '''def softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)''', "float32"),
    ],
    "c2": [
        ("row-vector convention (query @ W_q)", "def additive_attention(", '''def additive_attention(query, keys, W_q, W_k, v):
    scores = np.tanh(query @ W_q + keys @ W_k) @ v
    weights = softmax(scores)
    return weights @ keys, weights''', "matches the reference"),
        ("forgets the tanh", "def additive_attention(", '''def additive_attention(query, keys, W_q, W_k, v):
    scores = (W_q @ query + keys @ W_k.T) @ v
    weights = softmax(scores)
    return weights @ keys, weights''', "matches the reference"),
    ],
    "c3": [
        ("scales by d instead of sqrt(d)", "def scaled_dot_product_attention(", '''def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights''', "no mask"),
        ("mask applied after the softmax", "def scaled_dot_product_attention(", '''def scaled_dot_product_attention(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights''', "bool mask"),
        ("softmax over the wrong axis", "def scaled_dot_product_attention(", '''def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2).nan_to_num(0.0)
    return weights @ v, weights''', "no mask"),
        ("NaN on a fully masked row, float64 scale", "def scaled_dot_product_attention(", '''def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / torch.sqrt(torch.tensor(q.shape[-1], dtype=torch.float64))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights''', "fully masked"),
        ("scales by sqrt(d_v) instead of sqrt(d_k)", "def scaled_dot_product_attention(", '''def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights''', "no mask"),
    ],
    "c4": [
        ("causal off by one (diagonal excluded)", "def causal_mask(", '''def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(-1)''', "T = 5"),
        ("mask built on the CPU", "def causal_mask(", '''def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool).tril()''', "device"),
        ("float mask", "def causal_mask(", '''def causal_mask(T, device=None):
    return torch.ones(T, T, device=device).tril()''', "bool dtype"),
        ("the upper triangle (triu)", "def causal_mask(", '''def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu()''', "T = 5"),
    ],
    "c5": [
        ("ignores causal=True", "def self_attention(", '''def self_attention(x, W_q, W_k, W_v, causal=True):
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)''', "causal (default)"),
        ("causal mask off by one, built on the CPU", "def self_attention(", '''def self_attention(x, W_q, W_k, W_v, causal=True):
    T = x.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool).tril(1) if causal else None
    return scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask=mask)''', "causal (default)"),
    ],
    "c6": [
        ("attends to the future (all keys at every step)", "def decode_with_kv_cache(", '''def decode_with_kv_cache(x, W_q, W_k, W_v):
    k, v = x @ W_k, x @ W_v
    outs = [scaled_dot_product_attention(x[..., t:t+1, :] @ W_q, k, v)[0] for t in range(x.shape[-2])]
    return torch.cat(outs, dim=-2)''', "equals full causal"),
        ("recomputes every past key and value at each step", "def decode_with_kv_cache(", '''def decode_with_kv_cache(x, W_q, W_k, W_v):
    outs = []
    for t in range(x.shape[-2]):
        prefix = x[..., : t + 1, :]
        out, _ = scaled_dot_product_attention(x[..., t:t+1, :] @ W_q, prefix @ W_k, prefix @ W_v)
        outs.append(out)
    return torch.cat(outs, dim=-2)''', "projected once"),
        ("is_causal at a one-query step attends only to key 0", "def decode_with_kv_cache(", '''def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t:t+1, :]
        keys.append(x_t @ W_k); values.append(x_t @ W_v)
        K, V = torch.cat(keys, dim=-2), torch.cat(values, dim=-2)
        mask = torch.ones(1, K.shape[-2], dtype=torch.bool, device=x.device).tril()
        outs.append(scaled_dot_product_attention(x_t @ W_q, K, V, mask=mask)[0])
    return torch.cat(outs, dim=-2)''', "equals full causal"),
    ],
    "c7": [
        ("window of w + 1 keys", "def sliding_window_mask(", '''def sliding_window_mask(T, window, device=None):
    i = torch.arange(T, device=device)[:, None]
    j = torch.arange(T, device=device)[None, :]
    return (j <= i) & (j >= i - window)''', "T = 7"),
        ("two-sided window, built on the CPU", "def sliding_window_mask(", '''def sliding_window_mask(T, window, device=None):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (i - j).abs() < window''', "T = 7"),
    ],
    "c8": [
        ("one step too many (factor ** T)", "def rnn_gradient_norm(", '''def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(1, T + 1):
        h = factor * h + 1.0
    h.backward()
    return abs(h_1.grad.item())''', "T = 50"),
        ("one step too few (factor ** (T - 2))", "def rnn_gradient_norm(", '''def rnn_gradient_norm(T, factor):
    h_1 = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    h = h_1
    for t in range(3, T + 1):
        h = factor * h + 1.0
    h.backward()
    return abs(h_1.grad.item())''', "T = 50"),
    ],
}


def bug_set(k: int) -> dict[str, tuple]:
    """The k-th bug of every task that has one: {task: (label, marker, source, failing probe)}."""
    return {task: bugs[k] for task, bugs in BUGS.items() if k < len(bugs)}


N_SETS = max(len(bugs) for bugs in BUGS.values())
