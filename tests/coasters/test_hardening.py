"""The coaster service before authentication: small buffers, a short deadline for the
hello, a cap on connections waiting to say it, the large line limit only after it, and
running out of file descriptors without tracebacks.  No timing assertions: the counters
are read directly, the memory of a real service process is measured."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import select
import socket
import threading
import time

import pytest

from coaster_services import LIMIT, ServiceProcess, passive_service, start_worker, stop, until
from swiftnb.coasters import listener as listener_module
from swiftnb.coasters.listener import HELLO_LIMIT, MAX_PENDING

pytestmark = pytest.mark.timeout(180)


def _connections(port: int, n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=LIMIT)
        out.append(s)
    return out


def _closed(sock: socket.socket) -> bool:
    """Whether the service closed this connection (EOF or reset is readable now)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _flood(port: int, size: int) -> None:
    """One hello line that never ends: ``size`` bytes without a newline."""
    chunk = b"x" * (1 << 16)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=LIMIT) as s:
            sent = 0
            while sent < size:
                sent += s.send(chunk)
    except OSError:
        pass  # the service closed it: what it should do


def test_pending_connections_are_capped_and_then_closed(tmp_path):
    service, events = passive_service(tmp_path)

    async def main():
        await service.start()
        listener = service._listeners[0]
        loop = asyncio.get_running_loop()
        socks = await loop.run_in_executor(None, _connections, service.port, MAX_PENDING + 40)
        try:
            # the cap: MAX_PENDING wait for their hello, the other 40 were closed at once
            await until(lambda: listener.pending + listener.refused_busy == MAX_PENDING + 40,
                        "every connection accepted or refused")
            assert listener.refused_busy == 40 and listener.pending == MAX_PENDING
            # the deadline: nobody said hello, so every one of them is closed
            await until(lambda: all(_closed(s) for s in socks), "all idle connections closed")
            assert listener.pending == 0
        finally:
            for s in socks:
                s.close()
        # a worker still gets in
        service.write_secret_file()
        worker = await start_worker(service.worker_command())
        try:
            await until(lambda: any(e.kind == "WORKER_ACTIVE" for e in events), "worker")
        finally:
            await service.shutdown()
            await stop(worker)

    asyncio.run(main())


def test_hello_is_read_into_a_small_buffer_and_the_large_limit_comes_after(tmp_path,
                                                                           monkeypatch):
    service, events = passive_service(tmp_path)
    received: list[int] = []

    async def main():
        await service.start()
        loop = asyncio.get_running_loop()
        original = loop.sock_recv

        async def counting_recv(sock, n):
            received.append(n)
            return await original(sock, n)

        monkeypatch.setattr(loop, "sock_recv", counting_recv)
        # a hello line that never ends: closed after HELLO_LIMIT bytes, never buffered more
        await loop.run_in_executor(None, _flood, service.port, 8 << 20)
        assert received and max(received) <= HELLO_LIMIT
        # wrong secret: closed without a word
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        writer.write(json.dumps({"op": "hello", "version": 1, "secret": "guess",
                                 "block": "b", "id": "000000"}).encode() + b"\n")
        assert await asyncio.wait_for(reader.read(), LIMIT) == b""
        writer.close()
        # the right secret: welcome, and a line far over HELLO_LIMIT is fine now
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        writer.write(json.dumps({"op": "hello", "version": 1, "secret": service.secret,
                                 "block": "b", "id": "000000", "cores": 1}).encode() + b"\n")
        welcome = json.loads(await asyncio.wait_for(reader.readline(), LIMIT))
        assert welcome == {"op": "welcome", "id": "000000"}
        # a done message with inline outputs: 4 x 64 KiB base64 and more
        big = {"op": "done", "n": 12345, "result": {"ok": True, "inline": "A" * (3 << 20)}}
        writer.write(json.dumps(big).encode() + b"\n")
        writer.write(b'{"op": "active", "n": 54321}\n')
        await writer.drain()
        await asyncio.sleep(0.2)
        assert "000000" in service.blocks["b"].conns  # still connected
        writer.close()
        await until(lambda: not service.blocks["b"].conns, "the worker gone")
        await service.shutdown()

    asyncio.run(main())
    assert [e["id"] for e in events if e.kind == "WORKER_ACTIVE"] == ["000000"]


