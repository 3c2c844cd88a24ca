"""Run the instructor's mutants on a probe's inputs: a process of its own, with the students' interpreter
(NumPy and torch), never the student's kernel. Only trusted code and trusted data come here: the
assignment's helpers (setup and solutions), its mutants, the grader's own harness and inputs the grader
generated.

Sent as a file and run as `python -I mistakes_runner.py` (no attn_ref: standard library, NumPy, torch).
Each mutant is called through the harness the student's kernel runs (session.HARNESS_SOURCE, sent on the
first line), on the files of the call the kernel got (call.json and the inputs), so what comes back is
what the kernel would have said of it: its outputs, its error, its inputs after the call, its projection
counts, whether autograd ran, on the probe's device (meta tensors through the same stand-ins).
One JSON request per line on stdin, one JSON reply per line on stdout:

    first line:  {"helpers": SOURCE, "harness": SOURCE}    the mutants' namespace, and the kernel's harness
    request:     {"folder": DIR, "before": [DIR, ...], "replayed": [ID, ...], "function": NAME,
                  "mutants": [[ID, SOURCE], ...]}
    reply:       {"results": {ID: {"reply": "m<ID>"} | {"error": TEXT}}}

Each DIR holds one call's files. Mutant ID's reply (the harness's reply.json and its .npy files) is written to
DIR/m<ID>/; "error" says that its namespace could not be made (what its function raises is in its reply, as
the kernel's would be). "before": the calls the student's function got since the mutants last heard of this
task, in order: each mutant of "replayed" (those that keep state between calls: a module-level cache) is
called on them first, their replies left unread, so that it holds what the student's function held.
"""

import json
import os
import sys

_namespaces = {}


def _namespace(helpers, source):
    """A mutant's own namespace: the helpers run anew in it (its functions then call the mutant's overrides),
    compiled once for every mutant."""
    if source not in _namespaces:
        namespace = {"__name__": "__mistakes__"}
        exec(helpers, namespace)
        exec(compile(source, "<mutant>", "exec"), namespace)
        _namespaces[source] = namespace
    return _namespaces[source]


def main():
    replies, sys.stdout = sys.stdout, sys.stderr  # what the helpers or mutants print never mixes with replies
    first = json.loads(sys.stdin.readline())
    helpers, harness = compile(first["helpers"], "<helpers>", "exec"), {"__name__": "__harness__"}
    exec(compile(first["harness"], "<harness>", "exec"), harness)
    for line in sys.stdin:
        request = json.loads(line)
        results, replayed = {}, set(request.get("replayed", []))
        harness["shared_reads"] = {}  # each input file read once for every mutant (each gets a copy)
        for mutant, source in request["mutants"]:
            out = os.path.join(request["folder"], "m%d" % int(mutant))
            try:
                namespace = _namespace(helpers, source)
                os.mkdir(out)
            except Exception as err:  # noqa: BLE001 - a mutant that cannot be defined matches nothing
                results[mutant] = {"error": "%s: %s" % (type(err).__name__, str(err)[:200])}
                continue
            harness["_main_namespace"] = lambda namespace=namespace: namespace  # the harness looks the function up there
            for earlier in request.get("before", []) if mutant in replayed else []:
                unread = os.path.join(earlier, "m%d" % int(mutant))
                os.mkdir(unread)
                harness["call"](request["function"], earlier, unread)
            harness["call"](request["function"], request["folder"], out)  # fresh inputs each call: a mutant may write into them
            results[mutant] = {"reply": "m%d" % int(mutant)}
        harness["shared_reads"] = None
        replies.write(json.dumps({"results": results}) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
