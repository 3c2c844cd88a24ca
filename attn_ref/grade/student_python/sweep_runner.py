"""Call the instructor's implementations (the solution, the mutants, the stubs) through the kernel's own
harness, many times over, in a process of its own with the students' interpreter: the seed sweep of
`attn-ref check` (grade/proofs/sweep.py). Only trusted code and trusted data come here, never a student's.

The harness is the very code a graded kernel runs (session.HARNESS_SOURCE), so a call here is a graded
call: same inputs, same reply, same saved arrays; only the kernel and its messages are left out.

Sent as a file and run as `python -I sweep_runner.py` (no attn_ref: standard library, NumPy, torch).
One JSON request per line on stdin, one JSON reply per line on stdout:

    first line:  {"harness": SOURCE, "helpers": SOURCE, "implementations": {LABEL: SOURCE}}
    its reply:   {"broken": {LABEL: TEXT}}          the implementations whose cells raised
    request:     {"inbox": DIR, "function": NAME, "runs": [[LABEL, OUTBOX, SOURCE | null, FRESH], ...]}
    reply:       {"ran": {LABEL: "" | TEXT}}     "" when the harness ran (its reply is OUTBOX/reply.json)

A run's SOURCE, when given, is run in LABEL's namespace before the call (a stub made for these inputs); with
FRESH, LABEL's namespace is made anew first (helpers, then its cell), as a new submission's kernel would be.
"""

import json
import sys
import traceback


def _compiled(helpers, implementations):
    """({label: code of the helpers then its own source}, {label: what its cell raised}), each namespace made
    once to find the cells that raise."""
    code, broken = {}, {}
    helpers = compile(helpers, "<helpers>", "exec")
    for label, source in implementations.items():
        code[label] = (helpers, compile(source, "<%s>" % label, "exec"))
        try:
            _fresh(code[label])
        except Exception as err:  # noqa: BLE001 - a mutant whose cell raises is reported, not swept
            broken[label] = "%s: %s" % (type(err).__name__, str(err)[:200])
            del code[label]
    return code, broken


def _fresh(code):
    """A namespace as a new submission's: the helpers (setup and solutions), then the implementation's own cell."""
    namespace = {"__name__": "__main__"}
    for part in code:
        exec(part, namespace)
    return namespace


def _no_stack(f=None, limit=None):
    return []


def main():
    replies, sys.stdout = sys.stdout, sys.stderr  # what the implementations print never mixes with replies
    # An assignment's setup calls torch.manual_seed, which queues a seed for each accelerator torch was built for
    # (CUDA, XPU, MTIA) with a stack trace of the call, kept for the error message should that accelerator fail to
    # start later. A fresh namespace per seed made three of them: 0.25 ms, a third of a call here. The sweep starts
    # no accelerator (its CUDA lines are not swept), so no such message is ever written: the traces are left out.
    traceback.format_stack = _no_stack
    first = json.loads(sys.stdin.readline())
    harness = {"__name__": "__harness__"}
    exec(compile(first["harness"], "<harness>", "exec"), harness)
    code, broken = _compiled(first["helpers"], first["implementations"])
    namespaces = {}
    replies.write(json.dumps({"broken": broken}) + "\n")
    replies.flush()
    current = [None]
    harness["_main_namespace"] = lambda: current[0]  # the harness looks the function up where it was defined
    for line in sys.stdin:
        request = json.loads(line)
        ran = {}
        harness["shared_reads"] = {}  # the inbox's files read once for every implementation (each gets a copy)
        for label, outbox, source, fresh in request["runs"]:
            try:
                if fresh or label not in namespaces:  # each seed a submission of its own: no state carried over
                    namespaces[label] = _fresh(code[label])
                current[0] = namespaces[label]
                if source:
                    exec(compile(source, "<%s>" % label, "exec"), current[0])
                harness["call"](request["function"], request["inbox"], outbox)
                ran[label] = ""
            except Exception as err:  # noqa: BLE001 - the harness catches the call's own errors; this is the cell's
                ran[label] = "%s: %s" % (type(err).__name__, str(err)[:200])
        harness["shared_reads"] = None
        replies.write(json.dumps({"ran": ran}) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
