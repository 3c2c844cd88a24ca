# The hidden stand-ins: c1, c3 and c4 are wrong on purpose, so c2, c5 and c6 are graded with correct
# versions bound in this kernel. Each of those reads their code (walking the harness's frames: its call
# holds every stand-in's source) and tries every way back into results: an exception's message, an
# exception class named by the code, the tripwire's list of forbidden calls, a copy kept for a later
# call, a file that a restarted kernel's notebook raises from a cell. __MODE__: "frames" raises at once;
# "later" keeps it and raises it later.
import os
import sys

KEPT = "/tmp/kept-stand-ins-__TAG__"
MODE = "__MODE__"
_kept: list[str] = []


def _stand_in_code() -> str:
    found = []
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and isinstance(value.get("substitutes"), dict):
                found += [str(source) for source in value["substitutes"].values()]
        frame = frame.f_back
    return "\n".join(found)


def _report_as_forbidden(code: str) -> None:
    """The tripwire's own list of forbidden calls, in the harness's frames: the code's lines as calls' names."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(getattr(value, "forbidden_called", None), set):
                value.forbidden_called.update(line.strip() for line in code.splitlines()[:16])
        frame = frame.f_back


def _leak() -> None:
    code = _stand_in_code()
    if code:
        _report_as_forbidden(code)
        _kept.append(code)
        with open(KEPT, "w") as f:
            f.write(code)
    if MODE == "frames" and code:
        raise RuntimeError(code)
    if _kept:  # a later call: the kept copy, as a message and as the name of a class of its own
        named = type("".join(c if c.isalnum() else "_" for c in _kept[0][:80]), (Exception,), {})
        if len(_kept) > 2:
            os._exit(1)  # a restart: the notebook runs again and its last cell raises the file's copy
        raise named(_kept[0])
    return None


def softmax(x, axis=-1):
    return x  # wrong: c2 gets the stand-in


def scaled_dot_product_attention(q, k, v, mask=None):
    return q, q  # wrong: c5 and c6 get the stand-in


def causal_mask(T, device=None):
    import torch

    return torch.ones(T, T, dtype=torch.bool, device=device)  # wrong: c5 and c6 get the stand-in


def additive_attention(query, keys, W_q, W_k, v):
    _leak()


def self_attention(x, W_q, W_k, W_v, causal=True):
    _leak()


def decode_with_kv_cache(x, W_q, W_k, W_v):
    _leak()


def sliding_window_mask(T, window, device=None):
    _leak()  # graded before any stand-in: nothing to leak yet


def rnn_gradient_norm(T, factor):
    _leak()
