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
    assert ip.run_cell("%%swift -e 'trace(2);'\ntrace(1);").result is None
    assert "%%swift: -e: the cell is the script" in capsys.readouterr().err


def test_a_setting_without_effect_is_a_warning_under_the_cell(ip, tmp_path, capsys):
    """A key Swift 0.96 took and did nothing with (a coaster key on the local site): the
    cell runs, and says so."""
    (tmp_path / "c.conf").write_text("site.local.execution.options.maxJobs: 2\n")
    run = cell(ip, "%%swift --no-dashboard -config c.conf\ntrace(1);")
    assert run is not None
    assert cell(ip, "await _").ok
    err = capsys.readouterr().err
    assert "Warning: c.conf:1: site.local.execution.options.maxJobs: a coaster option" in err


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


def test_magic_in_a_real_ipykernel_runs_in_background_and_interrupts(tmp_path):
    """A python3 kernel through jupyter_client: the %%swift cell returns while the run
    goes on; interrupting `await run` cancels the run (the app is killed)."""
    import threading
    import time

    from kernelhelp import CellResult
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))

    def run(code, timeout=60):
        outputs = []
        msg = kc.execute_interactive(code, timeout=timeout, output_hook=lambda m: outputs.append(
            (m["msg_type"], m["content"])))
        return CellResult(msg["content"], outputs)

    try:
        assert run("%load_ext swiftnb").status == "ok"
        pidfile = tmp_path / "pid"
        r = run('%%swift -o r --no-dashboard\ntype file;\n'
                'app (file o) sleeper(string p) { sh "-c" "echo $$ > \\"$0\\"; exec sleep 60" p '
                'stdout=@o; }\nfile z <"z.txt"> = sleeper("PIDFILE");'.replace(
                    "PIDFILE", str(pidfile)))
        assert r.status == "ok", r.reply
        assert "<RunHandle run001: running>" in r.data("text/plain")[0]
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline, "the run did not go on in the background"
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        result = {}
        t = threading.Thread(target=lambda: result.setdefault("r", run("await r", 90)))
        t.start()
        time.sleep(0.5)
        km.interrupt_kernel()
        t.join(60)
        assert result["r"].status == "error"
        for _ in range(200):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the app survived the interrupt")
        r = run("import asyncio\nfor _ in range(100):\n    if r.done: break\n"
                "    await asyncio.sleep(0.1)\nprint(r.status())")
        assert r.stream().strip() == "canceled"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
