"""Whose variant a submission is graded against: the identity it declares, checked against the platform's
list of its submitters (Gradescope's submission_metadata, a TA's export), never taken on the student's word
where that list exists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from ...portable.variants import MAX_IDENTITY, normalized_identity
from ..inkernel.text import encodable, plain_text

IDENTITY_VARIABLE = "GRADESCOPE_ID"  # what the notebook's identity cell assigns (attn_ref/release/cells/identity.py)


class Basis(str, Enum):
    """Why this identity's variant was graded."""

    DECLARED = "declared"  # the notebook's identity is one of the submitters
    FIRST_SUBMITTER = "first_submitter"  # it declares none, or one that is not a submitter
    UNVERIFIED = "unverified"  # no submitter list: the notebook's identity, unchecked
    DEFAULT = "default"  # no submitter list and no identity: the note's own numbers


@dataclass(frozen=True)
class GradedIdentity:
    identity: str  # whose variant ("" for the default)
    basis: Basis
    declared: str  # what the notebook says, as read

    @property
    def flagged(self) -> bool:
        """For the TA: the variant graded is not one the platform confirms the notebook chose."""
        return self.basis is not Basis.DECLARED


def gradescope_submitters(data) -> tuple[dict, ...]:
    """The submitters of Gradescope's submission_metadata.json ({"users": [{"email", "sid", "name"}, ...]}),
    each field kept only where it is a short string."""
    users = data.get("users") if isinstance(data, dict) else None
    found = []
    for user in users if isinstance(users, list) else []:
        if isinstance(user, dict):
            found.append({key: str(user.get(key))[:MAX_IDENTITY] for key in ("email", "sid", "name")
                          if isinstance(user.get(key), (str, int)) and not isinstance(user.get(key), bool)})
    return tuple(found)


def _ids(submitter: Mapping) -> set[str]:
    return {normalized_identity(submitter.get(key) or "") for key in ("email", "sid")} - {""}


def declared_identity(description: Mapping) -> str:
    """The identity variable's value from the kernel's description of it: a string, or nothing."""
    value = description.get("v") if description.get("t") == "str" else ""
    # hashed as the notebook's own cell hashes it (its other characters kept); a lone surrogate, which cannot be
    # hashed at all, becomes "?" (text.py); it is shown plain wherever it is shown (explained, extra_data.variant)
    return encodable(value.strip()[:MAX_IDENTITY]) if isinstance(value, str) else ""


def choose(declared: str, submitters: Sequence[Mapping] | None) -> GradedIdentity:
    """The identity to grade against. ``submitters``: [{"email", "sid", ...}] from the platform, or None when
    there is no such list (a lone notebook)."""
    known = [s for s in submitters or () if _ids(s)]
    if submitters is None or not known:
        return GradedIdentity(declared, Basis.UNVERIFIED if declared else Basis.DEFAULT, declared)
    if declared and any(normalized_identity(declared) in _ids(s) for s in known):
        return GradedIdentity(declared, Basis.DECLARED, declared)
    first = known[0]
    return GradedIdentity((first.get("email") or first.get("sid") or "").strip(), Basis.FIRST_SUBMITTER, declared)


def explained(graded: GradedIdentity, numbers: dict[str, dict]) -> str:
    """The visible line: whose numbers were graded, why, and which numbers those are."""
    graded = GradedIdentity(plain_text(graded.identity), graded.basis, plain_text(graded.declared))  # as shown
    shown = "; ".join(f"{q}: " + ", ".join(f"{k} = {v}" for k, v in values.items()) for q, values in numbers.items())
    if graded.basis is Basis.DECLARED:
        why = f"Graded with the numbers of {graded.identity} (your {IDENTITY_VARIABLE}, a submitter of this submission)"
    elif graded.basis is Basis.FIRST_SUBMITTER and graded.declared:
        why = (f"{IDENTITY_VARIABLE} is {graded.declared!r}, which is not a submitter of this submission, so it was "
               f"graded with the numbers of {graded.identity}: check its spelling in the first cells and run the notebook again")
    elif graded.basis is Basis.FIRST_SUBMITTER:
        why = (f"{IDENTITY_VARIABLE} is empty, so it was graded with the numbers of {graded.identity}, this submission's "
               "first submitter: type your Gradescope email in the first cells and run the notebook again to see them")
    elif graded.basis is Basis.UNVERIFIED:
        why = f"Graded with the numbers of {graded.identity} (the notebook's {IDENTITY_VARIABLE}; no submitter list to check it against)"
    else:
        why = f"No {IDENTITY_VARIABLE} and no submitter list: graded with the note's own numbers"
    return f"{why}. {shown}."
