"""The reference on CUDA equals the float64 CPU reference (run by scripts/gpu-check on a GPU machine)."""

import numpy as np
import pytest
import torch

import attn_ref

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")


@pytest.fixture(autouse=True)
def no_tf32():
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    yield
    torch.set_float32_matmul_precision(before)


def test_cuda_matches_cpu_float64():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 257, 16)) for _ in range(3))
    expected, _ = attn_ref.scaled_dot_product_attention(q, k, v, causal=True)
    tensors = [torch.tensor(a, dtype=torch.float32, device="cuda") for a in (q, k, v)]
    out, weights = attn_ref.scaled_dot_product_attention(*tensors, causal=True)
    assert out.device.type == "cuda" and out.dtype == torch.float32
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-4, atol=1e-4)
    chunked = attn_ref.chunked_attention(*tensors, chunk_size=64, causal=True)
    np.testing.assert_allclose(chunked.cpu().numpy(), expected, rtol=1e-4, atol=1e-4)


def test_cuda_masks_and_decode():
    assert attn_ref.causal_mask(5, device="cuda").device.type == "cuda"
    x = torch.randn(2, 9, 8, device="cuda", dtype=torch.float64)
    W = [torch.randn(8, 8, device="cuda", dtype=torch.float64) for _ in range(3)]
    full, _ = attn_ref.self_attention(x, *W, causal=True)
    torch.testing.assert_close(attn_ref.decode_with_kv_cache(x, *W), full)
