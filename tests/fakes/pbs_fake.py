"""FAKE PBS/Torque commands (``qsub``, ``qstat``, ``qdel``): NOT PBS.

Stand-ins for testing the PBS adapter where no PBS server runs; they print what Torque
prints (Torque Administrator Guide and qsub(1)/qstat(1)/qdel(1): ``123.fakepbs`` from
qsub, the ``qstat -f`` full display with ``job_state`` and ``exit_status``, "Unknown Job
Id", "submit error (Unknown queue ...)") and really run the job (``fakelrm``).

``SWIFTNB_FAKE_PBS=pro`` makes them answer as PBS Professional does for ended jobs:
``job_state F`` and ``Exit_status``, listed only with ``qstat -x`` ("Job has finished,
use -x or -H to obtain historical job information" otherwise).  Otherwise ended jobs stay
listed as ``C`` for ``SWIFTNB_FAKE_LRM_KEEP`` seconds (Torque's keep_completed), then are
unknown.  A job killed by qdel or at its walltime ends with exit status 256+signal (271
for SIGTERM), and a walltime kill leaves "=>> PBS: job killed: walltime X exceeded limit
Y" in its stderr, as Torque's MOM does.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time

import fakelrm

SYSTEM = "pbs"
SERVER = "fakepbs"
#: qsub options that take a value, and those that do not (Torque qsub(1))
_WITH_VALUE = set("aAcCdDeIjklmMNoPpqStTuvW")
_FLAGS = set("fhnVxXz")
_RESOURCES = {"walltime", "nodes", "mppwidth", "mppnppn", "mppdepth", "mem", "pmem", "vmem",
              "pvmem", "ncpus", "cput", "pcput", "file", "host", "naccesspolicy", "procs",
              "gres", "feature", "select", "place", "nodect", "software", "other"}
_WALLTIME = re.compile(r"(?:(?:(\d+):)?(\d+):)?(\d+)\Z")


def _pro() -> bool:
    return os.environ.get("SWIFTNB_FAKE_PBS", "") == "pro"


def _directives(script: str) -> list[str]:
    """The ``#PBS`` lines' words, up to the first line that is not a comment."""
    words: list[str] = []
    for line in script.splitlines()[1:] if script.startswith("#!") else script.splitlines():
        text = line.strip()
        if not text:
            continue
        if not text.startswith("#"):
            break
        if text.startswith("#PBS"):
            words += shlex.split(text[4:])
    return words


def _options(words: list[str]) -> tuple[dict[str, list[str]], list[str], str | None]:
    """qsub's options as {letter: [values]}, its operands, and an error."""
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word == "-":
            return options, words[i:], None
        letter = word[1:2]
        if letter in _FLAGS and len(word) == 2:
            options.setdefault(letter, []).append("")
        elif letter in _WITH_VALUE:
            if len(word) > 2:
                value = word[2:]
            elif i + 1 < len(words):
                i += 1
                value = words[i]
            else:
                return options, [], f"qsub: option requires an argument -- '{letter}'"
            options.setdefault(letter, []).append(value)
        else:
            return options, [], f"qsub: invalid option -- '{word[1:]}'"
        i += 1
    return options, [], None


def _walltime_seconds(text: str) -> int | None:
    found = _WALLTIME.match(text.strip())
    if found is None:
        return None
    h, m, s = (int(g) if g else 0 for g in found.groups())
    return h * 3600 + m * 60 + s


def qsub(argv: list[str]) -> int:
    line_options, operands, error = _options(argv)
    if error:
        sys.stderr.write(error + "\nusage: qsub [-a date_time] ... [script]\n")
        return 2
    if operands:
        try:
            with open(operands[0]) as f:
                script = f.read()
        except OSError as exc:
            sys.stderr.write(f"qsub: could not open script file {operands[0]}: {exc.strerror}\n")
            return 1
        default_name = os.path.basename(operands[0])
    else:
        script = sys.stdin.read()
        default_name = "STDIN"
    options, _, error = _options(_directives(script))
    if error:
        sys.stderr.write(f"qsub: directive error: {error}\n")
        return 1
    for letter, values in line_options.items():  # the command line wins
        options[letter] = values
    resources: dict[str, str] = {}
    for value in options.get("l", []):
        for item in value.split(","):
            key, _, val = item.partition("=")
            if key not in _RESOURCES:
                sys.stderr.write(f"qsub: submit error (Unknown resource type  MSG=Unknown "
                                 f"resource type {key})\n")
                return 1
            resources[key] = val
    walltime = None
    if "walltime" in resources:
        walltime = _walltime_seconds(resources["walltime"])
        if walltime is None:
            sys.stderr.write("qsub: submit error (Illegal attribute or resource value "
                             f"MSG=walltime={resources['walltime']})\n")
            return 1
    queue = options.get("q", ["batch"])[-1]
    if queue not in fakelrm.queues():
        sys.stderr.write("qsub: submit error (Unknown queue MSG=requested queue not found)\n")
        return 1
    name = options.get("N", [default_name])[-1]
    if not name[:1].isalpha():
        sys.stderr.write("qsub: illegal -N value\n")
        return 1
    cwd = os.getcwd()
    slots = 1
    if "nodes" in resources:
        count, _, rest = resources["nodes"].partition(":")
        ppn = re.search(r"ppn=(\d+)", rest)
        slots = int(count or 1) * int(ppn.group(1) if ppn else 1)
    record = fakelrm.submit(
        SYSTEM, name=name, queue=queue, script=script, cwd=cwd,
        stdout=options.get("o", [f"{name}.o%N"])[-1],
        stderr=options.get("e", [f"{name}.e%N"])[-1],
        walltime=walltime, shell=options.get("S", ["/bin/sh"])[-1], slots=slots,
        nodefile_var="PBS_NODEFILE",
        env={"PBS_JOBID": f"%N.{SERVER}", "PBS_JOBNAME": name, "PBS_O_WORKDIR": cwd,
             "PBS_QUEUE": queue, "PBS_ENVIRONMENT": "PBS_BATCH"},
        walltime_note="=>> PBS: job killed: walltime {used} exceeded limit {limit}\n",
        extra={"resources": resources, "account": options.get("A", [""])[-1]})
    print(f"{record['number']}.{SERVER}")
    return 0


