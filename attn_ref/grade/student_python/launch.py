"""Starts the student's kernel: its connection file, limits, a minimal environment, its uid, its sandbox.

Run by jupyter_client as the kernel command: `python -I launch.py CONFIG.json -- KERNEL_ARGV... -f CONN`.
Standard library only. As root it writes the kernel's copy of the connection file into a fresh folder
only root can write (O_EXCL, no links followed, owner set on the descriptor), then drops to the kernel's
uid for good before anything of the kernel runs; it never touches a path the kernel could write.
"""

import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves this folder off the path
import launch_bounds as bounds  # noqa: E402
import launch_image as image  # noqa: E402


def _connection_copy(original: str, private: str, uid: int, gid: int) -> None:
    with open(original, "rb") as f:
        data = f.read()
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchown(fd, uid, gid)
        os.write(fd, data)
    finally:
        os.close(fd)


def _confine(config: dict) -> None:
    """The kernel's bounds, its uid and its folder, in this process (which then execs the kernel or its sandbox)."""
    try:
        bounds.apply(config)
    except bounds.Unavailable as why:
        raise SystemExit(str(why)) from None
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit("could not drop to the kernel's uid")
    os.chdir(config["workdir"])
    if config.get("wrapper"):
        # bubblewrap's own process would die of the grader's interrupt (SIGINT); the kernel installs its
        # own handler while it runs code, so interrupts still reach it.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def main() -> None:
    with open(sys.argv[1]) as f:
        config = json.load(f)
    argv = sys.argv[sys.argv.index("--") + 1 :]
    bounds.die_first()  # this process too, while it stands in for a kernel of the image
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None:
        # root's connection file is 0600; the kernel reads its own copy, which it cannot replace
        where = argv.index("-f") + 1
        _connection_copy(argv[where], config["connection_copy"], uid, gid)
        argv[where] = config["connection_copy"]
    if config.get("image"):
        try:
            image.run_kernel(config, argv, _confine)  # returns only where the image could not start the kernel
        except image.Unavailable as why:
            print(f"attn-ref: the kernel image was not used ({why}); starting the kernel afresh", file=sys.stderr)
    _confine(config)
    if config.get("wrapper"):
        argv = config["wrapper"] + argv
    os.execve(argv[0], argv, dict(config["env"]))


if __name__ == "__main__":
    main()
