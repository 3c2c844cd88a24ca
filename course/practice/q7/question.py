"""q7: KV caching and training cost (note 3.1, §11.7, with §3 and §6)."""

from attn_ref.release.units import Answer, Question

QUESTION = Question(
    name="q7",
    source="Note 3.1, §11.7 (and §3, §6)",
    title="KV caching and training cost",
    # a decode-time (inference) saving; training still builds every full T×T map
    answers=(Answer("q7_changes_training_cost", "bool", False),),
)
