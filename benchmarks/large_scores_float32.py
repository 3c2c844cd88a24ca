"""c3's "large scores" line: how many draws an attention computing in float32 fails, at each tolerance.

Run: python benchmarks/large_scores_float32.py [--draws N]. The inputs are the line's (q, k of scale 30, d_k = 8),
the attention is the reference's run in float32, and the comparison is the grader's own (compare_array).
"""

import argparse

import numpy as np
import torch

from attn_ref.attention import scaled_dot_product_attention
from attn_ref.grade.scoring.comparators import compare_array

TOLERANCES = (1e-5, 1e-3, 1e-2)


def close(got: torch.Tensor, ref: torch.Tensor, tol: float) -> bool:
    return compare_array("out", got.double().numpy(), ref.numpy(), tol, tol, "float64", {})[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20_000)
    draws = parser.parse_args().draws
    rng = np.random.default_rng(0)
    failed = dict.fromkeys(TOLERANCES, 0)
    for _ in range(draws):
        q = torch.tensor(rng.normal(size=(2, 5, 8)) * 30)
        k = torch.tensor(rng.normal(size=(2, 6, 8)) * 30)
        v = torch.tensor(rng.normal(size=(2, 6, 3)))
        ref = scaled_dot_product_attention(q, k, v)
        got = scaled_dot_product_attention(q.float(), k.float(), v.float())
        for tol in TOLERANCES:
            failed[tol] += not all(close(g, r, tol) for g, r in zip(got, ref))
    for tol, n in failed.items():
        print(f"allowed {tol:.0e}: float32 internals fail {n} of {draws} draws ({n / draws:.2%})")


if __name__ == "__main__":
    main()
