# Leftovers for a later grading, without namespaces: a SysV shared-memory segment handed to root with
# IPC_SET (its owner changes, its creator cannot), and a POSIX message queue (no folder to clean).
import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_IPC_CREAT, _IPC_SET, _IPC_STAT = 0o1000, 1, 2
_shmid = _libc.shmget(__KEY__, 1 << 20, _IPC_CREAT | 0o666)
_ds = ctypes.create_string_buffer(512)  # struct shmid_ds; its ipc_perm starts with key, uid, gid, cuid, cgid
if _shmid >= 0 and _libc.shmctl(_shmid, _IPC_STAT, _ds) == 0:
    ctypes.c_uint32.from_buffer(_ds, 4).value = 0  # the owner: root
    _libc.shmctl(_shmid, _IPC_SET, _ds)
_libc.mq_open.restype = ctypes.c_int
_mq = _libc.mq_open(b"/__QUEUE__", os.O_CREAT | os.O_RDWR, 0o666, None)
print("shm", _shmid, "mq", _mq, ctypes.get_errno())
