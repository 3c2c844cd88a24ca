"""launch.py's way to a kernel through the kernel image (image_server.py), for a batch: the same confinement,
without paying torch's import again.

The launcher stays, as the process jupyter_client started: it starts the kernel's sandbox as launch.py
would (bubblewrap, as the kernel's uid, in its cgroup), with a payload that only waits, asks the image for
a kernel inside that sandbox's namespaces, then passes the grader's signals on to the kernel (interrupts,
shutdown) and exits when the kernel does. Killing the launcher ends the sandbox, and with it the kernel
(its PID namespace's first process dies); as root every process of the kernel's uid is ended anyway. Where the
grading process dies unannounced (its supervisor killed), the launcher kills the kernel and ends.
Standard library only.
"""

import ctypes
import json
import os
import select
import signal
import socket
import struct
import time

REQUEST_TIMEOUT = 30.0
RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
ORPHANED = signal.SIGRTMIN + 1  # sent to this launcher by the kernel when its grading process dies (PR_SET_PDEATHSIG)
PR_SET_PDEATHSIG = 1


class Unavailable(Exception):
    """The image could not start this kernel: the launcher starts it afresh instead."""


def _read_until(fd: int, done, deadline: float) -> bytes:
    data = b""
    while not done(data):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise Unavailable("the sandbox did not start in time")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise Unavailable("the sandbox exited before it was ready")
        data += chunk
    return data


def _parsed(data: bytes) -> bool:
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


def _start_sandbox(config: dict, confine) -> tuple[int, int]:
    """bubblewrap with a payload that says it is ready and waits: (bubblewrap's pid, its sandbox's first pid)."""
    info_r, info_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(info_r)
            os.close(ready_r)
            confine(config)
            os.set_inheritable(info_w, True)
            os.set_inheritable(ready_w, True)
            wait = f"printf ready >&{ready_w}; exec {ready_w}>&-; exec sleep infinity"
            argv = [*config["wrapper"][:-1], "--info-fd", str(info_w), "--", "/bin/sh", "-c", wait]
            os.execve(argv[0], argv, dict(config["env"]))
        finally:
            os._exit(127)
    os.close(info_w)
    os.close(ready_w)
    deadline = time.monotonic() + REQUEST_TIMEOUT
    try:
        info = json.loads(_read_until(info_r, _parsed, deadline))
        _read_until(ready_r, lambda data: data == b"ready", deadline)
        return pid, int(info["child-pid"])
    except (ValueError, KeyError, TypeError, OSError) as err:
        _end(pid)
        raise Unavailable(f"the sandbox did not start ({type(err).__name__})") from None
    except Unavailable:
        _end(pid)
        raise
    finally:
        os.close(info_r)
        os.close(ready_r)


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def ask(path: str, request: dict, fds: list[int]) -> int:
    """Send one request (and ``fds``) to the image at ``path``; the pid of the process it forked for it."""
    data = json.dumps(request).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(REQUEST_TIMEOUT)
        try:
            conn.connect(path)
            socket.send_fds(conn, [struct.pack("!I", len(data)) + data], fds)
            size = struct.unpack("!I", _recv(conn, 4))[0]
            reply = json.loads(_recv(conn, min(size, 1 << 16)))
        except (OSError, ValueError, struct.error) as err:
            raise Unavailable(f"the image did not answer ({type(err).__name__}: {err})") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("pid"), int):
        raise Unavailable(f"the image could not start it ({str(reply.get('error') if isinstance(reply, dict) else reply)[:200]})")
    return reply["pid"]


def _ask(config: dict, argv: list[str], sandbox: int | None) -> int:
    """The image's kernel for this start: its pid, as this process sees it."""
    if len(argv) < 3 or argv[1] != "-c":
        raise Unavailable("the kernel's command is not `python -c BOOT ...`")
    request = {key: config.get(key) for key in ("uid", "gid", "limits", "nice", "cgroups", "env", "workdir", "deny_network")}
    request.update(kind="kernel", namespaces=sandbox, boot=argv[2], kernel_args=argv[3:])
    return ask(config["image"], request, [1, 2])


def _recv(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise OSError("the image closed the connection")
        data += chunk
    return data


def _owned_by(pid: int, uid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next(line for line in f if line.startswith("Uid:"))
    except (OSError, StopIteration):
        return False
    return all(int(u) == uid for u in line.split()[1:])


def _end_with_the_grading(pidfd: int, parent: int) -> None:
    """The kernel ends when the grading process that started this launcher dies unannounced (killed with its
    supervisor): it would otherwise run on, reparented, with nobody left to end it. The kernel is killed, and this
    launcher's wait ends with it (then the sandbox, where there is one)."""
    def orphaned(signum, frame):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)

    signal.signal(ORPHANED, orphaned)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(ORPHANED), 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was asked for
        orphaned(ORPHANED, None)


def run_kernel(config: dict, argv: list[str], confine) -> None:
    """Start the kernel from the image and stay its stand-in until it exits (then exit); raise Unavailable,
    having left nothing running, where it could not be started that way."""
    sandbox, parent = None, os.getppid()  # the grading process that started this launcher
    if config.get("wrapper"):
        sandbox, first = _start_sandbox(config, confine)
    try:
        kernel = _ask(config, argv, first if sandbox else None)
        pidfd = os.pidfd_open(kernel)
        if not _owned_by(kernel, config["uid"] if config.get("uid") is not None else os.getuid()):
            os.close(pidfd)
            raise Unavailable("the image's kernel is not of the kernel's uid")
    except (Unavailable, OSError) as err:
        if sandbox:
            _end(sandbox)
        raise err if isinstance(err, Unavailable) else Unavailable(str(err)) from None
    for sig in RELAYED:
        signal.signal(sig, lambda signum, frame: signal.pidfd_send_signal(pidfd, signum))
    _end_with_the_grading(pidfd, parent)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    while not poller.poll():
        pass
    if sandbox:
        _end(sandbox)
    os._exit(0)
