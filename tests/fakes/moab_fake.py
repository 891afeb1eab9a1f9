"""FAKE Moab commands (``msub``, ``showq``, ``checkjob``, ``canceljob``): NOT Moab.

Stand-ins for testing the Moab adapter where no Moab server runs.  They print the formats
Adaptive Computing documented in the Moab Workload Manager Administrator Guide (its pages
on msub, showq, checkjob and canceljob), and really run the job (``fakelrm``):

* ``msub`` reads the script (a file operand or stdin) and its ``#MSUB`` directives (msub
  reads them as qsub reads ``#PBS``: ``-N``, ``-S``, ``-q``, ``-A``, ``-o``, ``-e``, ``-l
  nodes=N:ppn=P,walltime=HH:MM:SS``); it prints a blank line and the job id (``\\n17``);
  a class (queue) that does not exist is ``ERROR:  cannot submit job - invalid QOS/class
  requested`` on stderr, exit 1.
* ``showq`` prints its three sections, each with a header::

      active jobs------------------------
      JOBID              USERNAME      STATE PROCS   REMAINING            STARTTIME

      17                     root    Running     1    00:09:58  Sat Nov 28 22:00:01

      1 active job

      eligible jobs----------------------
      JOBID              USERNAME      STATE PROCS     WCLIMIT            QUEUETIME
      ...
      blocked jobs-----------------------
      ...
      Total jobs:  1

  Ended jobs are not listed.
* ``checkjob ID`` prints ``job ID``, then ``Key: value`` lines: ``AName``, ``State``
  (Idle, Running, Completed, Removed), ``Completion Code: N  Time: DATE`` once the job
  ended, ``Creds``, ``WallTime: USED of LIMIT``; a job killed at its walltime is
  ``State: Removed`` with ``Message[0]: job exceeded wallclock limit``.  An unknown job
  is ``ERROR:  cannot locate job 'ID'`` on stderr, exit 1.
* ``canceljob ID`` prints ``job 'ID' cancelled``; an ended or unknown job is ``ERROR:
  invalid job specified (ID)``, exit 1.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time

import fakelrm

SYSTEM = "moab"
_WITH_VALUE = set("aAcCdDeIjklmMNoPpqStTuvWW")
_WALLTIME = re.compile(r"(?:(?:(\d+):)?(\d+):)?(\d+)\Z")


def _directives(script: str) -> list[str]:
    words: list[str] = []
    for line in script.splitlines()[1:] if script.startswith("#!") else script.splitlines():
        text = line.strip()
        if not text:
            continue
        if not text.startswith("#"):
            break
        if text.startswith("#MSUB"):
            words += shlex.split(text[5:])
    return words


def _options(words: list[str]) -> tuple[dict[str, list[str]], str | None]:
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        letter = word[1:2]
        if not word.startswith("-") or letter not in _WITH_VALUE:
            return options, f"ERROR:  invalid option '{word}'"
        if i + 1 >= len(words):
            return options, f"ERROR:  option '{word}' requires a value"
        options.setdefault(letter, []).append(words[i + 1])
        i += 2
    return options, None


def _hms(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def msub(argv: list[str]) -> int:
    operands = [a for a in argv if not a.startswith("-")]
    if operands:
        with open(operands[0]) as f:
            script = f.read()
        default_name = os.path.basename(operands[0])
    else:
        script = sys.stdin.read()
        default_name = "STDIN"
    options, error = _options(_directives(script))
    if error:
        sys.stderr.write(error + "\n")
        return 1
    resources: dict[str, str] = {}
    for value in options.get("l", []):
        for item in value.split(","):
            key, _, val = item.partition("=")
            resources[key] = val
    walltime = None
    if "walltime" in resources:
        found = _WALLTIME.match(resources["walltime"])
        if found is None:
            sys.stderr.write(f"ERROR:  invalid walltime '{resources['walltime']}'\n")
            return 1
        h, m, s = (int(g) if g else 0 for g in found.groups())
        walltime = h * 3600 + m * 60 + s
    queue = options.get("q", ["batch"])[-1]
    if queue not in fakelrm.queues():
        sys.stderr.write("ERROR:  cannot submit job - invalid QOS/class requested\n")
        return 1
    name = options.get("N", [default_name])[-1]
    slots = 1
    if "nodes" in resources:
        count, _, rest = resources["nodes"].partition(":")
        ppn = re.search(r"ppn=(\d+)", rest)
        slots = int(count or 1) * int(ppn.group(1) if ppn else 1)
    record = fakelrm.submit(
        SYSTEM, name=name, queue=queue, script=script, cwd=os.getcwd(),
        stdout=options.get("o", [f"{name}.o%N"])[-1],
        stderr=options.get("e", [f"{name}.e%N"])[-1],
        walltime=walltime, shell=options.get("S", ["/bin/sh"])[-1], slots=slots,
        nodefile_var="PBS_NODEFILE",
        env={"MOAB_JOBID": "%N", "MOAB_JOBNAME": name, "MOAB_CLASS": queue,
             "PBS_JOBID": "%N"},
        extra={"resources": resources, "account": options.get("A", [""])[-1],
               "procs": slots})
    print()
    print(record["number"])
    return 0


def _state(record: dict) -> str:
    phase = fakelrm.phase(record)
    if phase == "queued":
        return "Idle"
    if phase == "running":
        return "Running"
    return "Removed" if record.get("killed") else "Completed"


def _find(job_id: str) -> dict | None:
    number = job_id.rsplit(".", 1)[-1]
    if not number.isdigit():
        return None
    return fakelrm.load(SYSTEM, int(number))


def showq(argv: list[str]) -> int:
    records = [r for r in fakelrm.records(SYSTEM) if fakelrm.phase(r) != "ended"]
    active = [r for r in records if fakelrm.phase(r) == "running"]
    eligible = [r for r in records if fakelrm.phase(r) == "queued"]
    now = time.time()
    print("active jobs------------------------")
    print("JOBID              USERNAME      STATE PROCS   REMAINING            STARTTIME")
    print()
    for r in active:
        left = (r["walltime"] or 0) - (now - r["started"])
        print(f"{r['number']:<18} {r['user']:>8} {'Running':>10} {r['extra']['procs']:>5} "
              f"{_hms(max(0, left)):>11}  {fakelrm.ctime(r['started'])}")
    print()
    print(f"{len(active)} active job{'s' if len(active) != 1 else ''}")
    print()
    print("eligible jobs----------------------")
    print("JOBID              USERNAME      STATE PROCS     WCLIMIT            QUEUETIME")
    print()
    for r in eligible:
        print(f"{r['number']:<18} {r['user']:>8} {'Idle':>10} {r['extra']['procs']:>5} "
              f"{_hms(r['walltime'] or 0):>11}  {fakelrm.ctime(r['submitted'])}")
    print()
    print(f"{len(eligible)} eligible job{'s' if len(eligible) != 1 else ''}")
    print()
    print("blocked jobs-----------------------")
    print("JOBID              USERNAME      STATE PROCS     WCLIMIT            QUEUETIME")
    print()
    print()
    print("0 blocked jobs")
    print()
    print(f"Total jobs:  {len(records)}")
    return 0


def checkjob(argv: list[str]) -> int:
    ids = [a for a in argv if not a.startswith("-")]
    if len(ids) != 1:
        sys.stderr.write("ERROR:  checkjob takes one job id\n")
        return 1
    record = _find(ids[0])
    if record is None:
        sys.stderr.write(f"ERROR:  cannot locate job '{ids[0]}'\n")
        return 1
    print(f"job {record['number']}")
    print()
    print(f"AName: {record['name']}")
    print(f"State: {_state(record)}")
    if fakelrm.phase(record) == "ended":
        code = record.get("returncode")
        code = 1 if code is None else (128 - code if code < 0 else code)
        print(f"Completion Code: {code}  Time: {fakelrm.ctime(record['ended'])}")
    print(f"Creds:  user:{record['user']}  group:{record['user']}  class:{record['queue']}")
    used = ((record.get("ended") or time.time()) - record["started"]
            if record.get("started") else 0)
    print(f"WallTime:   {_hms(used)} of {_hms(record['walltime'] or 0)}")
    if record.get("killed") == "walltime":
        print("Message[0]: job exceeded wallclock limit")
    return 0


def canceljob(argv: list[str]) -> int:
    status = 0
    for job_id in (a for a in argv if not a.startswith("-")):
        record = _find(job_id)
        if record is None or fakelrm.phase(record) == "ended":
            sys.stderr.write(f"ERROR:  invalid job specified ({job_id})\n")
            status = 1
            continue
        fakelrm.request_cancel(record)
        print(f"job '{job_id}' cancelled")
    return status
