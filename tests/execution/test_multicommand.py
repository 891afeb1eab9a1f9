"""Apps of several commands (Swift/K trunk): every command runs, in order, in the one job
directory, each with its own program (through the site's app catalogue), arguments and
redirections; the first that fails ends the job with its exit code and later ones do
not run.  Real ``swiftnb run`` subprocesses on a local site, a local coaster site, the
SSH site of tests/sshd.py and the Slurm of tests/slurm.py (one batch job per call); one
wrapper-level test for the walltime message.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.remote import wrapper

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

#: trunk's tests/multiline/multiline.swift, as the conformance case keeps it
MULTILINE = (Path(__file__).parents[1] / "conformance" / "trunk"
             / "013-multiline.swift").read_text()


def _site_conf(kind: str, marker: str, sshd=None) -> str:
    """swift.conf of one site of ``kind`` whose catalogue maps app ``foo`` to /bin/echo and
    apps ``shA``/``shB`` to /bin/sh with an environment variable each."""
    apps = ('app.foo { executable: "/bin/echo" }\n'
            '    app.shA { executable: "/bin/sh", env.FROM_A: "a" }\n'
            '    app.shB { executable: "/bin/sh", env.FROM_B: "b" }\n'
            '    app.ALL { executable: "*" }')
    if kind == "local":
        return f"""
sites: [local]
site.local {{
    execution {{ type: "local" }}
    workDirectory: "swiftwork"
    {apps}
}}
"""
    if kind == "coaster":
        return f"""
sites: [cluster]
site.cluster {{
    execution {{
        type: "coaster"
        jobManager: "local:local"
        options {{ maxJobs: 1, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "01:00:00" }}
    }}
    staging: "local"
    workDirectory: "swiftwork"
    {apps}
}}
"""
    if kind == "slurm":
        return f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "slurm", options {{ pollInterval: 0.5 }} }}
    workDirectory: "{marker}/swiftwork"
    staging: "swift"
    {apps}
}}
"""
    assert sshd is not None
    return f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{marker}/swiftwork"
    staging: "swift"
    {apps}
}}
"""


class Site:
    """Where a test's scripts run: ``marker`` is a directory the apps may write to by
    absolute path (the login user's on the SSH site)."""

    def __init__(self, kind: str, tmp_path: Path, sshd=None, env=None) -> None:
        self.kind = kind
        self.tmp = tmp_path
        self.sshd = sshd
        self.env = sshd.env() if sshd is not None else env
        self.marker = Path(sshd.remote_work) / tmp_path.name if sshd else tmp_path
        if sshd is not None:  # a directory of this test's own, the login user's
            self.marker.mkdir()
            self.marker.chmod(0o777)
        self.conf = _site_conf(kind, str(self.marker), sshd)

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        (self.tmp / "wf.swift").write_text(script)
        (self.tmp / "swift.conf").write_text(self.conf)
        return subprocess.run([*SWIFTNB, "run", "wf.swift"], cwd=self.tmp, capture_output=True,
                              text=True, timeout=150, check=False,
                              env=self.env)

    def log(self) -> str:
        return next(self.tmp.glob("run*/*.log")).read_text()


@pytest.fixture(params=["local", "coaster", "ssh", "slurm"])
def site(request, tmp_path) -> Site:
    if request.param == "ssh":
        return Site("ssh", tmp_path, request.getfixturevalue("sshd"))
    if request.param == "slurm":
        return Site("slurm", tmp_path, env=request.getfixturevalue("slurm").env())
    return Site(request.param, tmp_path)


def test_trunk_multiline_runs_both_commands(site):
    r = site.run(MULTILINE)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"\d\d:\d\d:\d\d", (site.tmp / "sanity1.out").read_text())  # date
    assert (site.tmp / "sanity1.err").read_text() == ""
    # ls ran in the job directory, where its own redirections were already open
    assert {"sanity2.out", "sanity2.err"} <= set((site.tmp / "sanity2.out").read_text().split())
    assert (site.tmp / "sanity2.err").read_text() == ""
    # the log gives both commands, as trunk's FormatCommands did
    assert re.search(r"JOB_START jobid=\S+ tr=date arguments=\[date, ls\] ", site.log())


