"""The seccomp filter a kernel without a network namespace runs under (attn_ref/grade/student_python/launch_bounds.py): what it
denies, what it leaves (a kernel still starts and talks to the grader), each in a process of its own."""

import platform
import subprocess
import sys
from pathlib import Path

import pytest

from attn_ref.grade.student_python import launch_bounds

BAN = Path(launch_bounds.__file__)

UNDER_THE_BAN = f"""
import ctypes, errno, socket, sys
sys.path.insert(0, {str(BAN.parent)!r})
import launch_bounds
launch_bounds.deny_network()
libc = ctypes.CDLL(None, use_errno=True)

def raw_socket(family, kind=socket.SOCK_STREAM, protocol=0):
    fd = libc.syscall(41, ctypes.c_uint64(family), kind, ctypes.c_uint64(protocol))  # socket(2) on x86-64
    return "denied" if fd < 0 and ctypes.get_errno() == errno.EACCES else "allowed"
"""


def under_the_ban(code: str) -> str:
    done = subprocess.run([sys.executable, "-I", "-c", UNDER_THE_BAN + code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# the raw system calls below are x86-64's numbers (CI's machine); the filter itself is libseccomp's, for any
pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 system call numbers")


FAMILIES = {"AF_INET": 2, "AF_INET6": 10, "AF_PACKET": 17, "AF_TIPC": 30, "AF_BLUETOOTH": 31, "AF_ALG": 38,
            "AF_VSOCK": 40, "AF_MCTP": 45, "one Linux has yet to add": 50}


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_every_network_family_is_denied(family):
    assert under_the_ban(f"print(raw_socket({family}))") == "denied"


def test_the_grader_finds_the_ban_works_here():
    """The probe resolve() runs: where it fails, kernels without namespaces would get no ban (and a warning)."""
    done = subprocess.run([sys.executable, "-I", str(BAN)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_family_cannot_slip_past_in_the_arguments_upper_half():
    # the kernel reads the family as an int: 2 with bit 32 set is AF_INET to it
    assert under_the_ban("print(raw_socket((1 << 32) | socket.AF_INET))") == "denied"


def test_unix_sockets_and_netlinks_routing_protocol_stay():
    """The kernel's channels are Unix sockets; libzmq lists the interfaces through netlink's routing protocol."""
    out = under_the_ban("""
print(raw_socket(socket.AF_UNIX), raw_socket(socket.AF_NETLINK, socket.SOCK_RAW, 0),
      raw_socket(socket.AF_NETLINK, socket.SOCK_RAW, 15), raw_socket(socket.AF_NETLINK, socket.SOCK_RAW, (1 << 32)))
""")
    assert out == "allowed allowed denied denied"


def test_io_uring_which_makes_sockets_without_socket_is_denied():
    out = under_the_ban("""
params = ctypes.create_string_buffer(120)
print(libc.syscall(425, 8, params), errno.errorcode[ctypes.get_errno()])  # io_uring_setup
""")
    assert out == "-1 EPERM"


def test_a_process_under_the_ban_cannot_reach_a_loopback_listener_nor_lift_it():
    """Not by connecting, not from a child it starts, not by asking for more privileges (no_new_privs)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        out = under_the_ban(f"""
import os, subprocess
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5)
    print("connected")
except PermissionError:
    print("refused")
child = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"],
                       capture_output=True, text=True)
print("child refused" if "PermissionError" in child.stderr else "child connected")
print(open("/proc/self/status").read().split("NoNewPrivs:")[1].split()[0])
""")
    assert out.split("\n") == ["refused", "child refused", "1"]


def test_the_kernels_stdlib_still_resolves_names():
    """getaddrinfo needs no socket of a network family: a student's code that only names hosts still runs."""
    assert under_the_ban("print(socket.getaddrinfo('localhost', 80)[0][0].name)").startswith("AF_INET")


def test_where_the_ban_does_not_work_the_run_says_the_network_is_open(monkeypatch):
    """No libseccomp (or seccomp refused): kernels without namespaces keep the network, and the run says so."""
    from attn_ref.grade.isolation import sandbox

    monkeypatch.setattr(sandbox, "_PLANS", {})
    monkeypatch.setattr(sandbox, "_network_ban_works", lambda: False)
    plan = sandbox.resolve(namespaces="off")
    assert sandbox._NETWORK_OPEN in plan.warnings
    assert plan.describe()["kernel_network"] == "this machine's, loopback included"
    monkeypatch.setattr(sandbox, "_PLANS", {})
    monkeypatch.setattr(sandbox, "_network_ban_works", lambda: True)
    plan = sandbox.resolve(namespaces="off")
    assert sandbox._NETWORK_OPEN not in plan.warnings and plan.describe()["kernel_network"] == "Unix sockets only (seccomp)"
