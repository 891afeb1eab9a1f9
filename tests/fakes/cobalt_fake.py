"""FAKE Cobalt commands (``qsub``, ``qstat``, ``qdel``): NOT Cobalt.

Stand-ins for testing the Cobalt adapter where no Cobalt runs; they behave as Cobalt's
own client sources and ALCF's guides show: qsub takes its options on the command line
and, in ``--mode script``, from the script's ``#COBALT`` lines, prints the job id, and
refuses an unknown queue with "'q' is not an existing queue"; qstat prints the table
``JobID User WallTime Nodes State Location`` (a line of ``=`` under the header) and exits
1 when it knows none of the ids asked; an ended job leaves qstat at once.  The job's
``PREFIX.cobaltlog`` (``-O``, default the job id) gets Cobalt's lines: "task completed
normally with an exit code of N; initiating job cleanup and removal", "maximum execution
time exceeded; initiating job terminiation" (sic), "user delete requested with signal
SIGTERM by user U".  The script really runs (``fakelrm``); ``-t`` minutes last
``SWIFTNB_FAKE_LRM_MINUTE`` seconds.  Only script mode is run.
"""

from __future__ import annotations

import os
import re
import shlex
import sys

import fakelrm

SYSTEM = "cobalt"
_WITH_VALUE = {"t", "n", "q", "A", "O", "o", "e", "i", "mode", "attrs", "cwd", "env",
               "proccount", "c", "dependencies", "kernel", "K", "jobname", "debuglog", "M",
               "project", "queue", "nodecount", "time"}
_FLAGS = {"disable_preboot", "I", "interactive", "h", "held", "preemptable", "run_project"}
_ALIASES = {"time": "t", "nodecount": "n", "queue": "q", "project": "A"}
_MINUTES = re.compile(r"(?:(\d+):)?(?:(\d+):)?(\d+)\Z")
_LOG_LINES = {
    "submit": "submitted with cwd set to: {cwd}",
    "start": "{user}/{number}: Initiating boot at location fakenode.",
    "end": "Info: task completed normally with an exit code of {code}; initiating job cleanup "
           "and removal",
    "walltime": "Info: maximum execution time exceeded; initiating job terminiation",
    "cancel": "Info: user delete requested with signal SIGTERM by user {user}",
}


def _options(words: list[str]) -> tuple[dict[str, list[str]], list[str], str | None]:
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            return options, words[i:], None
        name = word.lstrip("-")
        name = _ALIASES.get(name, name)
        if name in _FLAGS:
            options.setdefault(name, []).append("")
        elif name in _WITH_VALUE:
            if i + 1 >= len(words):
                return options, [], f"option {word} requires an argument"
            i += 1
            options.setdefault(name, []).append(words[i])
        else:
            return options, [], f"no such option: {word}"
        i += 1
    return options, [], None


def _directives(script: str) -> list[str]:
    words: list[str] = []
    for line in script.splitlines():
        if line.startswith("#COBALT"):
            words += shlex.split(line[len("#COBALT"):])
    return words


def _seconds(text: str) -> float | None:
    found = _MINUTES.match(text.strip())
    if found is None:
        return None
    if ":" not in text:
        return int(text) * fakelrm.minute()  # plain minutes
    parts = [int(g) for g in found.groups() if g is not None]
    total = 0
    for part in parts:
        total = total * 60 + part
    return float(total)  # HH:MM:SS


def qsub(argv: list[str]) -> int:
    options, operands, error = _options(argv)
    if error:
        sys.stderr.write(f"Usage: qsub [options] <executable> [<excutable options>]\n\n"
                         f"qsub: error: {error}\n")
        return 2
    if options.get("mode", [""])[-1] != "script":
        sys.stderr.write("this FAKE Cobalt runs only --mode script jobs\n")
        return 1
    if not operands:
        sys.stderr.write("No executable or script specified\n")
        return 1
    path = os.path.abspath(operands[0])
    if not os.access(path, os.X_OK):
        sys.stderr.write(f"command {path} not found, or is not a file or is not executable\n")
        return 1
    script = open(path).read()
    directives, _, error = _options(_directives(script))
    if error:
        sys.stderr.write(f"#COBALT directive: {error}\n")
        return 1
    for key, values in options.items():  # the command line wins
        directives[key] = values
    options = directives
    for needed in ("t", "n"):
        if needed not in options:
            sys.stderr.write(f"'{'time' if needed == 't' else 'nodecount'}' not provided\n")
            return 1
    walltime = _seconds(options["t"][-1])
    if walltime is None:
        sys.stderr.write(f"invalid time specification: {options['t'][-1]}\n")
        return 1
    queue = options.get("q", ["default"])[-1]
    if queue not in fakelrm.queues():
        sys.stderr.write(f"'{queue}' is not an existing queue\n")
        return 1
    nodes = options["n"][-1]
    if not nodes.isdigit():
        sys.stderr.write(f"nodecount must be an integer: {nodes}\n")
        return 1
    cwd = options.get("cwd", [os.getcwd()])[-1]
    prefix = options.get("O", ["%N"])[-1]
    log_lines = dict(_LOG_LINES, submit=_LOG_LINES["submit"].replace("{cwd}", cwd))
    record = fakelrm.submit(
        SYSTEM, name=os.path.basename(prefix), queue=queue, script=script, cwd=cwd,
        stdout=options.get("o", [prefix + ".output"])[-1],
        stderr=options.get("e", [prefix + ".error"])[-1],
        walltime=walltime, slots=int(nodes), nodefile_var="COBALT_NODEFILE",
        env={"COBALT_JOBID": "%N", "COBALT_JOBSIZE": nodes},
        log=prefix + ".cobaltlog", log_lines=log_lines,
        extra={"project": options.get("A", [""])[-1], "walltime_text": options["t"][-1],
               "attrs": options.get("attrs", [""])[-1]})
    print(record["number"])
    return 0


def _state(record: dict) -> str:
    return "queued" if fakelrm.phase(record) == "queued" else "running"


def qstat(argv: list[str]) -> int:
    ids = [a for a in argv if not a.startswith("-")]
    live = [r for r in fakelrm.records(SYSTEM) if fakelrm.phase(r) != "ended"]
    chosen = [r for r in live if not ids or str(r["number"]) in ids]
    if not chosen:
        return 1 if ids else 0
    rows = [["JobID", "User", "WallTime", "Nodes", "State", "Location"]]
    for r in chosen:
        minutes = int(r["walltime"] or 0) // 60
        rows.append([str(r["number"]), r["user"], f"{minutes // 60:02d}:{minutes % 60:02d}:00",
                     str(r["slots"]), _state(r), "fakenode" if r.get("started") else "None"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    print(lines[0])
    print("=" * len(lines[0]))
    for line in lines[1:]:
        print(line)
    return 0


def qdel(argv: list[str]) -> int:
    live = {str(r["number"]): r for r in fakelrm.records(SYSTEM) if fakelrm.phase(r) != "ended"}
    deleted = []
    for job_id in (a for a in argv if not a.startswith("-")):
        record = live.get(job_id)
        if record is not None:
            fakelrm.request_cancel(record)
            deleted.append(record)
    if deleted:
        print("      Deleted Jobs")
        print("JobID  User")
        print("=====================")
        for r in deleted:
            print(f"{r['number']:<6} {r['user']}")
    return 0
