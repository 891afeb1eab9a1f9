"""What a Swift 0.96 user sees from ``swiftnb run``: console text, return codes, files.

Each scenario is a folder of files and one or more ``.venv/bin/swiftnb run ...`` command
lines, run as real subprocesses; all scenarios start at once on a small thread pool
(module fixture) and each test checks one scenario's results.  The expected texts are
Swift 0.96's (reference sections 2.6, 2.7, 4, 5; User Guide 4.1, 10, 16).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SWIFTNB = ROOT / ".venv" / "bin" / "swiftnb"
if not SWIFTNB.exists():
    SWIFTNB = Path(shutil.which("swiftnb") or SWIFTNB)

pytestmark = pytest.mark.timeout(180)

HELLO = """\
type file;
app (file o) greet(string s) { echo s stdout=@o; }
file f <"hello.txt">;
f = greet("hi there");
trace("done", 1, 2.0);
"""

FAIL = """\
type file;
app (file o) bad() { sh "-c" "echo oops >&2; exit 3" stdout=@o; }
file f <"f.txt">;
f = bad();
"""

NO_EXE = """\
type file;
app (file o) nx() { no_such_prog_xyz "a" stdout=@o; }
file f <"g.txt">;
f = nx();
"""

NO_INPUT = """\
type file;
app (file o) cp(file i) { cat @i stdout=@o; }
file i <"missing-input.txt">;
file o <"o.txt">;
o = cp(i);
"""

NO_OUTPUT = """\
type file;
app (file o) t() { sh "-c" "echo hi"; }
file o <"never.txt">;
o = t();
"""

DEPENDANTS = """\
type file;
app (file o) bad() { sh "-c" "exit 1" stdout=@o; }
app (file o) cp(file i) { cat @i stdout=@o; }
app (file o) good() { echo "independent" stdout=@o; }
file a <"dep-a.txt">;
a = bad();
file b[] <simple_mapper; prefix="dep-b", suffix=".txt">;
foreach i in [0:2] { b[i] = cp(a); }
file g <"good.txt">;
g = good();
"""

ARGS = """\
string a = arg("a", "defA");
string b = arg("b");
int n = toInt(arg("n", "3"));
trace(a, b, n);
"""

ASSERT = """\
int x = 3;
assert(x == 4, "x is not four");
"""

IO = """\
type file;
app (file o, file e) both(file i) { sh "-c" "cat; echo err-text >&2" stdin=@i stdout=@o stderr=@e; }
app (file o) catall(file fs[]) { cat @filenames(fs) stdout=@o; }
app (file o) words(string a, string b, string c) { sh "-c" "printf '[%s]\\n' \\"$@\\"" "x" a b c stdout=@o; }
file i <"in.txt">;
file o <"outdir/sub/o.txt">;
file e <"outdir/e.txt">;
(o, e) = both(i);
file fs[] <filesys_mapper; location="indir", pattern="*.txt">;
file all <"all.txt">;
all = catall(fs);
file w <"words.txt">;
w = words("a b", "it's \\"q\\"", "x;y");
trace(filenames(fs));
"""

ENV = """\
type file;
app (file o) envy() { sh "-c" "echo FOO=$FOO" stdout=@o; }
file ev <"env.txt">;
ev = envy();
"""

ENV_CONF = """\
site.local {
  execution { type: local }
  filesystem { type: local }
  workDirectory: "swiftwork"
  app.sh { executable: "/bin/sh", env.FOO: "from-conf" }
  app.ALL { executable: "*" }
}
sites: [local]
"""

SITES_XML = """\
<config>
  <pool handle="local">
    <execution provider="local" />
    <filesystem provider="local" />
    <workdirectory>swiftwork</workdirectory>
  </pool>
