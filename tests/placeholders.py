"""Placeholder lab notebooks: code that does none of a task, by kind (tests of the evidence rule)."""

# Each kind gives every lab task a placeholder: code that does none of the task.
PLACEHOLDERS = {
    "zeros": {
        "def softmax(": "def softmax(x, axis=-1):\n    return np.zeros_like(x)",
        "def additive_attention(": "def additive_attention(query, keys, W_q, W_k, v):\n"
                                   "    return np.zeros(keys.shape[1]), np.zeros(keys.shape[0])",
        "def scaled_dot_product_attention(": "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                             "    return q.new_zeros(*q.shape[:-1], v.shape[-1]), q.new_zeros(*q.shape[:-1], k.shape[-2])",
        "def causal_mask(": "def causal_mask(T, device=None):\n    return torch.zeros(T, T, dtype=torch.bool, device=device)",
        "def self_attention(": "def self_attention(x, W_q, W_k, W_v, causal=True):\n"
                               "    return x.new_zeros(*x.shape[:-1], W_v.shape[-1]), x.new_zeros(*x.shape[:-1], x.shape[-2])",
        "def decode_with_kv_cache(": "def decode_with_kv_cache(x, W_q, W_k, W_v):\n    return x.new_zeros(*x.shape[:-1], W_v.shape[-1])",
        "def sliding_window_mask(": "def sliding_window_mask(T, window, device=None):\n"
                                    "    return torch.zeros(T, T, dtype=torch.bool, device=device)",
        "def rnn_gradient_norm(": "def rnn_gradient_norm(T, factor):\n    return 0.0",
    },
    "uniform weights, ones": {  # c2: the mean of the keys beside uniform weights
        "def softmax(": "def softmax(x, axis=-1):\n    return np.full_like(x, 1.0 / x.shape[axis])",
        "def additive_attention(": "def additive_attention(query, keys, W_q, W_k, v):\n"
                                   "    return keys.mean(axis=0), np.full(len(keys), 1.0 / len(keys))",
        "def scaled_dot_product_attention(": "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                             "    w = q.new_full((*q.shape[:-1], k.shape[-2]), 1.0 / k.shape[-2])\n"
                                             "    return w @ v, w",
        "def causal_mask(": "def causal_mask(T, device=None):\n    return torch.ones(T, T, dtype=torch.bool, device=device)",
        "def self_attention(": "def self_attention(x, W_q, W_k, W_v, causal=True):\n"
                               "    w = x.new_full((*x.shape[:-1], x.shape[-2]), 1.0 / x.shape[-2])\n"
                               "    return w @ (x @ W_v), w",
        "def decode_with_kv_cache(": "def decode_with_kv_cache(x, W_q, W_k, W_v):\n"
                                     "    return (x @ W_v).mean(dim=-2, keepdim=True).expand(*x.shape[:-1], W_v.shape[-1])",
        "def sliding_window_mask(": "def sliding_window_mask(T, window, device=None):\n"
                                    "    return torch.ones(T, T, dtype=torch.bool, device=device)",
        "def rnn_gradient_norm(": "def rnn_gradient_norm(T, factor):\n    return 1.0",
    },
    "an input returned, the projection alone, the identity": {  # c6: x @ W_v
        "def softmax(": "def softmax(x, axis=-1):\n    return x.copy()",
        "def additive_attention(": "def additive_attention(query, keys, W_q, W_k, v):\n"
                                   "    return keys[0].copy(), np.ones(len(keys))",
        "def scaled_dot_product_attention(": "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                             "    return v.clone(), q @ k.transpose(-2, -1)",
        "def causal_mask(": "def causal_mask(T, device=None):\n    return torch.eye(T, dtype=torch.bool, device=device)",
        "def self_attention(": "def self_attention(x, W_q, W_k, W_v, causal=True):\n"
                               "    eye = torch.eye(x.shape[-2], dtype=x.dtype, device=x.device)\n"
                               "    return x @ W_v, eye.expand(*x.shape[:-1], x.shape[-2])",
        "def decode_with_kv_cache(": "def decode_with_kv_cache(x, W_q, W_k, W_v):\n    return x @ W_v",
        "def sliding_window_mask(": "def sliding_window_mask(T, window, device=None):\n"
                                    "    return torch.eye(T, dtype=torch.bool, device=device)",
        "def rnn_gradient_norm(": "def rnn_gradient_norm(T, factor):\n    return float(T)",
    },
}
