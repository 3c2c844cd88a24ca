"""The kernel image: a process of the students' environment that has imported numpy and torch once, and
forks one kernel per request, so that a batch pays torch's import once instead of once per submission.

Started by the grader's supervisor (image.py) as `python -c SOURCE FD SUPERVISOR BOUNDS`, the way a kernel starts (the same
interpreter, flags and environment), from a private empty folder; FD is a listening Unix socket the grader
made in a folder of its own (so no path of it is in the command line every kernel inherits). Standard library only, apart from
what it imports to share: numpy, torch, the part of torch that meta tensors load on first use, and
ipykernel's modules (no kernel is made). It refuses to serve if those imports left a thread running
(fork copies only the calling thread) or a shared writable mapping (which every child would share).

It never reads a request itself and runs no student code: on each connection (the socket lies in a folder
only the grader can reach, and the peer must be the grader's own uid) it forks, and only the child reads the
request, confines itself as launch.py confines a kernel (oom score, cgroup, nice, rlimits, umask, the
network ban where it has no namespaces, the namespaces bubblewrap made for this start, the submission's uid,
no capabilities left) and becomes the
kernel. So the image's memory holds what its imports made, never anything of a grading, and each kernel
is a copy of that, in a process no other submission's code ran in.
"""

import ctypes
import gc
import importlib.util
import json
import os
import select
import signal
import socket
import struct
import sys
import types

MAX_REQUEST = 1 << 20
MAX_FDS = os.sysconf("SC_OPEN_MAX")
LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER = 1, 4, 24, 36
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
NS_GET_PARENT = 0xB702  # ioctl: the parent of a user namespace
CAPABILITY_VERSION_3 = 0x20080522
# joined in this order: the outer user namespace first (bubblewrap's mount namespace belongs to it), the inner
# one (bubblewrap's --disable-userns) last
NAMESPACES = ("mnt", "net", "ipc", "uts", "pid", "cgroup")
BOUNDS = None  # launch_bounds.py, loaded by serve() before any fork: the bounds launch.py sets


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def _prctl(option, arg, what):
    _check(LIBC.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)), what)


def _preload():
    import numpy  # noqa: F401
    import torch

    # meta tensors run torch's Python decompositions, whose first call imports torch._dynamo and sympy
    # (about a CPU-second): paid here once instead of in every kernel
    torch.zeros(2, 2, device="meta").tril()
    import torch._dynamo  # noqa: F401

    # debugger: the kernel's init resolves ipykernel's debugger class, whose module imports debugpy (about
    # 40 ms of each kernel's start), paid here once; it starts no thread and maps nothing shared (_unshareable)
    from ipykernel import debugger, kernelapp  # noqa: F401


def _unshareable():
    """Why this process must not be forked into kernels, or ''."""
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        return "its imports left %d threads running (set OMP_NUM_THREADS=1)" % threads
    with open("/proc/self/maps") as maps:
        for line in maps:
            perms = line.split()[1]
            if perms[1] == "w" and perms[3] == "s":
                return "its imports made a shared writable mapping (%s)" % line.strip()[:120]
    return ""


# ---- the child: read the request, confine, become the kernel -----------------------------------------

def _read_request(conn):
    data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
    (size,) = struct.unpack("!I", data[:4])
    data = data[4:]
    while len(data) < size:
        chunk = conn.recv(min(MAX_REQUEST, size - len(data)))
        if not chunk:
            raise OSError("the request was cut short")
        data += chunk
    return json.loads(data), fds


def _reply(conn, message):
    data = json.dumps(message).encode()
    conn.sendall(struct.pack("!I", len(data)) + data)


def _enter_namespaces(pid):
    """Join the namespaces bubblewrap made for this start (its sandbox's first process is ``pid``)."""
    inner = os.open("/proc/%d/ns/user" % pid, os.O_RDONLY)
    import fcntl

    outer = fcntl.ioctl(inner, NS_GET_PARENT)
    others = [(name, os.open("/proc/%d/ns/%s" % (pid, name), os.O_RDONLY)) for name in NAMESPACES]
    _check(LIBC.setns(outer, 0), "joining the sandbox's user namespace")
    for name, fd in others:
        _check(LIBC.setns(fd, 0), "joining the sandbox's %s namespace" % name)
        os.close(fd)
    _check(LIBC.setns(inner, 0), "joining the sandbox's inner user namespace")
    os.close(inner)
    os.close(outer)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities():
    """What bubblewrap leaves its payload: no capabilities at all (none in any set), and no new privileges."""
    _prctl(PR_SET_NO_NEW_PRIVS, 1, "no_new_privs")
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap, "dropping a capability from the bounding set")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, "clearing ambient capabilities")
    _check(LIBC.capset(ctypes.byref(_CapHeader(CAPABILITY_VERSION_3, 0)), (_CapData * 2)()), "capset")


def _capabilities():
    with open("/proc/self/status") as f:
        return {k: int(v, 16) for k, v in (line.split(":") for line in f if line.startswith("Cap"))}


