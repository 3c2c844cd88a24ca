"""Runs in the grader's process, the trusted scorer: the autograder zip, inputs, comparators, one grader per
unit kind, static analysis. Reads only plain data from the kernel (through session and the wire format); may
import numpy, torch, everything of attn_ref.grade below it and the reference, never the classroom or proofs."""
