# mutant: writes each step's attention by hand and divides the scores by sqrt(d_model), x's width, instead of sqrt(d_k), the keys' width
# must fail: equals full causal
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[..., t : t + 1, :]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        scores = (x_t @ W_q) @ torch.cat(keys, dim=-2).transpose(-2, -1) / math.sqrt(x.shape[-1])
        outputs.append(torch.softmax(scores, dim=-1) @ torch.cat(values, dim=-2))
    return torch.cat(outputs, dim=-2)
