"""FAKE HTCondor commands (``condor_submit``, ``condor_q``, ``condor_history``,
``condor_rm``): NOT HTCondor.

Stand-ins for testing the HTCondor adapter where no pool runs; they print what the
HTCondor manual shows: "Submitting job(s)." / "1 job(s) submitted to cluster 42.",
"ERROR: I don't know about the 'x' universe.", ``-af`` / ``-autoformat[:t,]`` attribute
values (``undefined`` for a missing one), "Job 42.0 marked for removal" / "not found".
The executable really runs (``fakelrm``).  A running job leaves ``condor_q`` when it
ends (``condor_history`` has it then, JobStatus 4, or 3 when removed, with
``RemoveReason``).  Of ``periodic_remove`` this fake understands only the walltime form
the adapter writes, ``(JobStatus == 2) && ((time() - EnteredCurrentStatus) > SECONDS)``,
enforced to the second (a real schedd checks every PERIODIC_EXPR_INTERVAL); other
expressions are accepted and ignored.
"""

from __future__ import annotations

import os
import re
import sys

import fakelrm

SYSTEM = "condor"
_UNIVERSES = {"vanilla", "scheduler", "local", "parallel", "docker", "container", "java",
              "vm", "grid", "standard"}
_WALLTIME = re.compile(r"\(JobStatus\s*==\s*2\)\s*&&\s*\(\(time\(\)\s*-\s*EnteredCurrentStatus\)"
                       r"\s*>\s*(\d+)\)")
_LOG_LINES = {
    "submit": "000 ({number:03d}.000.000) Job submitted from host: <127.0.0.1:9618>\n...",
    "start": "001 ({number:03d}.000.000) Job executing on host: <127.0.0.1:9618>\n...",
    "end": "005 ({number:03d}.000.000) Job terminated.\n\t(1) Normal termination (return value "
           "{code})\n...",
    "walltime": "009 ({number:03d}.000.000) Job was aborted.\n\tThe job attribute "
                "PeriodicRemove expression evaluated to TRUE\n...",
    "cancel": "009 ({number:03d}.000.000) Job was aborted.\n\tvia condor_rm (by user {user})\n...",
}


def _description(text: str) -> tuple[dict[str, str], str | None]:
    """A submit description's ``key = value`` lines (lower-cased keys; ``+Attr`` kept)."""
    commands: dict[str, str] = {}
    queued = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.lower().split()[0] == "queue":
            queued = True
            continue
        key, sep, value = stripped.partition("=")
        if not sep:
            return commands, f"ERROR: on Line {number} of submit file: \n{line}\n"
        commands[key.strip().lower()] = value.strip()
    if not queued:
        return commands, "ERROR: no 'queue' statement in the submit file\n"
    return commands, None


def condor_submit(argv: list[str]) -> int:
    files = [a for a in argv if not a.startswith("-")]
    try:
        text = open(files[0]).read() if files else sys.stdin.read()
    except OSError as exc:
        sys.stderr.write(f"ERROR: Can't open \"{files[0]}\"  with flags 00 ({exc.strerror})\n")
        return 1
    commands, error = _description(text)
    if error:
        sys.stderr.write(error)
        return 1
    universe = commands.get("universe", "vanilla").lower()
    if universe not in _UNIVERSES:
        sys.stderr.write(f"ERROR: I don't know about the '{commands['universe']}' universe.\n")
        return 1
    executable = commands.get("executable")
    if not executable:
        sys.stderr.write("ERROR: Executable file not specified\n")
        return 1
    cwd = commands.get("initialdir", os.getcwd())
    path = fakelrm.resolve(executable, cwd)
    if not os.access(path, os.X_OK):
        sys.stderr.write(f"ERROR: Executable file {path} does not exist or is not executable\n")
        return 1
    cpus = commands.get("request_cpus", "1")
    if not cpus.isdigit():
        sys.stderr.write(f"ERROR: request_cpus = {cpus} is not an integer\n")
        return 1
    found = _WALLTIME.search(commands.get("periodic_remove", ""))
    print("Submitting job(s).")
    record = fakelrm.submit(
        SYSTEM, name=os.path.basename(path), queue="", script=open(path).read(), cwd=cwd,
        stdout=commands.get("output", "/dev/null"), stderr=commands.get("error", "/dev/null"),
        walltime=float(found.group(1)) if found else None, slots=int(cpus),
        env={"_CONDOR_JOB_AD": "", "CONDOR_ID": "%N.0"},
        log=commands.get("log"), log_lines=_LOG_LINES,
        extra={"universe": universe, "periodic_remove": commands.get("periodic_remove", ""),
               "accounting_group": commands.get("accounting_group", "")})
    print(f"1 job(s) submitted to cluster {record['number']}.")
    return 0


