"""Swift cells in the real kernel: what persists across cells, re-running, Python
interplay, errors as messages, runtime failures, interrupt."""

from __future__ import annotations

import os
import threading
import time

import pytest

from kernelhelp import Kernel

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("kcells")
    k = Kernel(str(cwd))
    k.cwd = cwd
    yield k
    k.close()


def test_declarations_and_values_persist(kernel):
    r = kernel.run('type file;\n'
                   '// say something into a file\n'
                   'app (file o) greet(string s) { echo s stdout=@o; }\n'
                   'int n = 3;\n')
    assert r.status == "ok", r.errors
    r = kernel.run('file f <"greeting.txt">;\nf = greet("hi " + n);\nint[] a = [1, n];\n'
                   'trace(a[1]);')
    assert r.status == "ok", r.errors
    assert "SwiftScript trace: 3" in r.stream()
    assert (kernel.cwd / "greeting.txt").read_text() == "hi 3\n"
    # the app does not run again: the value of f is reused
    os.remove(kernel.cwd / "greeting.txt")
    r = kernel.run("trace(filename(f), a[0] + n);")
    assert r.status == "ok", r.errors
    assert "SwiftScript trace: greeting.txt, 4" in r.stream()
    assert not (kernel.cwd / "greeting.txt").exists()


def test_rerunning_a_cell_replaces_its_declarations(kernel):
    cell = 'app (file o) shout(string s) { echo s stdout=@o; }\nstring word = "one";\n'
    assert kernel.run(cell).status == "ok"
    assert kernel.run(cell).status == "ok"  # not "already defined"
    r = kernel.run('app (file o) shout(string s) { echo "LOUD" s stdout=@o; }\n'
                   'string word = "two";\nfile w <"shout.txt"> = shout(word);')
    assert r.status == "ok", r.errors
    assert (kernel.cwd / "shout.txt").read_text() == "LOUD two\n"


def test_overloads_declared_in_several_cells_are_all_kept(kernel):
    # trunk overloads by argument types: a later cell's f(float) adds to the f(int) of
    # an earlier cell; f(int) declared again replaces that one declaration only
    assert kernel.run('(string r) kind(int x) { r = "int " + x; }').status == "ok"
    assert kernel.run('// the float one\n'
                      '(string r) kind(float x) { r = "float"; }').status == "ok"
    r = kernel.run("trace(kind(1), kind(1.5));")
    assert r.status == "ok", r.errors
    assert "SwiftScript trace: int 1, float" in r.stream()
    r = kernel.run('(string r) kind(int y) { r = "new int " + y; }\n'
                   "trace(kind(2), kind(2.5));")
    assert r.status == "ok", r.errors
    assert "SwiftScript trace: new int 2, float" in r.stream()
    assert kernel.run("trace(kind(3));").stream().strip() == "SwiftScript trace: new int 3"
    r = kernel.run("trace(kind(true));")
    assert r.status == "error"
    text = "\n".join(r.errors[0]["traceback"])
    assert "No function or procedure kind matches the argument types kind(boolean)" in text
    assert "(string r) kind(int y) at cell:1" in text
    assert "(string r) kind(float x) at cell:2" in text
    assert "kind(int x)" not in text
    r = kernel.run("%who")
    assert [ln for ln in r.stream().splitlines() if " kind " in ln] == [
        "(string r) kind (int y)", "(string r) kind (float x)"]
    shown = kernel.kc.inspect("kind", 2, reply=True, timeout=60)["content"]
    assert shown["found"]
    text = shown["data"]["text/plain"]
    assert "(string r) kind (int y)" in text and "(string r) kind (float x)" in text
    assert "the float one" in text and "kind (int x)" not in text


def test_swift_values_in_python_and_back(kernel):
    r = kernel.run('int k = 6;\nfloat[] xs = [1.5, 2.5];\nstring[string] m;\nm["a"] = "b";')
    assert r.status == "ok", r.errors
    r = kernel.run("%%python\nprint(k * 7, xs, m, swift_run.ok)")
    assert r.stream().strip() == "42 {0: 1.5, 1: 2.5} {'a': 'b'} True"
    r = kernel.run('%python py_n = 5\n%python py_list = ["x", "y"]\n'
                   'trace(py_n * k, py_list[1]);')
    assert r.status == "ok", r.errors
    assert "SwiftScript trace: 30, y" in r.stream()


def test_compile_errors_are_messages_with_cell_positions(kernel):
    r = kernel.run('int good = 1;\ntrace(good + );\n')
    assert r.status == "error"
    (err,) = r.errors
    text = "\n".join(err["traceback"])
    assert text.startswith("cell:2:14: ")
    assert "trace(good + );" in text
    assert "Traceback" not in text and "File \"" not in text
    # the failed cell declared nothing
    r = kernel.run("trace(good);")
    assert r.status == "error"
    assert "cell:1:7" in r.errors[0]["traceback"][0]


def test_runtime_failure_reports_the_app(kernel):
    r = kernel.run('app (file o) fails() { sh "-c" "echo bad >&2; exit 3" stdout=@o; }\n'
                   'file out <"never.txt"> = fails();')
    assert r.status == "error"
    text = "\n".join(r.errors[0]["traceback"])
    assert "exit code of 3" in text and "bad" in text
    assert "Traceback" not in text


def test_interrupt_cancels_the_run(kernel):
    pidfile = kernel.cwd / "sleeper.pid"
    code = ('app (file o) sleeper(string p) { sh "-c" "echo $$ > \\"$0\\"; exec sleep 60" p '
            'stdout=@o; }\nfile z <"z.txt"> = sleeper("%s");' % pidfile)
    result = {}

    def go():
        result["r"] = kernel.run(code, timeout=90)

    t = threading.Thread(target=go)
    t.start()
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    kernel.km.interrupt_kernel()
    t.join(60)
    assert not t.is_alive()
    r = result["r"]
    assert r.status == "error"
    assert r.reply["ename"] == "KeyboardInterrupt"
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the app survived the interrupt")
    # the log says so, and the kernel goes on
    r = kernel.run("%python print(open(swift_run.log_path).read())")
    assert "Execution interrupted by the user" in r.stream()
    assert kernel.run('trace("still here");').status == "ok"


def test_dashboard_under_a_cell_when_widgets_exist(kernel):
    pytest.importorskip("swiftnb.widgets")
    assert kernel.run("%swift_config --dashboard").status == "ok"
    try:
        r = kernel.run('app (external o) say(string s) { echo s; }\n'
                       'external e = say("watched");')
        assert r.status == "ok", r.errors
        assert r.data("application/vnd.jupyter.widget-view+json"), r.outputs
    finally:
        assert kernel.run("%swift_config --no-dashboard").status == "ok"


def test_user_expressions_see_swift_values(kernel):
    msg_id = kernel.kc.execute("int ue = 21;", user_expressions={"twice": "ue * 2"})
    reply = kernel.kc.get_shell_msg(timeout=60)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=60)
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["user_expressions"]["twice"]["data"]["text/plain"] == "42"