def test_a_flood_of_strangers_does_not_grow_the_services_memory(tmp_path):
    svc = ServiceProcess(["-p", "0", "-verbose", "-secretfile", str(tmp_path / "secret")],
                         tmp_path)
    workers = []
    try:
        # one worker first: the service has done its imports and allocations
        proc = _start(svc.worker_command)
        workers.append(proc)
        _until(lambda: "WORKER_ACTIVE" in svc.stderr(), "the first worker")
        before = svc.peak_kib()
        # 8 hello lines of 32 MB that never end, one after the other and 4 at once
        for _ in range(4):
            _flood(svc.port, 32 << 20)
        floods = [threading.Thread(target=_flood, args=(svc.port, 32 << 20)) for _ in range(4)]
        for t in floods:
            t.start()
        for t in floods:
            t.join(LIMIT * 2)
        # 400 strangers who say nothing
        idle = _connections(svc.port, 400)
        _until(lambda: all(_closed(s) for s in idle), "the idle connections closed")
        for s in idle:
            s.close()
        after = svc.peak_kib()
        # the service's peak grew by far less than one connection's worth of the old
        # 16 MB stream limit (before, each flood could make it buffer 16 MB)
        assert after - before < 8 * 1024, (before, after)
        # a stranger with a wrong secret gets nothing; a worker still gets in
        with socket.create_connection(("127.0.0.1", svc.port), timeout=LIMIT) as s:
            s.sendall(b'{"op":"hello","version":1,"secret":"nope","block":"b","id":"1"}\n')
            s.settimeout(LIMIT)
            assert s.recv(100) == b""
        workers.append(_start(svc.worker_command))
        _until(lambda: svc.stderr().count("WORKER_ACTIVE") == 2, "the second worker")
    finally:
        for w in workers:
            _kill(w)
        assert svc.stop() == 0
    assert "Traceback" not in svc.stderr()


def test_out_of_file_descriptors_is_one_warning_not_tracebacks(tmp_path):
    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))

    svc = ServiceProcess(["-p", "0", "-verbose", "-secretfile", str(tmp_path / "secret")],
                         tmp_path, preexec_fn=few_files)
    try:
        idle = _connections(svc.port, 80)  # more than the service may hold open
        _until(lambda: "out of file descriptors" in svc.stderr(), "the warning")
        held = svc.stderr()
        for s in idle:
            s.close()
        # the service goes on: a worker connects once descriptors are free again
        worker = _start(svc.worker_command)
        try:
            _until(lambda: "WORKER_ACTIVE" in svc.stderr(), "a worker after the exhaustion")
        finally:
            _kill(worker)
    finally:
        assert svc.stop() == 0
    err = svc.stderr()
    assert err.count("out of file descriptors") == 1, err
    assert "EMFILE: Too many open files" in held
    assert "Traceback" not in err and "socket.accept() out of system resource" not in err


# -- helpers for the service subprocess ---------------------------------------------------

def _start(command: str):
    import shlex
    import subprocess

    return subprocess.Popen(shlex.split(command), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _kill(proc) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, 9)
    proc.wait()


def _until(predicate, what: str) -> None:
    end = time.monotonic() + LIMIT
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"not reached within {LIMIT:g} s: {what}")
        time.sleep(0.05)


def test_hello_limits_are_small():
    """What an unauthenticated peer can make the service hold: a few KiB each, for a few
    seconds, a bounded number of them."""
    assert listener_module.HELLO_LIMIT <= 8192
    assert listener_module.HELLO_TIMEOUT <= 10
    assert listener_module.MAX_PENDING * listener_module.HELLO_LIMIT <= 1 << 20
