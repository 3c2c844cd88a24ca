# mutant: handles (T, d_model) and (B, T, d_model) only: a 2-D x is made 3-D, then the tokens are read along dimension 1
# must fail: extra leading dimensions
def decode_with_kv_cache(x, W_q, W_k, W_v):
    two_d = x.ndim == 2
    if two_d:
        x = x.unsqueeze(0)
    keys, values, outputs = [], [], []
    for t in range(x.shape[1]):
        x_t = x[:, t : t + 1]
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=1), torch.cat(values, dim=1))
        outputs.append(out_t)
    out = torch.cat(outputs, dim=1)
    return out[0] if two_d else out
