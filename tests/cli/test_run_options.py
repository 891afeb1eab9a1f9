"""`swiftnb run` command line: options, properties, script arguments, early exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swiftnb import cli
from swiftnb.cli import parse_run_args

pytestmark = pytest.mark.timeout(60)


def swiftnb(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=50)


def test_options_before_script_and_arguments_after():
    o = parse_run_args(["-lazy.errors", "false", "-execution.retries", "2", "-sites", "a,b",
                        "-runid", "r1", "-logfile", "x.log", "-dryrun", "wf.swift", "-n=5",
                        "-name=a b", "-resume", "wf.rlog"])
    assert o.script == "wf.swift"
    assert o.script_args == ["-n=5", "-name=a b"]
    assert o.values == {"-runid": "r1", "-logfile": "x.log", "-resume": "wf.rlog"}
    assert o.conf == {"lazyErrors": "false", "executionRetries": "2", "sites": "a,b"}
    assert o.flag("-dryrun")


def test_boolean_properties_without_value_mean_true():
    o = parse_run_args(["-sitedir.keep", "-lazy.errors", "wf.swift"])
    assert o.conf == {"keepSiteDir": "true", "lazyErrors": "true"}
    assert o.script == "wf.swift"


def test_swift_conf_keys_and_ticker_disable():
    o = parse_run_args(["-executionRetries", "3", "-ticker.disable", "true", "wf.swift"])
    assert o.conf == {"executionRetries": "3", "tickerEnabled": "false"}


def test_unknown_option_is_a_usage_error_with_a_suggestion():
    r = swiftnb("run", "-lazy.erors", "true", "wf.swift")
    assert r.returncode == 1
    assert "unknown option -lazy.erors (did you mean -lazy.errors?)" in r.stderr
    assert r.stdout == ""


def test_missing_value_is_a_usage_error():
    assert swiftnb("run", "-resume").returncode == 1


def test_no_script_is_a_usage_error():
    r = swiftnb("run", "-dryrun")
    assert r.returncode == 1 and "no SwiftScript program" in r.stderr


def test_missing_script_exit_4(tmp_path):
    r = swiftnb("run", "nope.swift", cwd=tmp_path)
    assert r.returncode == 4
    assert r.stderr.strip() == "SwiftScript program does not exist: nope.swift"
    assert not any(p.name.startswith("run") for p in tmp_path.iterdir())


def test_swift_spelling_without_subcommand(tmp_path):
    r = swiftnb("nope.swift", cwd=tmp_path)
    assert r.returncode == 4


def test_version_and_help():
    r = swiftnb("run", "-version")
    assert r.returncode == 0 and r.stdout.startswith("Swift 0.96.2 swiftnb ")
    r = swiftnb("run", "-help")
    assert r.returncode == 0 and "-resume FILE" in r.stdout and "-name=value" in r.stdout


def test_missing_config_file_is_exit_1(tmp_path):
    (tmp_path / "wf.swift").write_text("int i = 1;\n")
    r = swiftnb("run", "-config", "nope.conf", "wf.swift", cwd=tmp_path)
    assert r.returncode == 1 and "nope.conf" in r.stderr


def test_usage_text_names_every_guide_option():
    for option in ("-typecheck", "-dryrun", "-resume", "-config", "-runid", "-logfile",
                   "-verbose", "-debug", "-sites.file", "-tc.file", "-sites", "-pgraph",
                   "-version", "-help"):
        assert option in cli.RUN_USAGE


def test_a_hanging_run_exits_99_as_documented(tmp_path):
    """docs/running.md's return codes: 99 when the hang detector finds values nothing
    can ever set; the waiting variables are named with their lines."""
    import subprocess
    import sys

    (tmp_path / "hang.swift").write_text("int a;\nint b = a + 1;\na = b;\n")
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "hang.swift"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 99, r.stderr
    assert "Thread: R-0, waiting on a (declared on line 1)" in r.stderr
    assert "Irrecoverable error found. Exiting." in r.stderr


def test_e_runs_the_code_given_on_the_command_line(tmp_path):
    """Swift 0.96's ``-e <string>``: the script's code itself, named ``<string>`` in
    messages; its run directory's files are named ``swift-RUNID`` (Swift's were
    ``<string>-RUNID``)."""
    r = swiftnb("run", "-e", 'type file; app (file o) e (string s) { echo s stdout=@o; }\n'
                'file f <"e.txt">; f = e("made"); trace(1 + 2);', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "SwiftScript trace: 3" in r.stdout
    assert (tmp_path / "e.txt").read_text() == "made\n"
    assert (tmp_path / "run001" / "swift-run001.log").is_file()


def test_e_errors_and_typecheck(tmp_path):
    r = swiftnb("-e", 'int x = "a";', cwd=tmp_path)
    assert r.returncode == 3
    assert "<string>:1:9: You cannot assign value of type string to a variable of type int" \
        in r.stderr
    r = swiftnb("-e", "trace(1", cwd=tmp_path)
    assert r.returncode == 3 and r.stderr.startswith("Could not compile SwiftScript source: <string>:1:8:")
    (tmp_path / "wf.swift").write_text("trace(1);\n")
    r = swiftnb("-e", "trace(2);", "wf.swift", cwd=tmp_path)
    assert r.returncode == 1
    assert "-e and <file> are mutually exclusive" in r.stderr
    assert not any(p.name.startswith("run") for p in tmp_path.iterdir())
    r = swiftnb("-typecheck", "-e", "int x = 1; trace(x);", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("<string>: program is valid.")
    assert "-e CODE" in cli.RUN_USAGE


def test_ui_monitors_that_do_not_exist_here_are_a_warning(tmp_path):
    (tmp_path / "wf.swift").write_text("trace(1);\n")
    r = swiftnb("-ui", "TUI:8000", "wf.swift", cwd=tmp_path)  # -ui http: the web monitor
    assert r.returncode == 0 and "SwiftScript trace: 1" in r.stdout
    assert ("Warning: -ui TUI:8000: swiftnb has no such monitor; the run shows the summary "
            "ticker") in r.stderr
    r = swiftnb("-tui", "wf.swift", cwd=tmp_path)  # stdout a pipe: the ticker (docs/monitors.md)
    assert r.returncode == 0 and ("Warning: -tui: stdout is not a terminal; the run shows the "
                                  "summary ticker") in r.stderr
    r = swiftnb("-ui", "summary", "wf.swift", cwd=tmp_path)
    assert r.returncode == 0 and "Warning" not in r.stderr
    assert "Final status:" in r.stderr


def test_compile_only_compiles_and_does_not_run(tmp_path):
    """Swift/K trunk's ``-compileOnly`` (``-c``): the version line, then exit 0 without a
    run directory; a script that does not compile exits 3."""
    (tmp_path / "wf.swift").write_text('trace("ran");\n')
    for flag in ("-compileOnly", "-c"):
        r = swiftnb(flag, "wf.swift", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("Swift 0.96.2 swiftnb ") and "ran" not in r.stdout
    assert not any(p.name.startswith("run") for p in tmp_path.iterdir())
    (tmp_path / "bad.swift").write_text("trace(1;\n")
    r = swiftnb("-c", "bad.swift", cwd=tmp_path)
    assert r.returncode == 3 and "Could not compile SwiftScript source: bad.swift:1:" in r.stderr
