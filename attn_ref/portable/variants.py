"""Per-student variants of numeric answers: which parameter values one identity gets for one question.

A question may declare parameters, each with a short list of allowed values; every combination is one
variant. An identity (a Gradescope email or SID) picks one with a keyed hash: the key is per course and
term (not a secret: changing it re-rolls every variant). No identity gives the default variant (the
note's own numbers).

Standard library only, and no module-level state besides constants: the release builder writes this
source into the student notebook (which prints the student's own values) and the grader imports it (which
grades against them), so the two always agree.
"""

import hashlib
import itertools

MAX_IDENTITY = 200  # characters of an identity that count (an email or an SID is far shorter)


def normalized_identity(identity):
    """An identity as it is hashed: trimmed, lower case, bounded ("Ana@Uni.edu " is ana@uni.edu)."""
    return str(identity).strip().lower()[:MAX_IDENTITY]


def combinations(parameters):
    """Every variant of [(name, values), ...] in a fixed order: a list of {name: value}."""
    names = [name for name, _ in parameters]
    return [dict(zip(names, values)) for values in itertools.product(*(values for _, values in parameters))]


def variant_index(key, identity, question, count):
    """Which of ``count`` variants this identity gets for this question; None without an identity."""
    identity = normalized_identity(identity)
    if not identity:
        return None
    digest = hashlib.sha256("\0".join((str(key), identity, str(question))).encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def parameters_for(key, identity, question, parameters, defaults):
    """{name: value} of this identity's variant of the question (``defaults`` without an identity)."""
    variants = combinations(parameters)
    index = variant_index(key, identity, question, len(variants))
    return dict(defaults) if index is None else variants[index]
