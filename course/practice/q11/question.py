"""q11: batching and stacking (note 3.1, §4, "before batching and stacking layers")."""

from attn_ref.costs import attention_map_bytes
from attn_ref.release.units import Answer, Question

T, MODEL = 4096, dict(batch=8, heads=12, layers=12)

QUESTION = Question(
    name="q11",
    source='Note 3.1, §4, "before batching and stacking layers"',
    title="Batching and stacking",
    answers=(
        Answer("q11_bytes", "int", attention_map_bytes(T, **MODEL), low=1),
        Answer("q11_bytes_bf16", "int", attention_map_bytes(T, bytes_per_score=2, **MODEL), low=1),
    ),
)
