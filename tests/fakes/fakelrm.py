"""FAKE batch systems' engine: job records, and the runner that really runs a job.

This is NOT PBS, LSF, HTCondor or Cobalt.  It is the shared part of the fake commands in
``tests/fakes/bin/`` (stand-ins for the batch systems that cannot run on the test
machine), standard library only.  A submit command calls :func:`submit`, which keeps the
job's record as JSON in ``$SWIFTNB_FAKE_LRM_DIR/SYSTEM/N.json`` and starts this module as
the job's *runner* (``python3 fakelrm.py run SYSTEM N``) in a session of its own.  The
runner waits the queue time, runs the job script with ``/bin/sh`` (in a process group of
its own), kills it at its walltime or when a cancel marker (``N.cancel``) appears, and
records the end.  The status commands read the records and print each system's format.

Knobs (environment, read by every command):

``SWIFTNB_FAKE_LRM_DIR``          the state directory (required)
``SWIFTNB_FAKE_LRM_MINUTE``       seconds a walltime *minute* lasts (LSF ``-W``, Cobalt
                                  ``-t``), so tests need not wait minutes (default 60)
``SWIFTNB_FAKE_LRM_START_DELAY``  seconds a job stays queued (default 0.3)
``SWIFTNB_FAKE_LRM_QUEUES``       the queues that exist (default ``batch,normal,default,debug``)
``SWIFTNB_FAKE_LRM_KEEP``         seconds an ended job stays listed where the system
                                  keeps them (Torque's keep_completed; default 300)
``SWIFTNB_FAKE_PYTHON``           the Python the commands run with (default python3)
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ENV_DIR = "SWIFTNB_FAKE_LRM_DIR"
ENV_MINUTE = "SWIFTNB_FAKE_LRM_MINUTE"
ENV_DELAY = "SWIFTNB_FAKE_LRM_START_DELAY"
ENV_QUEUES = "SWIFTNB_FAKE_LRM_QUEUES"
ENV_KEEP = "SWIFTNB_FAKE_LRM_KEEP"
ENV_PYTHON = "SWIFTNB_FAKE_PYTHON"

#: seconds between the runner's looks at its job
_TICK = 0.05
#: seconds between the polite signal and SIGKILL
_GRACE = 2.0


def state_dir(system: str) -> Path:
    root = os.environ.get(ENV_DIR)
    if not root:
        sys.stderr.write(f"FAKE {system}: {ENV_DIR} is not set\n")
        sys.exit(2)
    path = Path(root) / system
    path.mkdir(parents=True, exist_ok=True)
    return path


def minute() -> float:
    return float(os.environ.get(ENV_MINUTE, "60"))


def queues() -> set[str]:
    return set(os.environ.get(ENV_QUEUES, "batch,normal,default,debug").split(","))


def keep_seconds() -> float:
    return float(os.environ.get(ENV_KEEP, "300"))


def user() -> str:
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return str(os.getuid())


def ctime(when: float | None = None) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(when or time.time()))


def new_number(system: str) -> int:
    """The next job number of ``system`` (a counter file under a lock)."""
    path = state_dir(system) / "next"
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        text = f.read().strip()
        number = int(text) + 1 if text.isdigit() else 1
        f.seek(0)
        f.truncate()
        f.write(str(number))
    return number


def save(record: dict) -> None:
    path = state_dir(record["system"]) / f"{record['number']}.json"
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


def load(system: str, number: int) -> dict | None:
    try:
        return json.loads((state_dir(system) / f"{number}.json").read_text())
    except (OSError, ValueError):
        return None


def records(system: str) -> list[dict]:
    out = []
    for path in sorted(state_dir(system).glob("*.json"), key=lambda p: int(p.stem)):
        try:
            out.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return out


def phase(record: dict) -> str:
    """``queued``, ``running`` or ``ended``."""
    if record.get("ended") is not None:
        return "ended"
    return "running" if record.get("started") is not None else "queued"


def request_cancel(record: dict, how: str = "cancel") -> None:
    (state_dir(record["system"]) / f"{record['number']}.cancel").write_text(how)


def resolve(path: str, cwd: str) -> str:
    return path if os.path.isabs(path) else os.path.join(cwd, path)


def submit(system: str, *, name: str, queue: str, script: str, cwd: str, stdout: str,
           stderr: str, walltime: float | None, env: dict[str, str] | None = None,
           shell: str = "/bin/sh", slots: int = 1, nodefile_var: str | None = None,
           signals: dict[str, str] | None = None, walltime_note: str | None = None,
           log: str | None = None, log_lines: dict[str, str] | None = None,
           extra: dict | None = None) -> dict:
    """Record a job and start its runner; returns the record.

    ``signals`` maps ``cancel``/``walltime`` to the signal name sent to the job's process
    group (TERM by default); ``walltime_note`` is appended to the job's stderr when it is
    killed at its walltime (``{used}``, ``{limit}`` filled in); ``log``/``log_lines`` is a
    log the runner appends to at ``submit``/``start``/``end``/``walltime``/``cancel``
    (``{code}``, ``{user}``, ``{number}`` filled in, each line prefixed with a date).
    ``%N`` in ``stdout``, ``stderr``, ``log`` and ``env`` values becomes the job number."""
    number = new_number(system)

    def numbered(text: str) -> str:
        return text.replace("%N", str(number))

    stdout, stderr, log = numbered(stdout), numbered(stderr), numbered(log) if log else None
    env = {k: numbered(v) for k, v in (env or {}).items()}
    directory = state_dir(system)
    script_path = directory / f"{number}.script"
    script_path.write_text(script)
    record = {
        "system": system, "number": number, "name": name, "queue": queue,
        "script": str(script_path), "cwd": cwd, "stdout": resolve(stdout, cwd),
        "stderr": resolve(stderr, cwd), "walltime": walltime, "env": env,
        "shell": shell, "slots": slots, "nodefile_var": nodefile_var,
        "signals": signals or {}, "walltime_note": walltime_note,
        "log": resolve(log, cwd) if log else None, "log_lines": log_lines or {},
        "extra": extra or {}, "user": user(), "submitted": time.time(),
        "started": None, "ended": None, "returncode": None, "killed": None,
        "runner": None, "pgid": None, "error": None,
    }
    save(record)
    write_log(record, "submit")
    subprocess.Popen([sys.executable, os.path.abspath(__file__), "run", system, str(number)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    return record


def write_log(record: dict, event: str) -> None:
    template = record["log_lines"].get(event)
    if not record.get("log") or not template:
        return
    code = record.get("returncode")
    text = template.format(code=code, user=record["user"], number=record["number"])
    stamp = time.strftime("%a %b %d %H:%M:%S %Y +0000 (UTC)", time.gmtime())
    try:
        with open(record["log"], "a") as f:
            for line in text.splitlines():
                f.write(f"{stamp} {line}\n")
    except OSError:
        pass


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _kill_group(pgid: int, name: str) -> None:
    try:
        os.killpg(pgid, getattr(signal, "SIG" + name))
    except ProcessLookupError:
        pass


def run(system: str, number: int) -> None:
    """The runner: queue wait, run, walltime, cancel, end (see the module docstring)."""
    record = load(system, number)
    if record is None:
        return
    record["runner"] = os.getpid()
    save(record)
    marker = state_dir(system) / f"{number}.cancel"
    start_at = record["submitted"] + float(os.environ.get(ENV_DELAY, "0.3"))
    while time.time() < start_at:
        if marker.exists():
            record.update(ended=time.time(), killed="cancel")
            save(record)
            write_log(record, "cancel")
            return
        time.sleep(_TICK)
    env = dict(os.environ)
    env.update(record["env"])
    if record["nodefile_var"]:
        nodes = state_dir(system) / f"{number}.nodes"
        nodes.write_text((socket.gethostname() + "\n") * max(1, int(record["slots"])))
        env[record["nodefile_var"]] = str(nodes)
    record["started"] = time.time()
    try:
        out = open(record["stdout"], "ab")
        err = open(record["stderr"], "ab")
        child = subprocess.Popen([record["shell"], record["script"]], cwd=record["cwd"],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                 start_new_session=True)
    except OSError as exc:
        record.update(ended=time.time(), returncode=None, error=f"{exc.strerror}: {exc.filename}")
        save(record)
        write_log(record, "end")
        return
    record["pgid"] = child.pid
    save(record)
    write_log(record, "start")
    kill_at: float | None = None
    while child.poll() is None:
        now = time.time()
        if record["killed"] is None:
            how = None
            if marker.exists():
                how = "cancel"
            elif record["walltime"] is not None and now - record["started"] > record["walltime"]:
                how = "walltime"
            if how is not None:
                record["killed"] = how
                if how == "walltime" and record["walltime_note"]:
                    err.write(record["walltime_note"].format(
                        used=_hms(now - record["started"]),
                        limit=_hms(record["walltime"])).encode())
                    err.flush()
                write_log(record, how)
                _kill_group(child.pid, record["signals"].get(how, "TERM"))
                kill_at = now + _GRACE
        elif kill_at is not None and now > kill_at:
            _kill_group(child.pid, "KILL")
            kill_at = None
        time.sleep(_TICK)
    _kill_group(child.pid, "KILL")  # whatever the script left behind
    out.close()
    err.close()
    record.update(ended=time.time(), returncode=child.returncode)
    save(record)
    write_log(record, "end")


def stop_all(root: Path, wait: float = 3.0) -> None:
    """End every job under ``root`` (a test's state directory): cancel markers first, then
    SIGKILL to the runners and job groups still alive, by their recorded ids."""
    paths = list(root.glob("*/*.json"))
    live = []
    for path in paths:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if record.get("ended") is None:
            path.with_suffix(".cancel").write_text("cancel")
            live.append(path)
    deadline = time.time() + wait
    while live and time.time() < deadline:
        time.sleep(_TICK)
        live = [p for p in live if json.loads(p.read_text()).get("ended") is None]
    for path in live:
        record = json.loads(path.read_text())
        for pid, kill in ((record.get("pgid"), os.killpg), (record.get("runner"), os.kill)):
            if pid:
                try:
                    kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]))
    else:
        sys.stderr.write("usage: fakelrm.py run SYSTEM NUMBER\n")
        sys.exit(2)