def _confine(request):
    """launch.py's bounds (launch_bounds.py, the same list), for a kernel that is not exec'd."""
    BOUNDS.apply(request)
    if request.get("uid") is not None:
        os.setgroups([])  # in the init user namespace: a sandbox's denies setgroups


def _become(request):
    """The last steps, in the kernel's own process: its uid, no capabilities, its folder and environment."""
    uid, gid = request.get("uid"), request.get("gid")
    if uid is not None:
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    if request.get("namespaces"):
        _drop_capabilities()
    caps = _capabilities()
    if caps["CapEff"] or caps["CapPrm"] or (request.get("namespaces") and (caps["CapBnd"] or caps["CapInh"] or caps["CapAmb"])):
        raise OSError("capabilities were left after the drop")
    if uid is not None and (os.getuid() != uid or os.geteuid() != uid):
        raise OSError("could not drop to the kernel's uid")
    _prctl(PR_SET_DUMPABLE, 1, "dumpable")  # as after an exec: a kernel's own /proc stays its own
    os.chdir(request["workdir"])
    os.environ.clear()
    os.environ.update(request["env"])
    _fresh_process_state()


def _fresh_process_state():
    """What a fresh process would have that a copy of the image does not: its own seeds, default signals."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy
    import torch

    # a fresh process draws its own seeds: so does each copy of the image (random reseeds itself after fork)
    numpy.random.seed()
    torch.seed()


def _run_main(source, argv):
    """Run ``source`` as the program `python -c` would run: a __main__ of its own, ``argv`` as sys.argv."""
    sys.argv = argv
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    exec(compile(source, "<string>", "exec"), main.__dict__)


def _run_helper(conn, request, fds):
    """A trusted helper of a grading (the mutants' runner: the assignment's code on the grader's inputs), as
    the grader's own user, like the process it replaces: `python -I RUNNER` with pipes for its standard
    streams. Never returns."""
    if len(fds) != 3:
        raise OSError("the request did not carry the helper's three streams")
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    keep = conn.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, MAX_FDS)
    _reply(conn, {"pid": os.getpid()})
    conn.close()
    os.chdir(request["cwd"])
    sys.path[:] = [p for p in sys.path if p]  # as with -I: not the current folder
    _fresh_process_state()
    _run_main(request["source"], [request["argv0"]])
    raise SystemExit(0)


def _child(conn, listener):
    """Never returns: becomes the kernel, or exits."""
    code = 1
    try:
        listener.close()
        request, fds = _read_request(conn)
        if request.get("kind") == "runner":
            _run_helper(conn, request, fds)
        if request.get("kind") != "kernel" or len(fds) != 2:
            raise OSError("the request did not carry the kernel's output")
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        keep = conn.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, MAX_FDS)
        _confine(request)
        if request.get("namespaces"):
            _enter_namespaces(request["namespaces"])
            said, say = os.pipe()
            kernel = os.fork()  # only a child enters the sandbox's PID namespace
            if kernel:
                os.close(say)
                became = os.read(said, 1) == b"1"  # the kernel is its uid, with no capabilities
                _reply(conn, {"pid": kernel} if became else {"error": "the kernel could not be confined"})
                os._exit(0)
            os.close(said)
            _become(request)
            os.write(say, b"1")
            os.close(say)
        else:
            _become(request)
            _reply(conn, {"pid": os.getpid()})
        conn.close()
        _run_main(request["boot"], ["-c", *request["kernel_args"]])
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException as err:  # noqa: BLE001 - reported in the kernel's log; the launcher sees the exit
        try:
            _reply(conn, {"error": "%s: %s" % (type(err).__name__, err)})
        except Exception:  # noqa: BLE001
            pass
        print("kernel image: %s: %s" % (type(err).__name__, err), file=sys.stderr)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# ---- the image ------------------------------------------------------------------------------------------

def _load_bounds(path):
    spec = importlib.util.spec_from_file_location("launch_bounds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def serve(listener_fd, supervisor, bounds):
    global BOUNDS
    listener = socket.socket(fileno=listener_fd)  # bound and listening: made by the grader, in its own folder
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, "parent death signal")
    if os.getppid() != supervisor:  # it died before the signal was set: this process was handed on
        return
    _prctl(PR_SET_CHILD_SUBREAPER, 1, "subreaper")  # a kernel's orphans come back here, not to the supervisor
    # ... and every child is reaped by the system as it exits: no zombie of a kernel's uid waits on this loop
    # while its grading ends that uid's processes (each kernel sets SIGCHLD back to the default)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    _prctl(PR_SET_DUMPABLE, 0, "undumpable")
    BOUNDS = _load_bounds(bounds)
    _preload()
    # what the imports made is never collected here: a kernel's collections then skip it instead of writing
    # into every page of it (the child's copy of each page costs a fault: gc.freeze's purpose)
    gc.freeze()
    why = _unshareable()
    sys.stdout.write(json.dumps({"ready": not why, "why": why}) + "\n")
    sys.stdout.flush()
    if why:
        return
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            return  # the supervisor is gone or done
        if listener not in readable:
            continue
        conn, _ = listener.accept()
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid() or _unshareable():
            conn.close()
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            _child(conn, listener)
        conn.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
