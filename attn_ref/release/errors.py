"""The release side's one exception base: what an instructor must fix, said in one message."""


class ReleaseError(Exception):
    """A release cannot be made as asked: the message names the file or the step and what to do. The
    command line prints it once (attn_ref/cli.py) and exits with ``exit_code``."""

    exit_code = 2
