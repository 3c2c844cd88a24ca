"""Runs in the TA's process: a class's batch (discovery, unpacking exports, the cluster, the gradebook, Canvas,
the integrity report, written pages). Grades through core.grade and reads results; may import everything of
attn_ref.grade below it (never proofs) and dask, rich, matplotlib; nothing in grading imports it."""
