"""FAKE LSF commands (``bsub``, ``bjobs``, ``bkill``): NOT IBM Spectrum LSF.

Stand-ins for testing the LSF adapter where no LSF cluster runs; they print what LSF 10.1
prints (its command reference): "Job <123> is submitted to queue <normal>." from bsub,
"<queue>: No such queue. Job not submitted.", bjobs' default table or ``-o`` fields
(``jobid stat exit_code exit_reason queue job_name user``, ``delimiter='c'``), "Job <N>
is not found", and bkill's "Job <N> is being terminated" / "Job has already finished".
The job really runs (``fakelrm``).  ``-W`` minutes last ``SWIFTNB_FAKE_LRM_MINUTE``
seconds.  A run-limit kill sends SIGUSR2 (exit code 140, ``TERM_RUNLIMIT``), bkill
SIGINT (130, ``TERM_OWNER``).
"""

from __future__ import annotations

import os
import re
import shlex
import sys

import fakelrm

SYSTEM = "lsf"
#: bsub options that take a value (bsub(1)); the others listed are flags
_WITH_VALUE = {"J", "W", "n", "R", "q", "P", "o", "e", "oo", "eo", "cwd", "G", "M", "m",
               "a", "b", "c", "E", "Ep", "i", "L", "u", "w", "app", "g", "sla", "U", "We",
               "outdir", "C", "D", "F", "S", "T", "v", "k", "f"}
_FLAGS = {"x", "B", "N", "r", "rn", "H", "K", "hl", "ul"}
_WALLTIME = re.compile(r"(?:(\d+):)?(\d+)\Z")
_EXIT_REASONS = {"walltime": "TERM_RUNLIMIT: job killed after reaching LSF run time limit",
                 "cancel": "TERM_OWNER: job killed by owner"}


def _directives(script: str) -> list[str]:
    words: list[str] = []
    for line in script.splitlines()[1:] if script.startswith("#!") else script.splitlines():
        text = line.strip()
        if not text:
            continue
        if not text.startswith("#"):
            break
        if text.startswith("#BSUB"):
            words += shlex.split(text[5:])
    return words


def _options(words: list[str]) -> tuple[dict[str, list[str]], list[str], str | None]:
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            return options, words[i:], None
        name = word[1:]
        if name in _FLAGS:
            options.setdefault(name, []).append("")
        elif name in _WITH_VALUE:
            if i + 1 >= len(words):
                return options, [], f"bsub: option requires an argument -- {name}"
            i += 1
            options.setdefault(name, []).append(words[i])
        else:
            return options, [], f"bsub: illegal option -- {name}"
        i += 1
    return options, [], None


def bsub(argv: list[str]) -> int:
    line_options, command, error = _options(argv)
    if error:
        sys.stderr.write(error + "\nUsage: bsub [options] command [arguments]\n")
        return 255
    script = shlex.join(command) + "\n" if command else sys.stdin.read()
    options, _, error = _options(_directives(script))
    if error:
        sys.stderr.write(error + ". Job not submitted.\n")
        return 255
    options.update(line_options)
    queue = options.get("q", ["normal"])[-1]
    if queue not in fakelrm.queues():
        sys.stderr.write(f"{queue}: No such queue. Job not submitted.\n")
        return 255
    walltime = None
    if "W" in options:
        found = _WALLTIME.match(options["W"][-1])
        if found is None:
            sys.stderr.write(f"{options['W'][-1]}: Bad RUNLIMIT specification. Job not "
                             "submitted.\n")
            return 255
        walltime = (int(found.group(1) or 0) * 60 + int(found.group(2))) * fakelrm.minute()
    slots = options.get("n", ["1"])[-1]
    if not slots.isdigit() or int(slots) < 1:
        sys.stderr.write(f"{slots}: Bad argument for option -n. Job not submitted.\n")
        return 255
    for requirement in options.get("R", []):
        if requirement.count("[") != requirement.count("]"):
            sys.stderr.write(f"{requirement}: Bad resource requirement syntax. Job not "
                             "submitted.\n")
            return 255
    cwd = options.get("cwd", [os.getcwd()])[-1]
    name = options.get("J", [command[0] if command else "NONAME"])[-1]
    record = fakelrm.submit(
        SYSTEM, name=name, queue=queue, script=script, cwd=cwd,
        stdout=options.get("o", ["/dev/null"])[-1].replace("%J", "%N"),
        stderr=options.get("e", ["/dev/null"])[-1].replace("%J", "%N"),
        walltime=walltime, slots=int(slots), nodefile_var="LSB_DJOB_HOSTFILE",
        env={"LSB_JOBID": "%N", "LSB_JOBNAME": name, "LSB_QUEUE": queue},
        signals={"walltime": "USR2", "cancel": "INT"},
        extra={"project": options.get("P", ["default"])[-1], "R": options.get("R", [])})
    print(f"Job <{record['number']}> is submitted to queue <{queue}>.")
    return 0