def _number(job_id: str) -> int | None:
    head = job_id.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _exit_status(record: dict) -> int | None:
    code = record.get("returncode")
    if record.get("error"):
        return -9  # JOB_EXEC_FAIL: could not create/open stdout stderr files
    if code is None:
        return None
    return 256 - code if code < 0 else code


def _visible(record: dict, history: bool) -> str:
    """``shown``, ``finished`` (PBS Pro without -x) or ``unknown``."""
    if fakelrm.phase(record) != "ended":
        return "shown"
    if _pro():
        return "shown" if history else "finished"
    return "shown" if time.time() - record["ended"] < fakelrm.keep_seconds() else "unknown"


def _letter(record: dict) -> str:
    return {"queued": "Q", "running": "R"}.get(fakelrm.phase(record), "F" if _pro() else "C")


def _full(record: dict) -> str:
    job_id = f"{record['number']}.{SERVER}"
    res = record["extra"].get("resources", {})
    attrs = [("Job_Name", record["name"]), ("Job_Owner", f"{record['user']}@{SERVER}"),
             ("job_state", _letter(record)), ("queue", record["queue"]), ("server", SERVER),
             ("ctime", fakelrm.ctime(record["submitted"])),
             ("Error_Path", f"{SERVER}:{record['stderr']}"),
             ("Output_Path", f"{SERVER}:{record['stdout']}")]
    if record["extra"].get("account"):
        attrs.append(("Account_Name", record["extra"]["account"]))
    attrs += [(f"Resource_List.{k}", v) for k, v in sorted(res.items())]
    if record.get("started"):
        end = record.get("ended") or time.time()
        used = int(end - record["started"])
        attrs += [("exec_host", f"{SERVER}/0"), ("start_time", fakelrm.ctime(record["started"])),
                  ("resources_used.walltime",
                   f"{used // 3600:02d}:{used % 3600 // 60:02d}:{used % 60:02d}")]
    attrs.append(("Variable_List", ",".join(f"{k}={v}" for k, v in sorted(record["env"].items()))))
    code = _exit_status(record)
    if fakelrm.phase(record) == "ended" and code is not None:
        attrs.append(("Exit_status" if _pro() else "exit_status", str(code)))
    lines = [f"Job Id: {job_id}"]
    for key, value in attrs:
        text = f"    {key} = {value}"
        while len(text) > 80:  # Torque wraps long values; the rest follows a tab
            lines.append(text[:80])
            text = "\t" + text[80:]
        lines.append(text)
    return "\n".join(lines) + "\n"


def qstat(argv: list[str]) -> int:
    full = "-f" in argv
    history = "-x" in argv
    if history and not _pro():
        sys.stderr.write("qstat: this FAKE Torque prints no XML (-x)\n")
        return 2
    ids = [a for a in argv if not a.startswith("-")]
    by_number = {r["number"]: r for r in fakelrm.records(SYSTEM)}
    chosen = ids or [f"{n}.{SERVER}" for n in by_number]
    status = 0
    shown: list[dict] = []
    for job_id in chosen:
        number = _number(job_id)
        record = by_number.get(number) if number is not None else None
        seen = _visible(record, history or not ids) if record is not None else "unknown"
        if seen == "shown":
            shown.append(record)
        elif ids and seen == "finished":
            sys.stderr.write(f"qstat: {job_id} Job has finished, use -x or -H to obtain "
                             "historical job information\n")
            status = 35
        elif ids:
            sys.stderr.write(f"qstat: Unknown Job Id Error {job_id}\n")
            status = 153
    if full:
        sys.stdout.write("\n".join(_full(r) for r in shown))
    elif shown:
        print("Job ID                    Name             User            Time Use S Queue")
        print("------------------------- ---------------- --------------- -------- - -----")
        for r in shown:
            print(f"{str(r['number']) + '.' + SERVER:<25} {r['name'][:16]:<16} "
                  f"{r['user'][:15]:<15} {'0':>8} {_letter(r)} {r['queue']}")
    return status


def qdel(argv: list[str]) -> int:
    status = 0
    by_number = {r["number"]: r for r in fakelrm.records(SYSTEM)}
    for job_id in (a for a in argv if not a.startswith("-")):
        number = _number(job_id)
        record = by_number.get(number) if number is not None else None
        if record is None:
            sys.stderr.write(f"qdel: Unknown Job Id {job_id}\n")
            status = 153
        elif fakelrm.phase(record) == "ended":
            sys.stderr.write(f"qdel: Job has finished {job_id}\n" if _pro() else
                             f"qdel: Invalid state for job - COMPLETE {job_id}\n")
            status = 35 if _pro() else 168
        else:
            fakelrm.request_cancel(record)
    return status
