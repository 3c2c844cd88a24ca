"""The tripwire's names (harness._forbidden): each op's family is worked out once and kept by the op's identity,
so an object that claims to equal a forbidden op (its __eq__ always true, its hash the op's) neither hides the
op nor is taken for it."""

from __future__ import annotations

import torch.nn.functional as F

from attn_ref.grade.inkernel import harness


class _ClaimsToBeSdpa:
    __name__ = "innocent"

    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash(F.scaled_dot_product_attention)


def test_an_op_is_known_by_its_identity_not_by_what_equals_it():
    liar = _ClaimsToBeSdpa()
    assert harness._forbidden(liar) is None
    assert harness._forbidden(F.scaled_dot_product_attention) == "scaled_dot_product"
    assert harness._forbidden(liar) is None  # both kept, each by its own identity
    assert harness._forbidden(F.scaled_dot_product_attention) == "scaled_dot_product"
    assert harness._forbidden(F.softmax) is None
