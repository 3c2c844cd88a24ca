"""An independent, deliberately naive float64 implementation: one query, one key at a time.

Shares no code with attn_ref; the tests compare the two where torch's own SDPA uses other conventions.
"""

import math

import numpy as np


def loop_attention(q, k, v, allowed):
    """q (Tq, d), k (Tk, d), v (Tk, dv), allowed (Tq, Tk) bool -> out (Tq, dv), weights (Tq, Tk)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    Tq, Tk = q.shape[0], k.shape[0]
    weights = np.zeros((Tq, Tk))
    out = np.zeros((Tq, v.shape[1]))
    for i in range(Tq):
        visible = [j for j in range(Tk) if allowed[i][j]]
        if not visible:
            continue
        scores = {j: sum(q[i, c] * k[j, c] for c in range(q.shape[1])) / math.sqrt(q.shape[1]) for j in visible}
        top = max(scores.values())
        total = sum(math.exp(s - top) for s in scores.values())
        for j in visible:
            weights[i, j] = math.exp(scores[j] - top) / total
            out[i] += weights[i, j] * v[j]
    return out, weights


def loop_causal(Tq, Tk):
    return [[j <= i + (Tk - Tq) for j in range(Tk)] for i in range(Tq)]


def loop_window(T, w):
    return [[i - w + 1 <= j <= i for j in range(T)] for i in range(T)]


def loop_additive(query, keys, W_q, W_k, v):
    """Bahdanau, scalar by scalar: e_i = sum_a v_a tanh(sum_c W_q[a,c] q_c + sum_c W_k[a,c] h_i[c])."""
    T, d_a = len(keys), len(v)
    e = []
    for i in range(T):
        total = 0.0
        for a in range(d_a):
            pre = sum(W_q[a, c] * query[c] for c in range(len(query)))
            pre += sum(W_k[a, c] * keys[i][c] for c in range(len(keys[i])))
            total += v[a] * math.tanh(pre)
        e.append(total)
    top = max(e)
    ex = [math.exp(s - top) for s in e]
    weights = np.array([x / sum(ex) for x in ex])
    context = sum(weights[i] * np.asarray(keys[i], dtype=np.float64) for i in range(T))
    return context, weights
