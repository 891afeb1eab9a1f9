"""Hostile set-ups of a run (issue 24, helper F): what the command line and the run's
set-up must refuse or survive, through the real ``swiftnb`` command.

Two runs of one ``-runid`` at once, run files (log, graph) over the user's files, the
end-of-job warning signals of batch systems, closed or full standard streams, a
read-only run directory, directories where files were expected, and a prepared run
canceled before it starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")

#: an app that says it started, then waits for the test's go-ahead (or a signal)
WAITING = """\
type file;
app (file o) work (string marks) {
    sh "-c" "touch $0/started; while [ ! -f $0/go ]; do sleep 0.05; done; echo done" marks stdout=@o;
}
file out <"out.txt">;
out = work("MARKS");
"""

PRINTS = 'trace("hello");\n'

MAPS = """\
type file;
app (file o) hello () { echo "hi" stdout=@o; }
file a <"a.txt"> = hello();
file b <single_file_mapper; file="sub/b.txt"> = hello();
file c <simple_mapper; location="d", prefix="c", suffix=".out"> = hello();
"""


def environment(cwd: Path) -> dict[str, str]:
    """A home of the test's own (no ~/.swift/swift.conf of the developer's)."""
    home = cwd.parent / f"{cwd.name}-home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home))
    env.pop("SWIFT_SITE_CONF", None)
    return env


def swiftnb(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([SWIFTNB, "run", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=environment(cwd), **kwargs)


def start(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([SWIFTNB, "run", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=environment(cwd))


def waiting_script(tmp_path: Path) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "wait.swift"
    script.write_text(WAITING.replace("MARKS", str(marks)))
    return script, marks


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended before its app started: {out}\n{err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the app did not start")
        time.sleep(0.05)


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr, result.stderr


# ------------------------------------------------------------------ 1. one run id, one run

def test_a_run_id_in_use_is_refused_and_the_first_run_keeps_its_files(tmp_path: Path) -> None:
    script, marks = waiting_script(tmp_path)
    first = start("-runid", "R", "wait.swift", cwd=tmp_path)
    try:
        wait_for(marks / "started", first)
        site_dir = tmp_path / "swiftwork" / "wait-R"
        assert site_dir.is_dir()
        second = swiftnb("-runid", "R", "wait.swift", cwd=tmp_path)
        assert second.returncode == 1, second.stderr
        assert "-runid R: the run id is in use by another run" in second.stderr
        no_traceback(second)
        assert site_dir.is_dir()  # the second run did not remove the first one's
        assert (tmp_path / "R" / "wait-R.log").is_file()
    finally:
        (marks / "go").touch()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert (tmp_path / "out.txt").read_text() == "done\n"
    again = swiftnb("-runid", "R", "wait.swift", cwd=tmp_path)  # free again once it ended
    assert again.returncode == 0, again.stderr


# ------------------------------------------------------------------ 2. run files over user files

@pytest.mark.parametrize("option", ["-logfile", "-pgraph"])
def test_a_run_file_over_the_script_is_refused(tmp_path: Path, option: str) -> None:
    script = tmp_path / "p.swift"
    script.write_text(PRINTS)
    (tmp_path / "link.swift").symlink_to("p.swift")
    for name in ("p.swift", "link.swift", "./sub/../p.swift"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        result = swiftnb(option, name, "p.swift", cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert f"{option} {name} is the script (p.swift): the run would overwrite it" \
            in result.stderr
        assert script.read_text() == PRINTS
    assert not list(tmp_path.glob("run0*"))


@pytest.mark.parametrize("option", ["-logfile", "-pgraph"])
@pytest.mark.parametrize("mapped", ["a.txt", "sub/b.txt", "d/c.out"])
def test_a_run_file_over_a_mapped_output_is_refused(tmp_path: Path, option: str,
                                                    mapped: str) -> None:
    (tmp_path / "m.swift").write_text(MAPS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "d").mkdir()
    result = swiftnb(option, mapped, "m.swift", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"{option} {mapped} is a file the script maps ({mapped})" in result.stderr
    assert not (tmp_path / mapped).exists()


def test_a_run_file_over_the_config_or_restart_log_is_refused(tmp_path: Path) -> None:
    (tmp_path / "p.swift").write_text(PRINTS)
    conf = tmp_path / "swift.conf"
    conf.write_text("lazyErrors: false\n")
    result = swiftnb("-config", "swift.conf", "-logfile", "swift.conf", "p.swift",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "-logfile swift.conf is -config (swift.conf)" in result.stderr
    assert conf.read_text() == "lazyErrors: false\n"


def test_the_run_directorys_log_over_the_script_is_refused(tmp_path: Path) -> None:
    (tmp_path / "p.swift").write_text(PRINTS)
    (tmp_path / "R").mkdir()
    (tmp_path / "R" / "p-R.log").symlink_to("../p.swift")
    result = swiftnb("-runid", "R", "p.swift", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "the run would write its p-R.log over the script p.swift" in result.stderr
    assert (tmp_path / "p.swift").read_text() == PRINTS


# ------------------------------------------------------------------ 3. signals

@pytest.mark.parametrize("name", ["SIGUSR1", "SIGUSR2", "SIGQUIT", "SIGHUP"])
def test_a_warning_signal_stops_the_run_as_sigterm_does(tmp_path: Path, name: str) -> None:
    script, marks = waiting_script(tmp_path)
    run = start("wait.swift", cwd=tmp_path)
    wait_for(marks / "started", run)
    run.send_signal(getattr(signal, name))
    out, err = run.communicate(timeout=120)
    assert run.returncode == 2, err
    assert "Execution interrupted" in err
    restart = tmp_path / "run001" / "wait-run001.0.rlog"
    assert f"Restart log: {restart}" in err
    assert restart.is_file()
    assert not (tmp_path / "swiftwork" / "wait-run001").exists()  # cleaned up
    log = (tmp_path / "run001" / "wait-run001.log").read_text()
    assert "Swift finished with errors" in log
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert f"touch {marks}/started" not in ps  # the app was killed


# ------------------------------------------------------------------ 4. standard streams

@pytest.mark.parametrize("closed", [0, 1, 2])
def test_a_closed_standard_stream_does_not_stop_the_run(tmp_path: Path, closed: int) -> None:
    (tmp_path / "m.swift").write_text(MAPS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "d").mkdir()
    shell = f'"{SWIFTNB}" run m.swift {closed}>&-'
    result = subprocess.run(["sh", "-c", shell], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env=environment(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.txt").read_text() == "hi\n"
    assert "Finished successfully:3" in (tmp_path / "run001" / "swift.out").read_text()


def test_stdout_on_a_full_device_is_an_error_that_names_it(tmp_path: Path) -> None:
    (tmp_path / "p.swift").write_text(PRINTS)
    with open("/dev/full", "w") as full:
        result = subprocess.run([SWIFTNB, "run", "p.swift"], cwd=tmp_path, stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=120,
                                env=environment(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "/dev/full" in result.stderr
    assert "No space left on device" in result.stderr
    no_traceback(result)


# ------------------------------------------------------------------ 5. clear messages

@pytest.fixture
def read_only_dir(tmp_path: Path):
    """A real read-only tmpfs holding the script and an existing run directory."""
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("mounting a read-only tmpfs needs root")
        pytest.skip("mounting a read-only tmpfs needs root")
    where = tmp_path / "ro"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], check=True)
    try:
        (where / "p.swift").write_text(PRINTS)
        (where / "R").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.parametrize("runid", ["R", "NEW", None])
def test_a_read_only_run_directory_is_a_clear_refusal(read_only_dir: Path,
                                                      runid: str | None) -> None:
    args = ["-runid", runid] if runid else []
    result = swiftnb(*args, "p.swift", cwd=read_only_dir)
    assert result.returncode == 1, result.stderr
    assert "Read-only file system" in result.stderr
    assert "Could not start execution" in result.stderr
    no_traceback(result)


def test_a_log_name_that_is_a_directory_is_a_clear_refusal(tmp_path: Path) -> None:
    (tmp_path / "p.swift").write_text(PRINTS)
    (tmp_path / "R" / "p-R.log").mkdir(parents=True)
    result = swiftnb("-runid", "R", "p.swift", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"cannot write the log {tmp_path}/R/p-R.log: it is a directory" in result.stderr
    no_traceback(result)


@pytest.mark.parametrize("option,what", [("-config", "file"), ("-resume", "restart log"),
                                         ("-sites.file", "file")])
def test_a_directory_given_for_a_file_is_said_so(tmp_path: Path, option: str,
                                                 what: str) -> None:
    (tmp_path / "p.swift").write_text(PRINTS)
    (tmp_path / "adir").mkdir()
    result = swiftnb(option, "adir", "p.swift", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"{option} adir: is a directory, not a {what}" in result.stderr


def test_a_pgraph_in_a_missing_directory_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "m.swift").write_text(MAPS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "d").mkdir()
    result = swiftnb("-pgraph", "nosuchdir/g.dot", "m.swift", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "-pgraph nosuchdir/g.dot: the directory nosuchdir does not exist" in result.stderr
    assert not (tmp_path / "a.txt").exists()  # nothing ran
    assert not list(tmp_path.glob("run0*"))


CANCEL = """\
import os, sys
from swiftnb.runner import prepare_run

handle = prepare_run(sys.argv[1], base_dir=".", **({"runid": sys.argv[2]} if len(sys.argv) > 2 else {}))
handle.cancel()
print(handle.status(), handle.done, handle.wait(), handle.exit_code)
"""


@pytest.mark.parametrize("runid", [None, "R"])
def test_cancel_before_the_start_cancels_and_leaves_nothing(tmp_path: Path,
                                                             runid: str | None) -> None:
    (tmp_path / "m.swift").write_text(MAPS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "d").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    result = subprocess.run([sys.executable, "-c", CANCEL, "m.swift", *([runid] if runid else [])],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env=environment(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["canceled", "True", "None", "2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before
