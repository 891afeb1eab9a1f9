"""``swiftnb timings`` and ``swiftnb plot-log``: log analysis from the command line.

Both read any Swift log (Swift/K 0.96 or swiftnb, plain, .gz or .bz2).  Damage in the
log is reported as ``swiftnb: warning: ...`` on stderr and the readable part is used;
an unreadable or missing log is one line on stderr and a non-zero exit, never a
traceback.  Exit codes follow the ``swift`` command: 0 ok, 1 usage, 2 the log cannot be
analysed, 4 the log file does not exist.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from swiftnb.errors import SwiftnbError

__all__ = ["main", "timings_main", "plot_log_main"]

EXIT_OK, EXIT_USAGE, EXIT_ERROR, EXIT_MISSING = 0, 1, 2, 4


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as an exit code instead of SystemExit."""

    def error(self, message: str) -> None:  # type: ignore[override]  # argparse's error is NoReturn
        raise _UsageError(f"{self.prog}: {message}")


class _UsageError(SwiftnbError):
    pass


def _load(path: str, err: TextIO, *, scan: bool = False):
    """LogFrame of a path, with warnings printed for people; (frame, exit code).
    ``scan``: only the tables are needed, not the event table (LogFrame.scan)."""
    from swiftnb.logs.frame import LogFrame
    from swiftnb.logs.reader import LogFormatError

    if not os.path.exists(path):
        print(f"swiftnb: log file not found: {path}", file=err)
        return None, EXIT_MISSING
    if os.path.isdir(path):  # a run directory: its log
        logs = sorted(f for f in os.listdir(path)
                      if f.endswith((".log", ".log.gz", ".log.bz2")) and not f.endswith(".rlog"))
        if len(logs) != 1:
            found = ", ".join(logs) if logs else "no *.log file"
            print(f"swiftnb: {path} is a directory; expected one log in it, found {found}",
                  file=err)
            return None, EXIT_USAGE
        path = os.path.join(path, logs[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = LogFrame.scan(path) if scan else LogFrame.read(path)
            frame.run  # noqa: B018  (compute the tables inside the guard)
        except (LogFormatError, OSError, UnicodeError) as exc:
            print(f"swiftnb: {exc}", file=err)
            return None, EXIT_ERROR
        except MemoryError:  # a backstop: the reader bounds what hostile input costs
            print(f"swiftnb: {path}: out of memory reading the log", file=err)
            return None, EXIT_ERROR
    for w in caught:
        print(f"swiftnb: warning: {w.message}", file=err)
    if not frame.run["nevents"]:
        print(f"swiftnb: {path}: the log holds no records", file=err)
        return None, EXIT_ERROR
    return frame, EXIT_OK


def _run_label(number: int, frame) -> str:
    return f"{number} ({frame.run['run_id']})" if frame.run["run_id"] else str(number)


def _select_runs(frame, wanted: str | None, path: str, err: TextIO, *,
                 one: bool = False):
    """The runs to analyse: the one ``--run`` names (its number from 1, or its run id),
    else all of them, said on stderr when the log holds several (runs appended to one
    file with the same -logfile).  ``one``: the output holds one run only, so a log of
    several needs --run.  (runs, exit code)."""
    runs = frame.runs()
    labels = ", ".join(_run_label(i, r) for i, r in enumerate(runs, 1))
    if wanted is not None:
        for i, run in enumerate(runs, 1):
            if wanted in (str(i), run.run["run_id"]):
                return [run], EXIT_OK
        print(f"swiftnb: {path}: no run {wanted!r}; the log holds {len(runs)} run(s): "
              f"{labels}", file=err)
        return None, EXIT_USAGE
    if len(runs) > 1:
        if one:
            print(f"swiftnb: {path} holds {len(runs)} runs appended to one file ({labels}); "
                  "choose one with --run N or --run RUNID", file=err)
            return None, EXIT_USAGE
        print(f"swiftnb: warning: {path} holds {len(runs)} runs appended to one file "
              f"({labels}); each is analysed on its own (--run N or --run RUNID for one)",
              file=err)
    return runs, EXIT_OK


def _arguments_and_runs(parser: _Parser, argv: Sequence[str], err: TextIO, *,
                        one: Callable[[argparse.Namespace], bool],
                        scan: Callable[[argparse.Namespace], bool] = lambda args: False,
                        ) -> tuple[argparse.Namespace, list] | int:
    """A log command's arguments and the runs of its log it analyses (``one(args)``: the
    output holds one run only, see :func:`_select_runs`; ``scan(args)``: it reads only
    the entity tables), or the exit code after saying on ``err`` why not: every log
    command reads its arguments and its log alike."""
    try:
        args = parser.parse_args(list(argv))
    except _UsageError as exc:
        print(exc, file=err)
        print(parser.format_usage().rstrip(), file=err)
        return EXIT_USAGE
    frame, code = _load(args.log, err, scan=scan(args))
    if frame is None:
        return code
    runs, code = _select_runs(frame, args.run, args.log, err, one=one(args))
    return (args, runs) if runs is not None else code


def _fmt_time(t: Any) -> str:
    import datetime as dt

    if t is None or (isinstance(t, float) and math.isnan(t)):
        return "-"
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3] + "Z"


def _table(frame, out: TextIO) -> None:
    from swiftnb.logs.frame import TIMINGS

    run = frame.run
    print(f"run {run['run_id'] or '-'}: {run['outcome'] or 'incomplete'}", file=out)
    print(f"  start  {_fmt_time(run['start'])}", file=out)
    print(f"  finish {_fmt_time(run['finish'])}", file=out)
    print(f"  jobs {run['njobs']} (succeeded {run['jobs_succeeded']}, failed "
          f"{run['jobs_failed']}), tasks {run['ntasks']} (completed "
          f"{run['tasks_completed']}, failed {run['tasks_failed']}), blocks "
          f"{run['nblocks']}, workers {run['nworkers']}, sites "
          f"{', '.join(run['hosts']) or '-'}", file=out)
    summary = frame.summary()
    if not len(summary):
        print("no timings (no jobs reached a timed state)", file=out)
        return
    print(f"\n{'timing':<7}{'entity':<8}{'count':>7}{'mean s':>12}{'min s':>12}"
          f"{'median s':>12}{'max s':>12}  what", file=out)
    for name, row in summary.iterrows():
        entity, _, _, what = TIMINGS[name]
        print(f"{name:<7}{entity.rstrip('s'):<8}{int(row['count']):>7}{row['mean']:>12.3f}"
              f"{row['min']:>12.3f}{row['50%']:>12.3f}{row['max']:>12.3f}  {what}", file=out)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _streams(out: TextIO | None, err: TextIO | None) -> tuple[TextIO, TextIO]:
    """The streams to write to: those given, else ``sys.stdout``/``sys.stderr`` as they
    are *now* (not at import: pytest's capture, a notebook or a tee may replace them)."""
    return (sys.stdout if out is None else out), (sys.stderr if err is None else err)


def timings_main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``swiftnb timings LOG [--format table|csv|json|aimes] [--offset S] [--run N|RUNID]
    [-o FILE]``."""
    out, err = _streams(out, err)
    parser = _Parser(prog="swiftnb timings", description="timings of a run from its log")
    parser.add_argument("log")
    parser.add_argument("--format", "-f", default="table",
                        choices=["table", "csv", "json", "aimes"])
    parser.add_argument("--offset", type=int, default=0,
                        help="seconds added to every epoch in --format aimes (18000 "
                             "reproduces the original AIMES files)")
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")
    parser.add_argument("--run", help="the run to analyse when the log holds several: its "
                                      "number (1, 2...) or its run id")
    parsed = _arguments_and_runs(parser, argv, err, one=lambda args: args.format == "aimes",
                                 scan=lambda args: args.format != "aimes")
    if isinstance(parsed, int):
        return parsed
    args, runs = parsed
    target = open(args.output, "w", encoding="utf-8") if args.output else out
    try:
        _write_timings(runs, args.format, args.offset, target)
    finally:
        if args.output:
            target.close()
    return EXIT_OK


def _timings_doc(frame) -> dict[str, Any]:
    return {"run": frame.run, "summary": frame.summary().reset_index().to_dict("records"),
            "timings": frame.timings().to_dict("records")}


def _write_timings(runs: list, fmt: str, offset: int, target: TextIO) -> None:
    """The timings of each run in ``fmt``; several runs: tables one after the other, a
    ``run`` column (its number) in csv, ``{"runs": [...]}`` in json."""
    several = len(runs) > 1
    if fmt == "table":
        for i, frame in enumerate(runs):
            if i:
                print(file=target)
            _table(frame, target)
    elif fmt == "csv":
        import pandas as pd

        tables = [frame.timings() for frame in runs]
        if several:
            tables = [t.assign(run=i) for i, t in enumerate(tables, 1)]
            tables = [t[["run", *(c for c in t.columns if c != "run")]] for t in tables]
        pd.concat(tables, ignore_index=True).to_csv(target, index=False, float_format="%.3f")
    elif fmt == "json":
        doc = {"runs": [_timings_doc(f) for f in runs]} if several else _timings_doc(runs[0])
        json.dump(doc, target, indent=1, default=_json_default)
        target.write("\n")
    else:
        from swiftnb.logs.aimes import durations

        json.dump(durations(runs[0], offset=offset), target, indent=1)
        target.write("\n")


def plot_log_main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``swiftnb plot-log LOG [-o report.html]``: an offline HTML report."""
    out, err = _streams(out, err)
    parser = _Parser(prog="swiftnb plot-log",
                     description="an HTML report of a run (works offline: BokehJS inlined)")
    parser.add_argument("log")
    parser.add_argument("-o", "--output", help="report file (default report-<log name>.html)")
    parser.add_argument("--title", help="report title (default: the log's name and run id)")
    parser.add_argument("--run", help="the run to report when the log holds several: its "
                                      "number (1, 2...) or its run id")
    parsed = _arguments_and_runs(parser, argv, err, one=lambda args: True)
    if isinstance(parsed, int):
        return parsed
    args, runs = parsed
    frame = runs[0]
    from swiftnb.logs.report import write_report

    output = args.output
    if output is None:
        base = os.path.basename(args.log)
        for suffix in (".bz2", ".gz", ".xz", ".log"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        output = f"report-{base or 'swift'}.html"
    try:
        write_report(frame, output, title=args.title)
    except OSError as exc:
        print(f"swiftnb: cannot write {output}: {exc.strerror or exc}", file=err)
        return EXIT_ERROR
    run = frame.run
    print(f"wrote {output} ({run['njobs']} jobs, {run['ntasks']} tasks, {run['nblocks']} "
          f"blocks)", file=out)
    return EXIT_OK


def main(command: str, argv: Sequence[str]) -> int:
    """Entry from swiftnb.cli's COMMANDS table."""
    commands = {"timings": timings_main, "plot-log": plot_log_main}
    if command not in commands:
        print(f"swiftnb: unknown log command {command!r}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return commands[command](argv)
    except BrokenPipeError:  # `swiftnb timings x.log | head`: the reader left, fine
        try:  # no "Exception ignored ... BrokenPipeError" when Python flushes at exit
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # a stream without a file descriptor (captured)
            pass
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
