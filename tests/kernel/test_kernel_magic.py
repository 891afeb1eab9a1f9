"""The %%swift magic in a real IPython shell, running real local runs."""

from __future__ import annotations

import os

import pytest
from IPython.core.interactiveshell import InteractiveShell

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def ip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "swiftnb")
    yield shell
    InteractiveShell.clear_instance()


def cell(ip, code):
    result = ip.run_cell(code)
    assert result.error_in_exec is None and result.error_before_exec is None, result
    return result.result


def test_swift_cell_returns_the_handle_at_once_then_awaits(ip, tmp_path, capsys):
    ip.user_ns["n"] = 4
    run = cell(ip, "%%swift -runid first --no-dashboard -o myrun -- -n={n}\n"
                   'int n = toInt(arg("n"));\nint[] sq;\n'
                   "foreach i in [1:n] { sq[i] = i * i; }\n"
                   'type file;\napp (file o) say(int k) { echo k stdout=@o; }\n'
                   'file f <"say.txt"> = say(sq[n]);\n')
    assert run is ip.user_ns["myrun"]
    assert run.runid == "first"
    outcome = cell(ip, "await myrun")
    assert outcome.ok
    assert run.values["sq"] == {1: 1, 2: 4, 3: 9, 4: 16}
    assert run.outputs == ["say.txt"]
    assert (tmp_path / "say.txt").read_text() == "16\n"
    frame = cell(ip, "myrun.events")
    assert "JOB_END" in set(frame["kind"])
    assert os.path.isdir(tmp_path / "first")


def test_compile_error_is_a_message(ip, capsys):
    assert ip.run_cell("%%swift\nint x = 1;\ntrace(x +);\n").result is None
    err = capsys.readouterr().err
    assert err.startswith("cell:3:10: ")  # lines of the cell as shown, %%swift is 1
    assert "trace(x +);" in err and "Traceback" not in err


def test_bad_options_and_config(ip, capsys):
    assert ip.run_cell("%%swift -sites nosuch\ntrace(1);").result is None
    assert "nosuch" in capsys.readouterr().err
    assert ip.run_cell("%%swift -bogus 1\ntrace(1);").result is None
    assert "unknown option -bogus" in capsys.readouterr().err


def test_swift_config_shows_and_sets(ip, tmp_path, capsys):
    (tmp_path / "my.conf").write_text("sites: [local]\nlazyErrors: true\n")
    ip.run_line_magic("swift_config", "")
    assert "sites" in capsys.readouterr().out
    ip.run_line_magic("swift_config", "my.conf -execution.retries 2")
    out = capsys.readouterr().out
    assert "config file: my.conf" in out and "executionRetries=2" in out
    run = cell(ip, "%%swift --no-dashboard\ntrace(1);")
    assert run.config.lazy_errors is True and run.config.execution_retries == 2
    run.wait() if not run.done else None
    ip.run_line_magic("swift_config", "missing.conf")
    assert "no such file" in capsys.readouterr().err
