"""``swiftnb history`` and ``swiftnb explain``: the run store from the command line.

Both only read: a directory with no store is said in one line (exit 1), never made.
Options take Swift's single dash (``-store DIR``, ``-why``) and the double one."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from swiftnb.errors import SwiftnbError
from swiftnb.store.db import DEFAULT_DIR, RunStore
from swiftnb.store.errors import StoreError
from swiftnb.store.explain import explain
from swiftnb.store.records import RunRecord

__all__ = ["history_main", "explain_main"]

EXIT_OK, EXIT_FAILED = 0, 1


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are an exit code, not SystemExit."""

    def error(self, message: str) -> None:  # type: ignore[override]  # argparse's error is NoReturn
        raise _StoreUsageError(f"{self.prog}: {message}")


class _StoreUsageError(SwiftnbError):
    pass


def _store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-store", "--store", default=DEFAULT_DIR, metavar="DIR",
                        help=f"the run store directory (default {DEFAULT_DIR})")


def history_main(argv: Sequence[str], out: TextIO | None = None,
                 err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    parser = _Parser(prog="swiftnb history", description="the runs of a run store, newest last")
    _store_option(parser)
    parser.add_argument("-format", "--format", choices=("table", "json"), default="table")
    try:
        options = parser.parse_args(list(argv))
        with RunStore.open(options.store, create=False) as store:
            runs = store.run_records()
    except (_StoreUsageError, StoreError) as exc:
        print(f"swiftnb: {exc}", file=err)
        return EXIT_FAILED
    if options.format == "json":
        json.dump([_run_json(r) for r in runs], out, indent=1)
        out.write("\n")
    else:
        out.write(_table(runs))
    return EXIT_OK


def explain_main(argv: Sequence[str], out: TextIO | None = None,
                 err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    parser = _Parser(prog="swiftnb explain",
                     description="the calls that produced a file, and with -why what changed")
    parser.add_argument("file")
    parser.add_argument("-why", "--why", action="store_true",
                        help="say why each call of the latest run ran or was reused")
    _store_option(parser)
    try:
        options = parser.parse_args(list(argv))
        with RunStore.open(options.store, create=False) as store:
            explanation = explain(store, options.file, why=options.why)
    except (_StoreUsageError, StoreError) as exc:
        print(f"swiftnb: {exc}", file=err)
        return EXIT_FAILED
    if not explanation.found:
        print(f"swiftnb: {explanation}", file=err)
        return EXIT_FAILED
    print(explanation, file=out)
    return EXIT_OK


def _run_json(run: RunRecord) -> dict[str, object]:
    return {"run_id": run.run_id, "script": run.script, "args": run.args,
            "started": run.started, "ended": run.ended, "status": run.status,
            "counts": run.counts, "base_dir": run.base_dir,
            "config_digest": run.config_digest}


def _table(runs: Sequence[RunRecord]) -> str:
    header = ("RUN", "SCRIPT", "STARTED", "DURATION", "STATUS", "RAN", "CACHED", "FAILED")
    rows: list[tuple[str, ...]] = [header]
    for run in runs:
        duration = "-" if run.ended is None else f"{run.ended - run.started:.1f}s"
        rows.append((run.run_id, os.path.basename(run.script) or run.script,
                     time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.started)),
                     duration, run.status,
                     *(str(run.counts.get(k, 0)) for k in ("ran", "cached", "failed"))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n"
                   for row in rows)