def _job_status(record: dict) -> int:
    phase = fakelrm.phase(record)
    if phase != "ended":
        return 1 if phase == "queued" else 2
    return 3 if record["killed"] else 4


def _attribute(record: dict, name: str) -> str:
    ended = fakelrm.phase(record) == "ended"
    code = record.get("returncode")
    by_signal = ended and code is not None and code < 0 and not record["killed"]
    values = {
        "clusterid": str(record["number"]), "procid": "0",
        "jobstatus": str(_job_status(record)), "owner": record["user"],
        "cmd": record["name"], "requestcpus": str(record["slots"]),
        "exitbysignal": ("true" if by_signal else "false") if ended and not record["killed"]
        else "undefined",
        "exitcode": str(code) if ended and code is not None and code >= 0 and not record["killed"]
        else "undefined",
        "exitsignal": str(-code) if by_signal else "undefined",
        "holdreason": "undefined",
        "removereason": (f"via condor_rm (by user {record['user']})"
                         if record["killed"] == "cancel" else
                         f"The job attribute PeriodicRemove expression "
                         f"'{record['extra']['periodic_remove']}' evaluated to TRUE"
                         if record["killed"] == "walltime" else "undefined"),
    }
    return values.get(name.lower(), "undefined")


def _select(argv: list[str], history: bool) -> int:
    attributes: list[str] = []
    separator = " "
    ids: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word.startswith(("-af", "-autoformat")):
            qualifiers = word.partition(":")[2]
            separator = "\t" if "t" in qualifiers else ", " if "," in qualifiers else " "
            i += 1
            while i < len(argv) and not argv[i].startswith("-") and not argv[i][:1].isdigit():
                attributes.append(argv[i])
                i += 1
            continue
        if word in ("-limit", "-constraint", "-name", "-pool"):
            i += 2
            continue
        if not word.startswith("-"):
            ids.append(word)
        i += 1
    chosen = []
    for record in fakelrm.records(SYSTEM):
        ended = fakelrm.phase(record) == "ended"
        if ended != history:
            continue
        if ids and not any(j in (str(record["number"]), f"{record['number']}.0") for j in ids):
            continue
        chosen.append(record)
    if history:
        chosen.reverse()  # newest first, as condor_history prints
    if not attributes:
        if not history:
            print("\n\n-- Schedd: fakeschedd : <127.0.0.1:9618?...\n"
                  " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD")
        for r in chosen:
            letter = "IRXCH"[_job_status(r) - 1] if _job_status(r) <= 5 else "?"
            print(f"{r['number']:>4}.0   {r['user']:<16} {fakelrm.ctime(r['submitted'])[4:16]}"
                  f"   0+00:00:00 {letter}  0    0.0 {r['name']}")
        return 0
    for r in chosen:
        print(separator.join(_attribute(r, a) for a in attributes))
    return 0


def condor_q(argv: list[str]) -> int:
    return _select(argv, history=False)


def condor_history(argv: list[str]) -> int:
    return _select(argv, history=True)


def condor_rm(argv: list[str]) -> int:
    by_id = {f"{r['number']}.0": r for r in fakelrm.records(SYSTEM)}
    status = 0
    for job_id in (a for a in argv if not a.startswith("-")):
        record = by_id.get(job_id if "." in job_id else f"{job_id}.0")
        if record is None or fakelrm.phase(record) == "ended":
            sys.stderr.write(f"Job {job_id} not found\n")
            status = 1
        else:
            fakelrm.request_cancel(record)
            print(f"Job {job_id} marked for removal")
    return status
