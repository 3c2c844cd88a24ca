"""Benchmarks of the reference: KV-cache decode vs full recompute, chunked vs full attention memory.

Run: .venv/bin/python benchmarks/reference.py   (or `make bench`). Prints numbers; asserts nothing.
Memory is the peak resident set size of a fresh process, measured around one call (the kernel's
high-water mark, reset through /proc/self/clear_refs), since tracemalloc cannot see torch's buffers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import torch

import attn_ref

D_MODEL, D_HEAD = 64, 64


def decode_by_full_recompute(x, W_q, W_k, W_v):
    """What decoding costs without a cache: re-run causal self-attention over the whole prefix each step."""
    outs = [attn_ref.self_attention(x[..., : t + 1, :], W_q, W_k, W_v, causal=True)[0][..., -1:, :] for t in range(x.shape[-2])]
    return torch.cat(outs, dim=-2)


def time_decode(T: int) -> tuple[float, float, float]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, T, D_MODEL, generator=g)
    W = [torch.randn(D_MODEL, D_HEAD, generator=g) / D_MODEL**0.5 for _ in range(3)]
    start = time.perf_counter()
    cached = attn_ref.decode_with_kv_cache(x, *W)
    t_cache = time.perf_counter() - start
    start = time.perf_counter()
    full = decode_by_full_recompute(x, *W)
    t_full = time.perf_counter() - start
    err = (cached - full).abs().max().item()
    return t_cache, t_full, err


MEMORY_PROBE = r"""
import json, sys, torch, attn_ref
T, mode = int(sys.argv[1]), sys.argv[2]
torch.set_num_threads(1)
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, T, 64, generator=g) for _ in range(3))
attn_ref.chunked_attention(q[:, :256], k[:, :256], v[:, :256], chunk_size=128)  # warm up allocator and kernels
attn_ref.scaled_dot_product_attention(q[:, :256], k[:, :256], v[:, :256])

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak-RSS high-water mark
base = rss("VmRSS:")
if mode == "full":
    out, weights = attn_ref.scaled_dot_product_attention(q, k, v)
    map_bytes = weights.element_size() * weights.nelement()
else:
    out = attn_ref.chunked_attention(q, k, v, chunk_size=128)
    map_bytes = 0
print(json.dumps({"peak": rss("VmHWM:") - base, "map_bytes": map_bytes}))
"""


def peak_memory(T: int, mode: str) -> dict:
    result = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(T), mode], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main() -> None:
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32, d_model = d_head = {D_MODEL}")
    print("\nKV-cache decode vs full recompute at every step")
    print(f"{'T':>6} {'cache s':>9} {'recompute s':>12} {'speed-up':>9} {'max |diff|':>11}")
    for T in (256, 1024):
        t_cache, t_full, err = time_decode(T)
        print(f"{T:>6} {t_cache:>9.3f} {t_full:>12.3f} {t_full / t_cache:>8.1f}x {err:>11.1e}")

    T = 4096
    full, chunked = peak_memory(T, "full"), peak_memory(T, "chunked")
    formula = attn_ref.attention_map_bytes(T)
    print(f"\nPeak extra RSS at T = {T} (one head, fp32, chunk 128)")
    print(f"  full attention     {full['peak'] / 2**20:8.1f} MiB   (its weights tensor: {full['map_bytes']:,} B;"
          f" formula T²·4 = {formula:,} B)")
    print(f"  chunked attention  {chunked['peak'] / 2**20:8.1f} MiB")
    print(f"  ratio chunked/full {chunked['peak'] / full['peak']:8.3f}")


if __name__ == "__main__":
    main()
