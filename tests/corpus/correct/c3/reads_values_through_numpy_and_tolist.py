# idiom: values read back into Python for checks (.tolist(), .cpu().numpy(), torch.allclose): sound on every device
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v, with an optional bool mask (True = may attend)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    bad = np.isnan(weights.detach().cpu().numpy())
    if bad.any():
        weights = weights.masked_fill(torch.from_numpy(bad).to(weights.device), 0.0)
    if any(math.isnan(w) for w in weights.flatten().tolist()):
        raise ValueError("NaN weights left")
    if mask is None:
        row = weights.sum(-1)
        assert torch.allclose(row, torch.ones_like(row)), "rows should sum to 1"
    return weights @ v, weights