def test_commands_run_in_order_in_one_job_directory(site):
    script = """
type file;
app (file o) chain ()
{
    sh "-c" "echo made > made.txt";
    sh "-c" "cat made.txt; echo second" stdout=@o;
}
file out <"chain.txt">;
out = chain();
"""
    r = site.run(script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (site.tmp / "chain.txt").read_text() == "made\nsecond\n"


def test_a_failing_middle_command_fails_the_app_and_stops_the_rest(site):
    script = f"""
type file;
app (file o) three ()
{{
    touch "{site.marker}/first.txt";
    sh "-c" "echo oops >&2; exit 3";
    touch "{site.marker}/third.txt" stdout=@o;
}}
file out <"out.txt">;
out = three();
"""
    r = site.run(script)
    assert r.returncode != 0
    assert "Exception in sh:" in r.stderr, r.stderr
    assert "Arguments: [-c, echo oops >&2; exit 3]" in r.stderr
    assert "stderr.txt: oops" in r.stderr
    assert re.search(r"Caused by: Application \S*/sh failed with an exit code of 3\n"
                     r"\tat \S+\.swift:6:5\n", r.stderr), r.stderr  # the failing command's place
    assert (site.marker / "first.txt").exists()
    assert not (site.marker / "third.txt").exists()
    assert not (site.tmp / "out.txt").exists()


def test_each_command_gets_its_program_from_the_app_catalogue(site):
    script = """
type file;
app (file o, file e) greet ()
{
    echo "first" stdout=@e;
    foo "hello" stdout=@o;
}
file out <"greet.txt">;
file err <"first.txt">;
(out, err) = greet();
"""
    r = site.run(script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (site.tmp / "greet.txt").read_text() == "hello\n"  # app.foo is /bin/echo
    assert (site.tmp / "first.txt").read_text() == "first\n"


def test_the_job_gets_the_environment_of_every_commands_app(site):
    """Trunk's TCProfile: each app's env joins the job's, so every command sees all."""
    script = """
type file;
app (file a, file b) both ()
{
    shA "-c" "echo $FROM_A-$FROM_B" stdout=@a;
    shB "-c" "echo $FROM_A-$FROM_B" stdout=@b;
}
file fa <"a.txt">;
file fb <"b.txt">;
(fa, fb) = both();
"""
    r = site.run(script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (site.tmp / "a.txt").read_text() == "a-b\n"
    assert (site.tmp / "b.txt").read_text() == "a-b\n"


def test_later_commands_add_their_apps_walltime_and_environment():
    from swiftnb.engine.task import AppEntry, Command, later_commands

    catalogue = {"b": AppEntry("/bin/b", {"B": "1", "X": "b"}, 60.0),
                 "c": AppEntry("/bin/c", {"C": "2", "X": "c"}, None),
                 "d": AppEntry("/bin/d", {}, 30.0)}
    commands = (Command("b", []), Command("c", ["x"]), Command("d", []), Command("e", []))
    resolved, env, walltime = later_commands(commands, catalogue.get)
    assert [c.executable for c in resolved] == ["/bin/b", "/bin/c", "/bin/d", None]
    assert env == {"B": "1", "C": "2", "X": "c"}
    assert walltime == 90.0
    assert later_commands((Command("e", []),), catalogue.get)[1:] == ({}, None)


def test_walltime_names_the_command_that_was_running(tmp_path):
    spec = {
        "jobid": "echo-walltime", "tr": "echo", "executable": "echo", "args": ["quick"],
        "base_dir": str(tmp_path), "work_dir": str(tmp_path / "swiftwork"),
        "site_run": "wf-run001", "site": "local", "attempt": 0, "stdin": None,
        "stdout": None, "stderr": None, "inputs": [], "outputs": [], "env": {},
        "keep": False, "walltime": 1.0, "source": "wf.swift:3:5", "scratch": None,
        "output_globs": [], "cdm": {},
        "commands": [{"tr": "sleep", "executable": "sleep", "args": ["30"], "stdin": None,
                      "stdout": None, "stderr": None}],
    }
    result = wrapper.run_job(spec)
    assert result["kind"] == wrapper.KIND_WALLTIME
    assert re.fullmatch(r"Application \S*/sleep exceeded its walltime of 1 seconds and was killed",
                        result["cause"]), result["cause"]
    assert result["message"].startswith("Exception in sleep:\n    Arguments: [30]\n")


#: two local sites: ``one`` lists app ``first`` only, ``two`` lists ``first`` and ``second``
TWO_CATALOGUES = """
sites: [one, two]
site.one {
    execution { type: "local" }
    workDirectory: "work-one"
    app.first { executable: "/bin/echo" }
}
site.two {
    execution { type: "local" }
    workDirectory: "work-two"
    app.first { executable: "/bin/echo" }
    app.second { executable: "/bin/echo" }
}
"""

BOTH_APPS = """
type file;
app (file o) both (int i)
{
    first "one" i;
    second "two" i stdout=@o;
}
foreach i in [1:8] {
    file out <single_file_mapper; file=strcat("out", i, ".txt")>;
    out = both(i);
}
"""


def _run_conf(tmp_path: Path, conf: str, script: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "swift.conf").write_text(conf)
    (tmp_path / "wf.swift").write_text(script)
    return subprocess.run([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=150, check=False)


def test_a_job_goes_only_to_sites_that_have_every_commands_app(tmp_path):
    """Site ``one`` cannot run ``second``: every job of the two commands runs on ``two``."""
    r = _run_conf(tmp_path, TWO_CATALOGUES, BOTH_APPS)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [(tmp_path / f"out{i}.txt").read_text() for i in range(1, 9)] == [
        f"two {i}\n" for i in range(1, 9)]
    log = next(tmp_path.glob("run*/*.log")).read_text()
    hosts = re.findall(r"JOB_START jobid=\S+ tr=first .* host=(\S+)", log)
    assert hosts == ["two"] * 8, hosts


def test_no_one_site_with_every_app_is_the_swift_error(tmp_path):
    conf = TWO_CATALOGUES.replace('    app.first { executable: "/bin/echo" }\n    app.second',
                                  '    app.second')
    r = _run_conf(tmp_path, conf, BOTH_APPS)
    assert r.returncode == 2, r.stdout + r.stderr
    assert 'The applications "first", "second" are not available together on any one site' \
        in r.stderr, r.stderr


def test_a_later_commands_app_missing_from_the_one_sites_catalogue(tmp_path):
    """The one-site path checks every command's app, as the scheduler does.  (The site is
    not ``local``, whose built-in definition lists ``app.ALL``.)"""
    conf = """
sites: [only]
site.only {
    execution { type: "local" }
    workDirectory: "swiftwork"
    app.first { executable: "/bin/echo" }
}
"""
    r = _run_conf(tmp_path, conf, BOTH_APPS)
    assert r.returncode == 2, r.stdout + r.stderr
    assert 'The application "second" is not available on any of the sites' in r.stderr, r.stderr


@pytest.mark.parametrize("link", ["out.txt", "sub"], ids=["name", "directory"])
def test_a_later_commands_redirection_does_not_follow_a_link_out_of_the_job(tmp_path, link):
    """An earlier command left a symbolic link where a later one's stdout goes: the file
    it points to (outside the job directory) is not written; the app fails saying so."""
    from swiftnb.engine.task import Command, Task
    from swiftnb.remote import wrapper

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "out.txt").write_text("precious\n")
    target = str(victim / "out.txt") if link == "out.txt" else str(victim)
    stdout = "out.txt" if link == "out.txt" else "sub/out.txt"
    task = Task(jobid="ln-1", tr="sh", args=["-c", f"rm -rf {link}; ln -s {target} {link}"],
                base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"),
                more_commands=(Command("echo", ["overwritten"], stdout=stdout),))
    result = wrapper.run_job(wrapper.spec_from_task(task))
    assert not result["ok"]
    assert (victim / "out.txt").read_text() == "precious\n"
    assert "symbolic link" in result["message"] and "not followed" in result["message"]
