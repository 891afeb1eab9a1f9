"""``swiftnb monitor RUN.log``: the web monitor of a run another process is writing.

Follows the log (ours or Swift/K 0.96's, plain or compressed) with
:func:`swiftnb.logs.tail.tail_to_bus` and serves the same page as ``swiftnb run -ui http``,
without steering (the run is not ours to steer).  When the log says the run ended, the
page stays up with the final state until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence

from swiftnb.errors import SwiftnbError

__all__ = ["monitor_main"]

EXIT_OK, EXIT_USAGE = 0, 1


class _MonitorUsageError(SwiftnbError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are an exit code, not SystemExit."""

    def error(self, message: str) -> None:  # type: ignore[override]  # argparse's is NoReturn
        raise _MonitorUsageError(f"{self.prog}: {message}")


def _parser() -> _Parser:
    parser = _Parser(prog="swiftnb monitor",
                     description="serve a run's panels from its log, followed as it grows")
    parser.add_argument("log", help="the run's log (ours or Swift/K 0.96's)")
    parser.add_argument("-port", "--port", type=int, default=0,
                        help="the port to listen on (default: a free one)")
    parser.add_argument("-address", "--address", default=None,
                        help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("-poll", "--poll", type=float, default=0.5,
                        help="seconds between reads of the log")
    return parser


async def _serve(path: str, port: int, address: str | None, poll: float) -> int:
    from swiftnb.events import EventBus
    from swiftnb.logs.tail import tail_to_bus
    from swiftnb.monitor.http import DEFAULT_ADDRESS
    from swiftnb.monitor.state import RunState
    from swiftnb.monitor.web import WebMonitor

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    bus = EventBus()
    state = RunState()
    state.follow(bus)
    monitor = WebMonitor(state, f"swiftnb monitor {os.path.basename(path)}",
                         address=address or DEFAULT_ADDRESS, port=port)
    monitor.announce(sys.stdout)
    follow = loop.create_task(tail_to_bus(path, bus, interval=poll))
    waiting = loop.create_task(stop.wait())
    try:
        await asyncio.wait({follow, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if follow.done():
            count = follow.result()
            print(f"swiftnb monitor: {path}: {count} events, the run has ended; serving "
                  "until interrupted", flush=True)
            await waiting
    finally:
        follow.cancel()
        waiting.cancel()
        monitor.stop()
    return EXIT_OK


def monitor_main(argv: Sequence[str]) -> int:
    try:
        args = _parser().parse_args(list(argv))
    except _MonitorUsageError as exc:
        print(f"swiftnb: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not os.path.isfile(args.log):
        print(f"swiftnb monitor: {args.log}: no such file", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_serve(args.log, args.port, args.address, args.poll))
