# Threads that flood every channel the kernel has: stdout (IOPub) and forged shell messages, forever.
import threading


def _print_forever():
    line = "x" * 10000
    while True:
        print(line, flush=True)


def _shell_forever():
    kernel = get_ipython().kernel  # noqa: F821 - IPython's own global
    while True:
        parent = kernel.get_parent() or {}
        kernel.session.send(kernel.shell_stream, "execute_reply", {"status": "ok", "x": "y" * 100000}, parent=parent)


for target in (_print_forever, _shell_forever):
    threading.Thread(target=target, daemon=True).start()
