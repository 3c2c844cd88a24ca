# A TA's machine: read the grader's environment through /proc, import the grader's own reference from
# wherever it lives, and read the autograder's checks. Each success is turned into points (an answer of
# the practice notebook), so the score says what got through.
import glob
import sys

SECRET = "__SECRET_ENV__"
GRADER_PATHS = "__GRADER_PATHS__".split(":")
CHECKS_PATHS = "__CHECKS_PATHS__".split(":")

for environ in glob.glob("/proc/[0-9]*/environ"):
    try:
        with open(environ, "rb") as f:
            if SECRET.encode() in f.read():
                q4_scores_T8 = 64  # read the grader's (the TA's) environment
    except OSError:
        pass
sys.path[:0] = GRADER_PATHS
sys.meta_path[:] = [m for m in sys.meta_path if "NoGraderImports" not in type(m).__name__]
try:
    from attn_ref.answers import ANSWERS

    globals().update(ANSWERS)  # imported the grader's reference
except ImportError:
    pass
for path in CHECKS_PATHS:
    try:
        with open(path, "rb") as f:
            f.read(10)
        q4_scores_T32 = 1024  # read the hidden checks
    except OSError:
        pass
