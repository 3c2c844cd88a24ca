# mutant: reads token t along dimension 1 (x[:, t] or x[:, t, :]), right only for 3-D (B, T, d_model) input
# its error names it
# must fail: extra leading dimensions
def decode_with_kv_cache(x, W_q, W_k, W_v):
    keys, values, outputs = [], [], []
    for t in range(x.shape[-2]):
        x_t = x[:, t].unsqueeze(-2)
        keys.append(x_t @ W_k)
        values.append(x_t @ W_v)
        out_t, _ = scaled_dot_product_attention(x_t @ W_q, torch.cat(keys, dim=-2), torch.cat(values, dim=-2))
        outputs.append(out_t)
    return torch.cat(outputs, dim=-2)
