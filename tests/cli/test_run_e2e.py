"""`swiftnb run` end to end: real scripts, real app processes, real files."""

from __future__ import annotations

import os
import re

import pytest

from runhelp import needs_engine, run_in_process, run_swiftnb

pytestmark = [pytest.mark.timeout(120), needs_engine]

HELLO = """\
type messagefile;
app (messagefile t) greeting() {
    echo "Hello, world!" stdout=@filename(t);
}
messagefile outfile <"hello.txt">;
outfile = greeting();
"""


@pytest.fixture
def run(monkeypatch, capsys):
    def go(*args, cwd):
        return run_in_process(*args, cwd=cwd, monkeypatch=monkeypatch, capsys=capsys)
    return go


def write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return name


def test_hello_world(tmp_path):
    r = run_swiftnb(write(tmp_path, "hello.swift", HELLO), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "hello.txt").read_text() == "Hello, world!\n"
    lines = r.stderr.splitlines()
    assert re.fullmatch(r"Swift 0\.96\.2 swiftnb \S+", lines[0])
    assert lines[1] == "RunID: run001"
    assert lines[-1].startswith("Final status: ") and lines[-1].endswith("Finished successfully:1")
    assert r.stdout == ""
    run_dir = tmp_path / "run001"
    log = (run_dir / "hello-run001.log").read_text()
    assert " JOB_INIT jobid=echo-" in log and "Swift finished with no errors" in log
    assert re.search(r"TASK_STATUS_CHANGE taskid=urn:\S+ status=7", log)
    assert not list(run_dir.glob("*.rlog")), "restart log is deleted on success"
    assert not (tmp_path / "swiftwork").exists(), "site dir removed without keepSiteDir"
    assert "RunID: run001" in (run_dir / "swift.out").read_text()