def _stat(record: dict) -> str:
    phase = fakelrm.phase(record)
    if phase != "ended":
        return "PEND" if phase == "queued" else "RUN"
    return "DONE" if record["returncode"] == 0 and not record["killed"] else "EXIT"


def _exit_code(record: dict) -> str:
    if _stat(record) != "EXIT":
        return "-"
    code = record["returncode"]
    if code is None:
        return "-"
    return str(128 - code if code < 0 else code)


def _field(record: dict, name: str) -> str:
    if name == "jobid":
        return str(record["number"])
    if name == "stat":
        return _stat(record)
    if name == "exit_code":
        return _exit_code(record)
    if name == "exit_reason":
        return _EXIT_REASONS.get(record["killed"] or "", "-") if _stat(record) == "EXIT" else "-"
    if name == "queue":
        return record["queue"]
    if name in ("job_name", "name"):
        return record["name"]
    if name == "user":
        return record["user"]
    return "-"


def bjobs(argv: list[str]) -> int:
    fields: list[str] | None = None
    delimiter = " "
    header = True
    ids: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-o" and i + 1 < len(argv):
            i += 1
            spec = argv[i]
            found = re.search(r"delimiter='(.)'", spec)
            if found:
                delimiter = found.group(1)
                spec = spec[:found.start()] + spec[found.end():]
            fields = [f.split(":")[0] for f in spec.split()]
        elif word == "-noheader":
            header = False
        elif not word.startswith("-"):
            ids.append(word)
        i += 1
    by_number = {str(r["number"]): r for r in fakelrm.records(SYSTEM)}
    status = 0
    chosen = []
    for job_id in ids:
        if job_id in by_number:
            chosen.append(by_number[job_id])
        else:
            sys.stderr.write(f"Job <{job_id}> is not found\n")
            status = 255
    if not ids:
        chosen = [r for r in by_number.values() if fakelrm.phase(r) != "ended"]
        if not chosen:
            print("No unfinished job found")
            return 0
    if fields is None:
        if header and chosen:
            print("JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME")
        for r in chosen:
            print(f"{r['number']:<7} {r['user']:<7} {_stat(r):<5} {r['queue']:<10} fakehost    "
                  f"{'fakehost' if r.get('started') else '':<11} {r['name']:<10} "
                  f"{fakelrm.ctime(r['submitted'])[4:16]}")
        return status
    if header and chosen:
        print(delimiter.join(f.upper() for f in fields))
    for r in chosen:
        print(delimiter.join(_field(r, f) for f in fields))
    return status


def bkill(argv: list[str]) -> int:
    by_number = {str(r["number"]): r for r in fakelrm.records(SYSTEM)}
    status = 0
    for job_id in (a for a in argv if not a.startswith("-")):
        record = by_number.get(job_id)
        if record is None:
            sys.stderr.write(f"Job <{job_id}>: No matching job found\n")
            status = 255
        elif fakelrm.phase(record) == "ended":
            sys.stderr.write(f"Job <{job_id}>: Job has already finished\n")
            status = 255
        else:
            fakelrm.request_cancel(record)
            print(f"Job <{job_id}> is being terminated")
    return status
