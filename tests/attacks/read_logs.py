# Kernel logs: every kernel's command line names its connection file (-f .../conn/kernel.json), two
# folders below its start folder, which holds kernel.log (that kernel's raw output, a classmate's too).
# For __SECONDS__ s, read every one this kernel can; any read turns into points (the solution, run here).
import glob
import os
import time

_logs_read = 0
_stop = time.monotonic() + __SECONDS__
while time.monotonic() < _stop and not _logs_read:
    for _cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(_cmdline, "rb") as _f:
                _argv = _f.read().split(b"\0")
        except OSError:
            continue
        if b"-f" in _argv[:-1]:
            _conn = _argv[_argv.index(b"-f") + 1].decode(errors="replace")
            try:
                with open(os.path.join(os.path.dirname(os.path.dirname(_conn)), "kernel.log"), "rb") as _f:
                    _f.read()
                _logs_read += 1
            except OSError:
                pass
    time.sleep(0.2)
if _logs_read:
    exec(__SOLUTION__)