</config>
"""

TC_DATA = 'local sh /bin/sh INSTALLED INTEL32::LINUX env::FOO="from-tc"\n'

FLAKY = """\
type file;
app (file o) flaky(string marker) {
    sh "-c" "if [ -e $0 ]; then echo second; else touch $0; exit 1; fi" marker stdout=@o;
}
file f <"f.txt">;
f = flaky(arg("marker"));
"""

SYNTAX = "int a = 1\nint b = 2;\n"

SEMANTIC = "int a = 1;\na = 2;\n"

#: name -> (files, command lines); the lines of one scenario run in order, in one folder
#: (``{work}`` in a word is that folder's absolute path)
SCENARIOS: dict[str, tuple[dict[str, str], list[list[str]]]] = {
    "hello": ({"hello.swift": HELLO}, [["hello.swift"], ["hello.swift"]]),
    "fail": ({"fail.swift": FAIL}, [["fail.swift"]]),
    "noexe": ({"noexe.swift": NO_EXE}, [["noexe.swift"]]),
    "noinput": ({"noin.swift": NO_INPUT}, [["noin.swift"]]),
    "nooutput": ({"noout.swift": NO_OUTPUT}, [["noout.swift"]]),
    "dependants": ({"dep.swift": DEPENDANTS}, [["dep.swift"]]),
    "eager": ({"dep.swift": DEPENDANTS}, [["-lazyErrors", "false", "dep.swift"]]),
    "eager-prop": ({"dep.swift": DEPENDANTS}, [["-lazy.errors", "false", "dep.swift"]]),
    "syntax": ({"syn.swift": SYNTAX}, [["syn.swift"], ["-typecheck", "syn.swift"]]),
    "semantic": ({"sem.swift": SEMANTIC, "imp.swift": 'import "nomod";\ntrace(1);\n'},
                 [["sem.swift"], ["imp.swift"]]),
    "missing": ({}, [["nothere.swift"], ["-typecheck", "nothere.swift"]]),
    "badopts": ({"hello.swift": HELLO}, [["-foo", "hello.swift"], ["hello.swift", "-runid"],
                                          []]),
    "dryrun": ({"hello.swift": HELLO}, [["-dryrun", "hello.swift"]]),
    "typecheck": ({"hello.swift": HELLO}, [["-typecheck", "hello.swift"]]),
    "resume-bad": ({"hello.swift": HELLO, "bad.rlog": "garbage\n"},
                   [["-resume", "nope.rlog", "hello.swift"], ["-resume", "bad.rlog", "hello.swift"]]),
    "badconf": ({"hello.swift": HELLO, "swift.conf": "sites: local\nlazyErorrs: true\n"},
                [["hello.swift"]]),
    "badconf-option": ({"hello.swift": HELLO, "c.conf": "site.local { maxParallelTask: 3 }\n"},
                       [["-config", "c.conf", "hello.swift"]]),
    "args": ({"args.swift": ARGS}, [["args.swift", "-b=hello", "-n=7"],
                                    ["args.swift", "-b=a b;c", "-a=x=y"],
                                    ["args.swift"]]),
    "assert": ({"as.swift": ASSERT}, [["as.swift"]]),
    "io": ({"io.swift": IO, "in.txt": "from stdin\n", "indir/a.txt": "line1\n",
            "indir/b.txt": "line2\n"}, [["io.swift"]]),
    "env-conf": ({"env.swift": ENV, "env.conf": ENV_CONF}, [["-config", "env.conf", "env.swift"]]),
    "env-legacy": ({"env.swift": ENV, "sites.xml": SITES_XML, "tc.data": TC_DATA},
                   [["-sites.file", "sites.xml", "-tc.file", "tc.data", "env.swift"]]),
    "retries": ({"flaky.swift": FLAKY}, [["-executionRetries", "1", "flaky.swift",
                                          "-marker={work}/marker"]]),
    "no-retries": ({"flaky.swift": FLAKY}, [["flaky.swift", "-marker={work}/marker"]]),
    "runid-logfile": ({"fail.swift": FAIL}, [["-runid", "myrun", "-logfile", "logs/my.log",
                                              "fail.swift"],
                                             ["-resume", "myrun/fail-myrun.0.rlog", "fail.swift"]]),
    # -cdmfile names a policy file, which must exist (a missing one is a usage error)
    "options-096": ({"hello.swift": HELLO, "fs.data": "# CDM policy\nrule .* DEFAULT\n"},
                    [["-reducedLogging", "-minimalLogging", "-pauseOnStart", "-cdmfile", "fs.data",
                      "-mappingCheckerEnabled", "-fileGCEnabled", "hello.swift"],
                     ["-listconfig", "files"], ["-sitelist"], ["-ui", "none", "hello.swift"]]),
}


def _run_scenario(name: str, base: Path) -> tuple[Path, list[subprocess.CompletedProcess]]:
    files, commands = SCENARIOS[name]
    work = base / name
    work.mkdir(parents=True)
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = dict(os.environ)
    env.pop("SWIFT_SITE_CONF", None)
    env["HOME"] = str(work)  # no ~/.swift/swift.conf of the developer's
    results = []
    for argv in commands:
        argv = [a.replace("{work}", str(work)) for a in argv]
        results.append(subprocess.run([str(SWIFTNB), "run", *argv], cwd=work,
                                      capture_output=True, text=True, timeout=60, env=env))
    return work, results


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("compat")
    pool = ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) * 2))
    futures = {name: pool.submit(_run_scenario, name, base) for name in SCENARIOS}

    def get(name: str) -> tuple[Path, list[subprocess.CompletedProcess]]:
        return futures[name].result(timeout=170)

    yield get
    pool.shutdown(wait=False, cancel_futures=True)


def _detail(r: subprocess.CompletedProcess) -> str:
    return f"\n--- rc {r.returncode}\n--- stdout ---\n{r.stdout}\n--- stderr ---\n{r.stderr}"


FINAL = re.compile(r"Final status: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d[+-]\d{4}(  \S[^:]*:\d+)*$")


def test_banner_ticker_and_run_directories(runs):
    work, (first, second) = runs("hello")
    assert first.returncode == 0, _detail(first)
    assert first.stdout == "SwiftScript trace: done, 1, 2.0\n"
    lines = first.stderr.splitlines()
    assert re.fullmatch(r"Swift 0\.96\.2 \S.*", lines[0]), _detail(first)
    assert lines[1] == "RunID: run001"
    assert FINAL.fullmatch(lines[-1]) and lines[-1].endswith("  Finished successfully:1")
    assert "RunID: run002" in second.stderr
    assert (work / "hello.txt").read_text() == "hi there\n"
    log = (work / "run001" / "hello-run001.log").read_text()
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}[+-]\d{4} INFO  Loader ", log)
    assert "INFO  Loader RUN_ID run001" in log and "Swift finished with no errors" in log
    assert "WARN  trace SwiftScript trace: done, 1, 2.0" in log
    out = (work / "run001" / "swift.out").read_text()
    assert "RunID: run001" in out and "SwiftScript trace: done, 1, 2.0" in out
    assert not list((work / "run001").glob("*.rlog")), "the restart log goes on success"


def test_app_exit_code_is_reported_as_swift_did(runs):
    work, (r,) = runs("fail")
    assert r.returncode == 2, _detail(r)
    assert r.stdout == ""
    err = r.stderr
    for text in ("The following errors have occurred:\n1. Exception in sh:\n",
                 "    Arguments: [-c, echo oops >&2; exit 3]\n", "    Host: local\n",
                 "    Directory: fail-run001/jobs/s/sh-", "    stderr.txt: oops\n",
                 "Caused by: Application /", "failed with an exit code of 3\n",
                 "\nExecution failed:\nExecution completed with errors\n"):
        assert text in err, text + _detail(r)
    assert FINAL.fullmatch([ln for ln in err.splitlines() if ln.startswith("Final")][0])
    assert "  Failed:1" in err
    assert not (work / "f.txt").exists()
    assert list((work / "run001").glob("fail-run001.*.rlog")), "restart log kept on failure"
    assert "Swift finished with errors" in (work / "run001" / "fail-run001.log").read_text()


def test_missing_executable(runs):
    _, (r,) = runs("noexe")
    assert r.returncode == 2, _detail(r)
    assert "Caused by: Cannot find executable no_such_prog_xyz on site system path" in r.stderr


def test_missing_input_file(runs):
    work, (r,) = runs("noinput")
    assert r.returncode == 2, _detail(r)
    assert "1. File not found for variable i: missing-input.txt" in r.stderr, _detail(r)
    assert "Swift: Application cat not executed due to errors in dependencies" in r.stderr
    assert not (work / "o.txt").exists()


def test_mapped_output_not_created(runs):
    _, (r,) = runs("nooutput")
    assert r.returncode == 2, _detail(r)
    assert ("Caused by: The following output files were not created by the application: "
            "never.txt") in r.stderr


def test_lazy_errors_list_counts_repeated_messages(runs):
    work, (r,) = runs("dependants")
    assert r.returncode == 2, _detail(r)
    assert ("2. Swift: Application cat not executed due to errors in dependencies (3 times)\n"
            in r.stderr), _detail(r)
    assert "\n3. " not in r.stderr
    assert (work / "good.txt").read_text() == "independent\n"


@pytest.mark.parametrize("scenario", ["eager", "eager-prop"])
def test_lazy_errors_off_reports_the_first_failure_only(runs, scenario):
    _, (r,) = runs(scenario)
    assert r.returncode == 2, _detail(r)
    assert "Execution failed:\nException in sh:\n" in r.stderr, _detail(r)
    assert "The following errors have occurred" not in r.stderr
    assert "not executed due to errors in dependencies" not in r.stderr


def test_compile_error_and_typecheck(runs):
    work, (run, check) = runs("syntax")
    assert run.returncode == 3, _detail(run)
    assert run.stderr.startswith("Could not compile SwiftScript source: syn.swift:1:")
    assert check.returncode == 3, _detail(check)
    assert "syn.swift:1:" in check.stderr
    assert not list(work.glob("run*")), "no run directory for a script that does not compile"


def test_semantic_errors_could_not_start_execution(runs):
    """Swift 0.96's Loader: a script that parses but fails its checks is "Could not start
    execution" + the tab-indented causes (reference 2.5).  The exit code is the Guide's
    compile error, 3, as for syntax errors (0.96 itself exited 1; docs/running.md)."""
    work, (sem, imp) = runs("semantic")
    assert sem.returncode == 3, _detail(sem)
    assert sem.stderr.startswith("Could not start execution:\n\tsem.swift:2:1: Variable a is "
                                 "written to in two different locations"), _detail(sem)
    assert imp.returncode == 3, _detail(imp)
    assert ("Could not start execution:\n\timp.swift:1:1: When processing import nomod: "
            "nomod.swift (No such file or directory)") in imp.stderr
    assert not list(work.glob("run*"))


def test_missing_script_is_exit_4(runs):
    work, (run, check) = runs("missing")
    for r in (run, check):
        assert r.returncode == 4, _detail(r)
        assert "SwiftScript program does not exist: nothere.swift" in r.stderr
    assert not list(work.glob("run*"))


def test_bad_command_lines_are_exit_1(runs):
    work, (unknown, no_value, nothing) = runs("badopts")
    assert unknown.returncode == 1 and "unknown option -foo" in unknown.stderr, _detail(unknown)
    assert no_value.returncode == 1 and "-runid" in no_value.stderr, _detail(no_value)
    assert nothing.returncode == 1 and "no SwiftScript program specified" in nothing.stderr
    assert not list(work.glob("run*"))


def test_dryrun_and_typecheck_run_no_app(runs):
    work, (r,) = runs("dryrun")
    assert r.returncode == 0, _detail(r)
    assert r.stdout == "SwiftScript trace: done, 1, 2.0\n"
    assert not (work / "hello.txt").exists()
    work, (r,) = runs("typecheck")
    assert r.returncode == 0, _detail(r)
    assert r.stdout.startswith("hello.swift: ")
    assert not (work / "hello.txt").exists() and not list(work.glob("run*"))


def test_resume_with_a_bad_file(runs):
    _, (missing, garbage) = runs("resume-bad")
    assert missing.returncode == 1 and "nope.rlog" in missing.stderr, _detail(missing)
    assert garbage.returncode == 1, _detail(garbage)
    assert "Could not start execution:\n\tbad.rlog is not a Swift restart log" in garbage.stderr


def test_wrong_config_key_names_it_and_suggests(runs):
    work, (r,) = runs("badconf")
    assert r.returncode == 1, _detail(r)
    assert r.stderr.startswith("Could not start execution:\n\t")
    assert "lazyErorrs" in r.stderr and "lazyErrors" in r.stderr
    assert not list(work.glob("run*"))
    _, (r,) = runs("badconf-option")
    assert r.returncode == 1, _detail(r)
    assert "maxParallelTask" in r.stderr and "maxParallelTasks" in r.stderr


def test_script_arguments(runs):
    _, (given, odd, missing) = runs("args")
    assert given.returncode == 0, _detail(given)
    assert given.stdout == "SwiftScript trace: defA, hello, 7\n"
    assert odd.stdout == "SwiftScript trace: x=y, a b;c, 3\n", _detail(odd)
    assert missing.returncode == 2, _detail(missing)
    assert "Missing command line argument: b" in missing.stderr


def test_failed_assert_ends_a_lazy_run_with_its_message(runs):
    _, (r,) = runs("assert")
    assert r.returncode == 2, _detail(r)
    assert "swift: assert failed: x is not four" in r.stdout + r.stderr
    assert "Execution failed:\nx is not four\n\tassert @ as.swift, line: 2\n" in r.stderr, _detail(r)
    assert "The following errors have occurred" not in r.stderr


def test_stdin_stderr_subdirectories_file_arrays_and_odd_words(runs):
    work, (r,) = runs("io")
    assert r.returncode == 0, _detail(r)
    assert (work / "outdir" / "sub" / "o.txt").read_text() == "from stdin\n"
    assert (work / "outdir" / "e.txt").read_text() == "err-text\n"
    assert (work / "all.txt").read_text() == "line1\nline2\n"
    assert (work / "words.txt").read_text() == "[a b]\n[it's \"q\"]\n[x;y]\n"
    assert r.stdout == "SwiftScript trace: {0 = indir/a.txt, 1 = indir/b.txt}\n"


def test_env_profiles_from_swift_conf_and_tc_data(runs):
    work, (r,) = runs("env-conf")
    assert r.returncode == 0, _detail(r)
    assert (work / "env.txt").read_text() == "FOO=from-conf\n"
    work, (r,) = runs("env-legacy")
    assert r.returncode == 0, _detail(r)
    assert (work / "env.txt").read_text() == "FOO=from-tc\n"


def test_execution_retries_in_the_096_spelling(runs):
    work, (r,) = runs("retries")
    assert r.returncode == 0, _detail(r)
    assert (work / "f.txt").read_text() == "second\n"
    work, (r,) = runs("no-retries")
    assert r.returncode == 2, _detail(r)
    assert not (work / "f.txt").exists()


def test_runid_logfile_and_resume_append(runs):
    work, (first, again) = runs("runid-logfile")
    assert first.returncode == 2 and "RunID: myrun" in first.stderr, _detail(first)
    assert "RUN_ID myrun" in (work / "logs" / "my.log").read_text()
    assert not (work / "myrun" / "fail-myrun.log").exists()
    assert again.returncode == 2 and "RunID: run001" in again.stderr, _detail(again)
    rlog = (work / "myrun" / "fail-myrun.0.rlog").read_text().splitlines()
    assert rlog[:2][1] == "# Format version 2.0" and rlog[-1].startswith("# Log file updated ")
    assert not list((work / "run001").glob("*.rlog")), "a resumed run appends to the old log"


def test_swift_096_option_spellings(runs):
    work, (r, files, sites, quiet) = runs("options-096")
    assert r.returncode == 0, _detail(r)
    assert (work / "hello.txt").read_text() == "hi there\n"
    levels = {line[29:34] for line in (work / "run001" / "hello-run001.log").read_text().splitlines()}
    assert levels == {"WARN "}, "-minimalLogging: only WARN lines (the trace) in the log"
    assert files.returncode == 0 and files.stdout.startswith("[D] "), _detail(files)
    assert sites.returncode == 0 and sites.stdout == "Available sites: \n\tlocal\n", _detail(sites)
    assert quiet.returncode == 0 and "Final status" not in quiet.stderr, _detail(quiet)
