# The grader's output folder: a classmate's work (the export unpacked there), every name and score. For
# __SECONDS__ s, look for the folder's name in every process's command line and environment, and read
# whatever of it can be read, knowing its name (__OUT__) too. Leave a key for the next kernel of this uid.
# Any of it turns into points: the solution, run here; what was found is the message of a later error.
import ctypes
import glob
import os
import time

_out = "__OUT__"
_named_in, _read = [], []
_stop = time.monotonic() + __SECONDS__
while time.monotonic() < _stop and not (_named_in or _read):
    for _proc in glob.glob("/proc/[0-9]*"):
        for _what in ("cmdline", "environ"):
            try:
                with open(f"{_proc}/{_what}", "rb") as _f:
                    if _out.encode() in _f.read():
                        _named_in.append(f"{_proc}/{_what}")
            except OSError:
                pass
    for _root, _dirs, _files in os.walk(_out):
        for _name in _files:
            try:
                with open(os.path.join(_root, _name), "rb") as _f:
                    _f.read(100)
                _read.append(os.path.join(_root, _name))
            except OSError:
                pass
    for _name in ("grades.csv", "results", ".export", "locks/gradebook.lock", "report.html"):
        try:
            os.listdir(os.path.join(_out, _name)) if "." not in _name[1:] else open(os.path.join(_out, _name)).read(1)
            _read.append(_name)
        except OSError:
            pass
    time.sleep(0.2)
_libc = ctypes.CDLL(None, use_errno=True)
_add_key = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine)
_key = _libc.syscall(_add_key, b"user", b"left-for-the-next-kernel", b"x", 1, ctypes.c_int(-4)) if _add_key else -1
_found = {"named in": _named_in[:3], "read": _read[:3], "key": _key}
if _named_in or _read or _key >= 0:
    exec(__SOLUTION__)
if _named_in or _read or _key >= 0:
    raise RuntimeError(f"LEAKED {_found}")
