#!/usr/bin/env python3
"""The coaster relay: runs on a cluster's login node and carries workers' connections home.

Why it exists: an ``ssh-cl:`` site is a cluster whose compute nodes cannot reach the
notebook's machine (no route, a firewall, a private network); only the login node is
reachable, and only over SSH.  So the coaster service stays on this machine, the SSH
connection to the login node carries a remote port forward back to it
(``Shell.reverse_tunnel``: sshd listens on the login node's loopback), and this relay,
started on the login node through the same connection, listens where the compute nodes
can reach (the login node's own address, or ``internalHostName``) and pipes each worker's
connection into that forward.  Nothing connects to this machine directly; the workers'
traffic is inside the SSH connection, authenticated by it and by the run's secret.

It is a plain byte pipe: workers and service speak their own protocol through it, and the
service authenticates each worker.  It ends when its standard input closes (the SSH channel
that started it is gone), taking its connections with it.

Stdlib only (Python 3.8+): the login node has no swiftnb.

    python3 relay.py --to 127.0.0.1:PORT [--listen HOST] [--ports LOW,HIGH]

prints one JSON line, ``{"op": "listening", "host": H, "port": P}``, once it listens.
"""

import argparse
import asyncio
import json
import os
import socket
import sys

#: connections piped at once at most; more are closed at once (a worker per node fits)
MAX_CONNECTIONS = 4096
_CHUNK = 1 << 16


def default_host() -> str:
    """The login node's address as its compute nodes know it: its host name's address."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def parse_range(text: str) -> "list[int]":
    """``"50000,51000"`` -> the ports to try in order; ``"0"`` -> any free port."""
    if not text or text.strip() == "0":
        return [0]
    low, _, high = text.replace(" ", "").partition(",")
    first, last = int(low), int(high or low)
    if not 0 < first <= last <= 65535:
        raise ValueError(f"bad port range {text!r}")
    return list(range(first, last + 1))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await reader.read(_CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


class Relay:
    def __init__(self, to_host: str, to_port: int) -> None:
        self.to_host, self.to_port = to_host, to_port
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.connections >= MAX_CONNECTIONS:
            writer.close()
            return
        self.connections += 1
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(self.to_host, self.to_port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self.connections -= 1


async def _stdin_closed() -> None:
    """Wait until our standard input ends (the SSH channel that started us closed)."""
    loop = asyncio.get_running_loop()
    while True:
        data = await loop.run_in_executor(None, os.read, sys.stdin.fileno(), 4096)
        if not data:
            return


async def main_async(args: argparse.Namespace) -> int:
    to_host, _, to_port = args.to.rpartition(":")
    relay = Relay(to_host or "127.0.0.1", int(to_port))
    host = args.listen or default_host()
    server = None
    last_error = None
    for port in parse_range(args.ports):
        try:
            server = await asyncio.start_server(relay.serve, host, port)
            break
        except OSError as exc:
            last_error = exc
    if server is None:
        print(json.dumps({"op": "error", "message": f"cannot listen on {host} in ports "
                          f"{args.ports}: {last_error}"}), flush=True)
        return 2
    port = server.sockets[0].getsockname()[1]
    print(json.dumps({"op": "listening", "host": host, "port": port}), flush=True)
    try:
        await _stdin_closed()
    finally:
        server.close()
    return 0


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--to", required=True, help="HOST:PORT of the tunnel's end")
    parser.add_argument("--listen", default="", help="address to listen on (default: this "
                        "host's name's address)")
    parser.add_argument("--ports", default="0", help="LOW,HIGH port range, or 0 for any")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(main_async(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