def test_trace_goes_to_stdout_only(tmp_path, run):
    script = write(tmp_path, "t.swift", 'trace("a", 1);\nint x = 2;\ntrace(x + 1);\n')
    r = run(script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["SwiftScript trace: 3", "SwiftScript trace: a, 1"]


def test_script_arguments(tmp_path, run):
    script = write(tmp_path, "a.swift", 'string n = arg("name", "none");\ntrace(n);\n')
    r = run(script, "-name=a b;c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "SwiftScript trace: a b;c\n"


def test_args_parses_the_words_of_the_command_line(tmp_path, run):
    """args() sees the words as typed (``-min:3``, ``-n 7``, a bare flag), not a
    ``-name=value`` rebuilding of them."""
    script = write(tmp_path, "a.swift", 'import "stdlib.v2";\n'
                   'string[string] a = args("-min:<int> -n <int> [-normalize]");\n'
                   'trace(a["-min"], a["-n"], a["-normalize"]);\n')
    r = run(script, "-min:3", "-n", "7", "-normalize", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "SwiftScript trace: 3, 7, true\n"


def test_odd_file_names_reach_the_app_as_single_words(tmp_path, run):
    (tmp_path / "in put;'x.txt").write_text("data\n")
    script = write(tmp_path, "odd.swift", """\
type file;
app (file o) copy(file i) {
    cat @i stdout=@o;
}
file a <"in put;'x.txt">;
file b <"out put; rm -rf x.txt">;
b = copy(a);
""")
    r = run(script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out put; rm -rf x.txt").read_text() == "data\n"


def test_failure_shows_command_exit_code_and_stderr(tmp_path, run):
    script = write(tmp_path, "fail.swift", """\
type file;
app (file o) bad(string s) {
    sh "-c" s stdout=@o;
}
file f <"f.txt">;
f = bad("echo oops >&2; exit 3");
""")
    r = run("-lazy.errors", "false", script, cwd=tmp_path)
    assert r.returncode == 2
    assert "Exception in sh:" in r.stderr
    assert "Arguments: [-c, echo oops >&2; exit 3]" in r.stderr
    assert "stderr.txt: oops" in r.stderr
    assert "failed with an exit code of 3" in r.stderr
    assert not (tmp_path / "f.txt").exists()
    assert list((tmp_path / "run001").glob("*.rlog")), "restart log kept after a failure"


def test_missing_output_fails(tmp_path, run):
    script = write(tmp_path, "miss.swift", """\
type file;
app (file o) nothing() {
    echo "nothing";
}
file f <"never.txt">;
f = nothing();
""")
    r = run(script, cwd=tmp_path)
    assert r.returncode == 2
    assert "The following output files were not created by the application: never.txt" in r.stderr


FLAKY = """\
type file;
app (file o) flaky(string marker) {
    sh "-c" "if [ -e $0 ]; then echo second; else touch $0; echo first >&2; exit 1; fi" marker stdout=@o;
}
file f <"f.txt">;
f = flaky(arg("marker"));
"""


def test_execution_retries_rerun_a_failed_call(tmp_path, run):
    script = write(tmp_path, "flaky.swift", FLAKY)
    marker = f"-marker={tmp_path / 'marker'}"
    r = run("-execution.retries", "1", script, marker, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "f.txt").read_text() == "second\n"


def test_without_retries_the_first_failure_counts(tmp_path, run):
    script = write(tmp_path, "flaky.swift", FLAKY)
    r = run("-execution.retries", "0", script, f"-marker={tmp_path / 'marker'}",
                    cwd=tmp_path)
    assert r.returncode == 2
    assert not (tmp_path / "f.txt").exists()


LAZY = """\
type file;
app (file o) run(string s) {
    sh "-c" s stdout=@o;
}
file a <"a.txt">;
file b <"b.txt">;
file c <"c.txt">;
a = run("exit 1");
b = run("sleep 0.5; echo fine");
c = run("echo after");
"""


def test_lazy_errors_true_lets_independent_work_finish(tmp_path, run):
    script = write(tmp_path, "lazy.swift", LAZY)
    r = run("-lazy.errors", "true", script, cwd=tmp_path)
    assert r.returncode == 2
    assert (tmp_path / "b.txt").read_text() == "fine\n"
    assert (tmp_path / "c.txt").read_text() == "after\n"
    assert "The following errors have occurred:" in r.stderr or "Execution failed" in r.stderr


def test_lazy_errors_false_stops_at_the_first_failure(tmp_path, run):
    script = write(tmp_path, "lazy.swift", LAZY.replace('run("echo after")',
                                                        'run("sleep 5; echo after")'))
    r = run("-lazy.errors", "false", script, cwd=tmp_path)
    assert r.returncode == 2
    assert "Execution failed" in r.stderr
    assert not (tmp_path / "c.txt").exists()


def test_keep_site_dir(tmp_path, run):
    r = run("-sitedir.keep", write(tmp_path, "hello.swift", HELLO), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    jobs = [p for p in (tmp_path / "swiftwork" / "hello-run001" / "jobs").glob("*/*") if p.is_dir()]
    assert len(jobs) == 1 and jobs[0].name.startswith("echo-")


def test_runid_and_logfile_options(tmp_path, run):
    script = write(tmp_path, "hello.swift", HELLO)
    r = run("-runid", "myrun", "-logfile", "my.log", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "RunID: myrun" in r.stderr
    assert (tmp_path / "myrun").is_dir() and "RUN_ID myrun" in (tmp_path / "my.log").read_text()
    r = run(script, cwd=tmp_path)
    assert "RunID: run001" in r.stderr  # -runid directories do not count as runNNN


def test_dryrun_runs_no_app(tmp_path, run):
    r = run("-dryrun", write(tmp_path, "hello.swift", HELLO), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "hello.txt").exists()


def test_typecheck_and_compile_error(tmp_path, run):
    r = run("-typecheck", write(tmp_path, "hello.swift", HELLO), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "run001").exists()
    r = run(write(tmp_path, "bad.swift", "int x = ;\n"), cwd=tmp_path)
    assert r.returncode == 3
    assert "bad.swift:1:" in r.stderr


def test_bad_config_is_exit_1_and_names_the_key(tmp_path, run):
    write(tmp_path, "swift.conf", "lazyErors: true\n")
    r = run(write(tmp_path, "hello.swift", HELLO), cwd=tmp_path)
    assert r.returncode == 1
    assert "lazyErors" in r.stderr and "lazyErrors" in r.stderr


def test_unknown_app_is_reported(tmp_path, run):
    script = write(tmp_path, "u.swift", """\
type file;
app (file o) nope() {
    nosuchprogramxyz stdout=@o;
}
file f <"f.txt">;
f = nope();
""")
    r = run(script, cwd=tmp_path)
    assert r.returncode == 2
    assert "Cannot find executable nosuchprogramxyz on site system path" in r.stderr


def test_sigterm_stops_the_run_and_its_apps(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    script = write(tmp_path, "slow.swift", """\
type file;
app (file o) slow(string pidfile) {
    sh "-c" "echo $$ > $0; sleep 30" pidfile stdout=@o;
}
file o <"o.txt">;
o = slow(arg("pidfile"));
""")
    pidfile = tmp_path / "app.pid"
    env = dict(os.environ, HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", script,
                             f"-pidfile={pidfile}"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    app_pid = int(pidfile.read_text())
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    for _ in range(100):
        try:
            os.kill(app_pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the app survived SIGTERM of the run")
    assert list((tmp_path / "run001").glob("*.rlog")), "an interrupted run keeps its restart log"


def test_failure_names_the_script_position(tmp_path, run):
    script = write(tmp_path, "pos.swift", """\
type file;
app (file o) bad() {
    sh "-c" "exit 1" stdout=@o;
}
file f <"f.txt">;
f = bad();
""")
    r = run(script, cwd=tmp_path)
    assert r.returncode == 2
    assert re.search(r"\tat pos\.swift:\d+:\d+", r.stderr), r.stderr


def test_legacy_sites_and_tc_files(tmp_path, run):
    tool = tmp_path / "bin" / "shout.sh"
    tool.parent.mkdir()
    tool.write_text('#!/bin/sh\necho "SHOUT $1"\n')
    tool.chmod(0o755)
    write(tmp_path, "sites.xml", """\
<config>
  <pool handle="localhost">
    <execution provider="local" url="none"/>
    <gridftp url="local://localhost"/>
    <workdirectory>work</workdirectory>
  </pool>
</config>
""")
    write(tmp_path, "tc.data", f"localhost shout {tool} INSTALLED INTEL32::LINUX null\n")
    script = write(tmp_path, "legacy.swift", """\
type file;
app (file o) shout(string s) {
    shout s stdout=@o;
}
file o <"o.txt">;
o = shout("hi");
""")
    r = run("-sites.file", "sites.xml", "-tc.file", "tc.data", "-sitedir.keep", script,
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o.txt").read_text() == "SHOUT hi\n"
    assert (tmp_path / "work" / "legacy-run001" / "jobs").is_dir()  # the pool's workdirectory
    log = (tmp_path / "run001" / "legacy-run001.log").read_text()
    assert "host=localhost" in log


def test_pgraph_writes_a_graphviz_file(tmp_path, run):
    r = run("-pgraph", "g.dot", write(tmp_path, "hello.swift", HELLO), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "digraph" in (tmp_path / "g.dot").read_text()
