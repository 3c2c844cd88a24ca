"""Runs INSIDE the student's kernel, never trusted: the boot, the harness and what it speaks (the wire format,
the text rule, the grader's error base), sent as source (session.KERNEL_MODULES). Imports only the standard
library, numpy, torch, ipykernel, each other and attn_ref.portable; the grader imports these to check replies."""
