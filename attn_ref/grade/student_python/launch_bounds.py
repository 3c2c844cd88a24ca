"""A kernel's bounds, set in its own process before anything of the kernel runs: one list, applied by
launch.py (a kernel started afresh) and by the kernel image's child (image_server.py, a kernel forked), so
that the two ways to a kernel cannot drift apart. Standard library only (and libseccomp, through ctypes).

In order: an OOM score that makes the kernel die first, its cgroup (joined while still root), a lower CPU
priority, rlimits, umask 077 and, where the kernel has no network namespace, the network ban. Its uid
and namespaces come after, in each caller (they differ: exec versus fork).

The network ban. Without namespaces every kernel shares the loopback with everything else on the machine: a TA's own
Jupyter kernels (TCP, and any process can subscribe to a kernel's IOPub and read the code it runs), a
notebook server, databases. The kernel's own channels are Unix sockets (kernel.py), so it needs no other
kind: a seccomp filter, made with libseccomp (the library systemd, Docker and apt use), fails every
`socket()` of another address family with EACCES (but netlink's routing protocol, which talks only to the
OS), and io_uring, which can make sockets without that call. It is inherited by everything the kernel
starts and cannot be lifted (it also sets no_new_privs: no setuid program gains anything).

Keyrings. The kernel's uid has a user keyring in the OS kernel, which outlives the kernel's processes, and
without namespaces a kernel could leave a key there for the next kernel drawn that uid (cleanup.py draws
none that has keys), or use the session keyring its launcher inherited from the grader. So the kernel
joins a new, empty session keyring of its own first, and the same filter fails add_key, keyctl and
request_key with ENOSYS (as on a system without keyrings): a kernel can make no key at all.

`python -I launch_bounds.py` is the grader's probe: it exits 0 where the network ban works here.
"""

import ctypes
import errno
import os
import resource
import socket
import sys

ALLOWED_FAMILIES = (socket.AF_UNIX, socket.AF_NETLINK)
FAMILIES = 64  # Linux has 46 address families; a family above them fails in the kernel anyway
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_NE, SCMP_CMP_MASKED_EQ = 1, 7
LOW_32_BITS = 0xFFFFFFFF  # socket()'s family is an int: the kernel ignores the argument's upper half


def _scmp_act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):  # struct scmp_arg_cmp
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


class Unavailable(Exception):
    """A bound could not be set (a cgroup not joined, no libseccomp, seccomp refused): no kernel may start."""


def die_first() -> None:
    """Under memory pressure this process (a kernel, or its launcher) dies first, never the grader; inherited
    by every process it starts, and written as root it is also their floor: the kernel cannot lower it."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def apply(config: dict) -> None:
    """Every bound of ``config`` (launch.json's, or the image request's), on this process."""
    die_first()
    for procs in config.get("cgroups") or []:
        # the kernel's memory, CPU and process bounds over all its processes (resources.py): joined while
        # still root; a kernel that cannot join is not started, as it would run unbounded
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError as err:
            raise Unavailable(f"could not join the kernel's cgroup {procs}: {err}") from None
    os.nice(config.get("nice") or 0)  # below the grader's priority, for everything the kernel starts
    for name, value in config["limits"].items():
        limit = getattr(resource, name, None)
        if limit is None:  # not on this platform (RLIMIT_MSGQUEUE is Linux's): nothing there to bound
            continue
        soft, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))
    os.umask(0o077)
    own_session_keyring()
    if config.get("deny_network"):  # no network namespace (the grader's probe showed the ban works here)
        try:
            deny_network()
        except Unavailable as why:
            raise Unavailable(f"could not deny the kernel the network: {why}") from None


KEYCTL_JOIN_SESSION_KEYRING = 1
KEYRING_CALLS = (b"add_key", b"keyctl", b"request_key")


def own_session_keyring() -> None:
    """This process (and what it starts) joins a new anonymous session keyring: nothing of the grader's
    session keyring, which a process it starts would otherwise possess, is within the kernel's reach."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)  # SYS_keyctl; elsewhere the filter alone
    if number is not None:
        libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)  # fails where keyrings are off: nothing to leave


def _library():
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)  # its soname since 2012
    except OSError:
        from ctypes.util import find_library  # a search (it may run ldconfig): only where the soname is not found

        name = find_library("seccomp")
        try:
            lib = ctypes.CDLL(name, use_errno=True) if name else None
        except OSError:
            lib = None
        if lib is None:
            raise Unavailable("libseccomp is not installed") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def deny_network() -> None:
    """Install the filter on this process (and everything it starts from now on): no socket but Unix sockets
    and netlink's routing, no io_uring, no keyring call; Unavailable if it cannot."""
    lib = _library()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise Unavailable("libseccomp could not make a filter")
    try:
        denied = _scmp_act_errno(errno.EACCES)
        socket_call = lib.seccomp_syscall_resolve_name(b"socket")
        for family in range(FAMILIES):
            if family in ALLOWED_FAMILIES:
                continue
            rule = _ArgCmp(0, SCMP_CMP_MASKED_EQ, LOW_32_BITS, family)
            if lib.seccomp_rule_add_array(ctx, denied, socket_call, 1, ctypes.byref(rule)) != 0:
                raise Unavailable(f"libseccomp refused the rule for address family {family}")
        # netlink stays, for the routing family alone: libzmq reads the machine's interfaces through it
        # (getifaddrs) and aborts without them; it reaches the OS, never another program
        routing_only = (_ArgCmp(0, SCMP_CMP_MASKED_EQ, LOW_32_BITS, socket.AF_NETLINK),
                        _ArgCmp(2, SCMP_CMP_NE, 0, 0))  # the protocol: a non-zero upper half is denied too
        if lib.seccomp_rule_add_array(ctx, denied, socket_call, 2, (_ArgCmp * 2)(*routing_only)) != 0:
            raise Unavailable("libseccomp refused the rule for netlink")
        denials = [(name, errno.EPERM) for name in (b"io_uring_setup", b"io_uring_enter", b"io_uring_register")]
        for name, code in denials + [(name, errno.ENOSYS) for name in KEYRING_CALLS]:
            number = lib.seccomp_syscall_resolve_name(name)
            if number >= 0 and lib.seccomp_rule_add_array(ctx, _scmp_act_errno(code), number, 0, None) != 0:
                raise Unavailable(f"libseccomp refused the rule for {name.decode()}")
        result = lib.seccomp_load(ctx)
        if result != 0:
            raise Unavailable(f"the kernel refused the filter ({errno.errorcode.get(-result, result)})")
    finally:
        lib.seccomp_release(ctx)


def _probe() -> int:
    try:
        deny_network()
    except Unavailable as why:
        print(why, file=sys.stderr)
        return 1
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()  # the kernel's channels still work
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.socket(family, socket.SOCK_STREAM).close()
        except PermissionError:
            continue
        print(f"address family {family} was not denied", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_probe())
