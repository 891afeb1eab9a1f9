"""``swiftnb coaster-service``: a coaster service that runs on its own, for
``coaster-persistent`` sites (Swift's ``coaster-service`` command).

    swiftnb coaster-service [-p PORT] [-localport PORT] [-host ADDRESS] [-workerhost NAME]
                            [-passive | -jobmanager local:local] [-option KEY=VALUE ...]
                            [-secretfile PATH] [-portfile PATH] [-log FILE] [-verbose]

``-p`` is the port clients connect to (``execution.URL``), ``-localport`` the workers'
(default: the same port serves both).  Passive by default: no blocks, workers started by
hand with the printed command; ``-jobmanager local:local`` makes it start blocks of its
own, planned from ``-option`` (the ``execution.options`` of a coaster site, e.g.
``-option tasksPerNode=4``).  Clients and workers authenticate with the secret the
service writes to ``-secretfile`` (default ``~/.swiftnb/coasters/service-PORT.secret``,
mode 0600): Swift's ``-nosec`` is refused.  It prints its URL, the workers' address, the
secret file and (passive) the worker command on stdout, runs until SIGTERM or SIGINT,
then stops its blocks and removes the secret file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import Sequence

from swiftnb.coasters.blocks import BlockProvider, LocalBlockProvider, block_provider_for
from swiftnb.coasters.gateway import ClientGateway
from swiftnb.coasters.secretfile import default_secret_path
from swiftnb.coasters.service import CoasterService, CoasterStartError
from swiftnb.coasters.settings import CoasterConfigError, CoasterSettings
from swiftnb.events import Event, EventBus

__all__ = ["main"]

#: what -verbose shows on stderr (WARNING is always shown)
_VERBOSE = frozenset({"PLANNER", "BLOCK_REQUESTED", "BLOCK_ACTIVE", "BLOCK_SHUTDOWN",
                      "BLOCK_DONE", "BLOCK_FAILED", "WORKER_ACTIVE", "WORKER_LOST"})


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="swiftnb coaster-service",
        description="A coaster service for coaster-persistent sites (execution.URL).")
    p.add_argument("-p", "-port", dest="port", type=int, default=0,
                   help="the clients' port (default: any free one, printed)")
    p.add_argument("-localport", type=int, default=None,
                   help="the workers' port (default: the clients' port serves both)")
    p.add_argument("-host", default="127.0.0.1",
                   help="the address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("-workerhost", default=None,
                   help="the name workers connect to (internalHostName; default -host, or "
                   "this machine's name when -host is 0.0.0.0)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("-passive", action="store_true",
                      help="no blocks: workers are started by hand (the default)")
    mode.add_argument("-jobmanager", default=None,
                      help="start blocks of workers through this jobManager (local:local)")
    p.add_argument("-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a coaster option (execution.options), e.g. tasksPerNode=4")
    p.add_argument("-secretfile", default=None,
                   help="where to write the secret (default ~/.swiftnb/coasters/service-PORT.secret)")
    p.add_argument("-portfile", default=None, help="write the clients' port to this file")
    p.add_argument("-log", default=None, help="write the service's events to this log file")
    p.add_argument("-verbose", "-v", action="store_true",
                   help="show the planner's and the workers' events on stderr")
    p.add_argument("-nosec", action="store_true", help=argparse.SUPPRESS)
    return p


def _options(pairs: Sequence[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CoasterConfigError(f"-option {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.nosec:
        print("swiftnb coaster-service: -nosec is not supported: clients and workers always "
              "authenticate with the secret file the service writes (-secretfile)",
              file=sys.stderr)
        return 1
    try:
        options = _options(args.option)
        # listening on every address: workers are told this machine's name
        workerhost = args.workerhost or (socket.getfqdn() if args.host in ("0.0.0.0", "::")
                                         else None)
        log_level = str(options.pop("workerLoggingLevel", "NONE")).upper()
        log_dir = options.pop("workerLoggingDirectory", None)
        settings = CoasterSettings.from_options({
            **options,
            "workerManager": "block" if args.jobmanager else "passive",
            "servicePort": args.localport if args.localport is not None else args.port,
            "listenAddress": args.host,
            **({"internalHostName": workerhost} if workerhost else {}),
        }, prefix="coaster-service -option")
        provider: BlockProvider
        if args.jobmanager:
            logs = None if log_level == "NONE" else str(log_dir or "~/.globus/coasters")
            provider = block_provider_for(args.jobmanager, log_dir=logs, log_level=log_level)
        else:
            provider = LocalBlockProvider()  # never asked for a block
    except CoasterConfigError as exc:
        print(f"swiftnb coaster-service: {exc}", file=sys.stderr)
        return 1
    return asyncio.run(_serve(args, settings, provider))


async def _serve(args: argparse.Namespace, settings: CoasterSettings,
                 provider: BlockProvider) -> int:
    bus = EventBus()
    verbose = bool(args.verbose)

    def show(event: Event) -> None:
        if event.kind == "WARNING":
            print(f"Warning: {event.text}", file=sys.stderr, flush=True)
        elif verbose and event.kind in _VERBOSE:
            from swiftnb.logs.writer import format_event

            sys.stderr.write(format_event(event))
            sys.stderr.flush()

    bus.subscribe(show)
    detach = None
    if args.log:
        from swiftnb.logs.writer import LogWriter

        detach = LogWriter(args.log).attach(bus)
    service = CoasterService(settings, provider, bus=bus, site="coaster-service")
    service.client_handler = ClientGateway(service).serve
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    try:
        await service.start()
        port = service.port
        if args.localport is not None and args.localport != args.port:
            port = await service.listen(args.host, args.port, settings.port_range)
        secret_file = service.write_secret_file(args.secretfile or default_secret_path(port))
    except (CoasterStartError, OSError) as exc:
        print(f"swiftnb coaster-service: {exc}", file=sys.stderr)
        await service.shutdown()
        return 1
    host = args.host if args.host not in ("0.0.0.0", "::", "") else service.host
    print(f"Coaster service URL: http://{_bracketed(host)}:{port}")
    print(f"Workers connect to: {_bracketed(service.host)}:{service.port}")
    print(f"Secret file: {secret_file}")
    if settings.passive:
        print(f"Start a worker with: {service.worker_command()}")
    sys.stdout.flush()
    try:
        if args.portfile:
            with open(args.portfile, "w") as fh:
                fh.write(f"{port}\n")
    except OSError as exc:
        print(f"swiftnb coaster-service: cannot write the port file {args.portfile}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        await service.shutdown()  # (removes the secret file)
        return 1
    try:
        await stop.wait()
    finally:
        await service.shutdown()
        if detach is not None:
            with contextlib.suppress(Exception):
                detach()
    return 0


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host
