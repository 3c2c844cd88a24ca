# A batch whose kernels start from one kernel image: reach the image (its process, its socket, its
# privileges) and poison what the next kernels would inherit from it. Each reach is turned into points (a
# correct softmax, task c1), so a score above 0 says what got through; classmates graded after this kernel,
# from the same image, must score as they do alone.
import glob
import os
import socket

import numpy as np
import torch

reached = []
with open("/proc/self/status") as f:
    caps = {k: int(v, 16) for k, v in (line.split(":") for line in f if line.startswith("Cap"))}
if os.getuid() == 0 or os.geteuid() == 0 or caps["CapEff"] or caps["CapPrm"]:
    reached.append("privileges")
for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        with open(cmdline, "rb") as f:
            if b"The kernel image" not in f.read():
                continue
        pid = int(cmdline.split("/")[2])
        if os.stat("/proc/%d" % pid).st_uid == os.getuid():
            continue  # itself, and its own processes: a kernel is a copy of the image
        os.kill(pid, 0)  # may signal it: the same uid, or privileges
        reached.append("the image's process")
    except (OSError, ValueError):
        pass
try:
    with open("/proc/net/unix") as f:
        paths = [line.split()[-1] for line in f.read().splitlines()[1:] if line.split()[-1].startswith("/")]
except OSError:
    paths = []
for path in paths:
    if "image" not in path:
        continue
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(path)
            s.sendall(b"\x00\x00\x00\x02{}")
            if s.recv(1):
                reached.append("the image's socket")
    except OSError:
        pass
for fd in os.listdir("/proc/self/fd"):
    try:
        if "image" in os.readlink("/proc/self/fd/" + fd):
            reached.append("an fd of the image")
    except OSError:
        pass
try:
    with open(torch.__file__, "a"):
        reached.append("the students' environment")
except OSError:
    pass

# what a later kernel would see if anything of this one reached the image
torch.matmul = torch.Tensor.__matmul__ = lambda a, b: torch.zeros(())
torch.softmax = torch.Tensor.softmax = lambda *args, **kwargs: torch.zeros(())
np.exp = np.matmul = lambda *args, **kwargs: np.zeros(())
os.environ["OMP_NUM_THREADS"] = "poisoned"
with open("/dev/shm/poisoned-by-a-classmate", "w") as f:
    f.write("x")

if reached:
    def softmax(x, axis=-1):
        import numpy

        shifted = x - numpy.max(x, axis=axis, keepdims=True)
        e = numpy.e ** shifted
        return e / numpy.sum(e, axis=axis, keepdims=True)
