"""Whole runs through the engine: apps as real subprocesses, errors, retries, restart,
foreach limits, hang detection, pgraph, events."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from swiftnb.engine.task import TaskResult

from engine_support import RecordingRestartLog, SubprocessTestExecutor

ECHO_ARGV = f"""
type file;
app (file o) argv(string a[]) {{ "{sys.executable}" "-c" "import sys, json; print(json.dumps(sys.argv[1:]))" a stdout=@o; }}
"""


def test_dataflow_values_and_run_values(swift) -> None:
    r = swift('int c = b; int b = a; int a = 3;\nint x[];\nforeach i in [0:2] { x[i] = i * c; }\n')
    assert r.outcome.ok
    assert r.run.values["c"] == 3
    assert r.run.values["x"] == {0: 0, 1: 3, 2: 6}


def test_app_arguments_are_an_argv_list(swift, tmp_path) -> None:
    src = ECHO_ARGV + 'file o <"argv.out">;\no = argv(["with space", "q\\"uote", "a;b", "1"]);\n'
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert json.loads((tmp_path / "argv.out").read_text()) == ["with space", 'q"uote', "a;b", "1"]
    task = r.executor.tasks[0]
    assert task.outputs == ["argv.out"] and task.stdout == "argv.out"
    assert task.jobid.startswith(os.path.basename(sys.executable).replace(".", "_") + "-")


def test_app_argument_formatting(swift, tmp_path) -> None:
    src = f"""type file;
app (file o) show(float f, int i, boolean b, string s) {{ "{sys.executable}" "-c" "import sys; print(sys.argv[1:])" f i b s stdout=@o; }}
file o <"fmt.out">;
o = show(1.0, 2, true, "s p");
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert (tmp_path / "fmt.out").read_text().strip() == "['1.0', '2', 'true', 's p']"


def test_files_flow_between_apps_and_foreach_outputs(swift, tmp_path) -> None:
    src = """type file;
app (file o) greet(string m) { echo m stdout=@filename(o); }
app (file o) cat2(file a[]) { cat @filenames(a) stdout=@o; }
file g[] <simple_mapper; prefix="g", suffix=".txt">;
foreach i in [0:3] { g[i] = greet(strcat("n", i)); }
file all <"all.txt">;
all = cat2(g);
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert (tmp_path / "all.txt").read_text().split() == ["n0", "n1", "n2", "n3"]
    assert (tmp_path / "g0002.txt").read_text().strip() == "n2"


def test_missing_input_file(swift) -> None:
    src = 'type file;\nfile f <"nonexistent.txt">;\napp (file o) c(file i) { cat @i stdout=@o; }\nfile g <"g.out">;\ng = c(f);\n'
    r = swift(src, lazy_errors=True)
    assert not r.outcome.ok and r.outcome.exit_code == 2
    assert "File not found for variable f: nonexistent.txt" in r.outcome.errors[0]
    assert r.executor.tasks == []


LAZY = """type file;
app (file o) bad() { "false" stdout=@o; }
app (file o) copy(file i) { cat @i stdout=@o; }
app (file o) good(string s) { echo s stdout=@o; }
file a <"a.out">; file b <"b.out">; file c <"c.out">;
a = bad();
b = copy(a);
c = good("fine");
"""


def test_lazy_errors_skip_dependants_and_continue(swift, tmp_path) -> None:
    r = swift(LAZY, lazy_errors=True)
    assert not r.outcome.ok and r.outcome.exit_code == 2
    assert any("Exception in false" in e for e in r.outcome.errors)
    assert "Swift: Application cat not executed due to errors in dependencies" in r.outcome.errors
    assert (tmp_path / "c.out").read_text().strip() == "fine"
    assert [t.tr for t in r.executor.tasks if t.tr == "cat"] == []


def test_without_lazy_errors_the_first_failure_aborts(swift) -> None:
    r = swift(LAZY, lazy_errors=False)
    assert not r.outcome.ok and r.outcome.exit_code == 2
    assert len(r.outcome.errors) == 1 and "Exception in false" in r.outcome.errors[0]


def test_execution_retries_resubmit(swift, tmp_path) -> None:
    src = """type file;
app (file o) flaky() { "sh" "-c" "if [ -e marker ]; then echo ok; else touch marker; exit 1; fi" stdout=@o; }
file o <"flaky.out">;
o = flaky();
"""
    r = swift(src, execution_retries=0)
    assert not r.outcome.ok
    (tmp_path / "marker").unlink()
    r = swift(src, execution_retries=1)
    assert r.outcome.ok, r.outcome.errors
    assert [t.attempt for t in r.executor.tasks] == [0, 1]
    kinds = [e.kind for e in r.events]
    assert kinds.count("APPLICATION_EXCEPTION") == 1 and "END_SUCCESS" in kinds


def test_restart_log_skips_completed_calls(swift, tmp_path) -> None:
    src = """type file;
app (file o) greet(string m) { echo m stdout=@o; }
file a <"a.out">; file b <"b.out">;
a = greet("A");
b = greet("B");
"""
    (tmp_path / "a.out").write_text("A\n")
    log = RecordingRestartLog({"a.out"})
    r = swift(src, restart=log)
    assert r.outcome.ok
    assert [t.args for t in r.executor.tasks] == [["B"]]
    assert log.recorded == ["b.out"]
    assert [e.kind for e in r.events].count("JOB_RESTARTED") == 1


def test_dry_run_submits_nothing(swift, tmp_path) -> None:
    r = swift('type file;\napp (file o) g() { echo "x" stdout=@o; }\nfile o <"o.out">;\no = g();\n',
              dry_run=True)
    assert r.outcome.ok and r.executor.tasks == []
    assert not (tmp_path / "o.out").exists()


def test_max_foreach_threads_bounds_concurrent_iterations(swift) -> None:
    src = """type file;
app (file o) slow(int i) { "sh" "-c" "sleep 0.05; echo $0" i stdout=@o; }
file outs[];
foreach i in [0:11] { outs[i] = slow(i); }
"""
    ex = SubprocessTestExecutor(max_parallel=100)
    r = swift(src, executor=ex, max_foreach_threads=3)
    assert r.outcome.ok, r.outcome.errors
    assert len(ex.tasks) == 12 and ex.max_running <= 3


def test_hang_is_detected(swift) -> None:
    r = swift("int a; int b;\na = b + 1;\nb = a + 1;\ntrace(a);\n")
    assert not r.outcome.ok and r.outcome.exit_code == 99


def test_a_hang_on_an_output_a_procedure_left_unassigned_names_it(swift) -> None:
    """An ``if`` without ``else`` leaves the output open for good: the hang report says
    which output of which procedure, called where, not "an open value"."""
    r = swift("(int r) f(int n) {\n  if (n > 5) { r = 1; }\n}\ntrace(f(3));\n")
    assert not r.outcome.ok and r.outcome.exit_code == 99
    assert r.outcome.errors == ["Deadlock detected: Thread: R-0, waiting on r, the output of f "
                                "(declared on line 1), which ended without assigning it "
                                "(called on line 4)"]


class GateExecutor:
    """Test double: app `A2` blocks until `S` has been submitted, so the run only ends if
    the engine hands out a compound procedure's first output before the procedure ends."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.s_started = asyncio.Event()

    async def submit(self, task):
        name = task.args[0]
        self.order.append(name)
        if name.startswith("S"):
            self.s_started.set()
        if name == "A2":
            await asyncio.wait_for(self.s_started.wait(), 5)
        with open(os.path.join(task.base_dir, task.stdout), "w") as fh:
            fh.write(name)
        return TaskResult(True, 0)

    def app_executable(self, tr: str) -> str | None:
        return tr

    async def close(self) -> None:
        pass


def test_compound_outputs_are_available_before_the_procedure_ends(swift) -> None:
    src = """type file;
app (file o) run(string n) { echo n stdout=@o; }
(file a, file b) A() { a = run("A1"); b = run("A2"); }
file x; file y; file s; file t;
(x, y) = A();
s = run("S1", x);
"""
    src = src.replace('s = run("S1", x);', 's = runx("S1", x);\nt = runx("S2", y);')
    src = src.replace("(file a, file b) A()",
                      'app (file o) runx(string n, file i) { echo n @i stdout=@o; }\n(file a, file b) A()')
    r = swift(src, executor=GateExecutor())
    assert r.outcome.ok, r.outcome.errors
    order = r.executor.order
    assert order.index("S1") < order.index("S2")


def test_pgraph_is_written(swift, tmp_path) -> None:
    src = 'type file;\napp (file o) g(file i) { cat @i stdout=@o; }\nfile a <"a.in">; file b <"b.out">;\nb = g(a);\n'
    (tmp_path / "a.in").write_text("x")
    r = swift(src, pgraph="graph.dot")
    assert r.outcome.ok
    dot = (tmp_path / "graph.dot").read_text()
    assert dot.startswith("digraph") and '"a.in" ->' in dot and '-> "b.out"' in dot


def test_engine_events(swift) -> None:
    r = swift('type file;\napp (file o) g() { echo "x" stdout=@o; }\nfile o <"o.out">;\no = g();\ntrace("t");\n')
    kinds = [e.kind for e in r.events]
    assert kinds[0] == "RUN_START" and kinds[-1] == "RUN_SUCCESS"
    for k in ("JOB_INIT", "PROCEDURE", "JOB_END", "END_SUCCESS", "PROCEDURE_END"):
        assert k in kinds
    init = next(e for e in r.events if e.kind == "JOB_INIT")
    assert list(init.fields) == ["jobid", "tr"] and init["tr"] == "echo"
    assert r.lines == ["SwiftScript trace: t"]


def test_long_iterate_chain(swift) -> None:
    r = swift("int s[];\ns[0] = 0;\niterate i { s[i + 1] = s[i] + 2; } until (i == 3000);\ntrace(s[3000]);\n")
    assert r.outcome.ok, r.outcome.errors
    assert r.lines == ["SwiftScript trace: 6000"]


def test_cancel_stops_running_apps(swift) -> None:
    src = 'type file;\napp (file o) s() { "sleep" "30" stdout=@o; }\nfile o <"o.out">;\no = s();\n'

    class CancelSoon(SubprocessTestExecutor):
        async def submit(self, task):
            asyncio.get_running_loop().call_later(0.2, self.run_obj.cancel)
            return await super().submit(task)

    ex = CancelSoon()
    import swiftnb.engine.run as run_mod

    orig = run_mod.Run.execute

    async def execute(self):
        ex.run_obj = self
        return await orig(self)

    run_mod.Run.execute = execute
    try:
        r = swift(src, executor=ex, timeout=10)
    finally:
        run_mod.Run.execute = orig
    assert not r.outcome.ok


def test_pure_dataflow_creates_no_asyncio_tasks(swift, monkeypatch) -> None:
    import swiftnb.engine.run as run_mod

    spawned: list = []
    orig = run_mod.Run.spawn

    def spawn(self, coro):
        spawned.append(coro)
        return orig(self, coro)

    monkeypatch.setattr(run_mod.Run, "spawn", spawn)
    r = swift("int a[];\nforeach i in [1:5000] { a[i] = i * 2; }\n"
              "(int r) f(int x) { r = x + 1; }\nint s = f(a[5000]);\ntrace(s, length(a));\n")
    assert r.outcome.ok and r.lines == ["SwiftScript trace: 10001, 5000"]
    assert spawned == []


def test_dynamic_output_array_is_filled_from_its_mapper(swift, tmp_path) -> None:
    src = """type file;
file[] a <FilesysMapper; location="outs", pattern="*.out">;
app (file[] oa) gen(int n) {
    "bash" "-c" "mkdir -p outs; for ((i = 0; i < $0; i++)); do echo t > outs/f$i.out; done" n;
}
a = gen(3);
trace(length(a));
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert r.lines == ["SwiftScript trace: 3"]
    assert r.executor.tasks[0].output_globs == ["outs/*.out"]


def test_temporary_file_names_are_the_same_in_every_run(swift) -> None:
    src = """type file;
app (file o) greet(string m) { echo m stdout=@o; }
app (file o) cat1(file i) { cat @i stdout=@o; }
(file r) wrap(string m) { file t = greet(m); r = cat1(t); }
file outs[] <simple_mapper; prefix="tn", suffix=".txt">;
foreach i in [0:3] { outs[i] = cat1(wrap(strcat("w", i))); }
"""
    first = swift(src, max_foreach_threads=2)
    second = swift(src, max_foreach_threads=4)
    assert first.outcome.ok and second.outcome.ok
    names1 = sorted(o for t in first.executor.tasks for o in t.outputs)
    names2 = sorted(o for t in second.executor.tasks for o in t.outputs)
    assert names1 == names2 and len(set(names1)) == 12
    assert all("_concurrent/" in n or n.startswith("tn") for n in names1)


def test_partially_assigned_struct_is_complete_when_its_writers_are_done(swift) -> None:
    r = swift("type S { int a; int b; }\nS s;\ns.a = 1;\ntrace(s);\ntrace(s.a);\n")
    assert r.outcome.ok
    assert sorted(r.lines) == ["SwiftScript trace: 1", "SwiftScript trace: s:S - Closed"]


def test_skipped_branch_fails_its_outputs_instead_of_hanging(swift) -> None:
    src = """type file;
app (file o) bad() { "false" stdout=@o; }
file a <"a.bad">;
a = bad();
string s;
if (length(readData(a)) > 0) { s = "pos"; } else { s = "neg"; }
trace(s);
trace("independent");
"""
    r = swift(src, lazy_errors=True)
    assert r.outcome.exit_code == 2 and r.lines == ["SwiftScript trace: independent"]
    assert len(r.outcome.errors) == 1


def test_jobids_are_unique_and_swift_shaped(tmp_path) -> None:
    import re

    from swiftnb.engine.run import Run, RunSettings
    from swiftnb.events import EventBus
    from swiftnb.lang.parser import parse

    r = Run(parse("int x = 1;\n", "t.swift"), SubprocessTestExecutor(), bus=EventBus(),
            settings=RunSettings(), base_dir=str(tmp_path), run_dir=str(tmp_path / "r"),
            runid="r")
    ids = [r._jobid("/usr/bin/my.tool") for _ in range(20000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"my_tool-[0-9a-vx-z]{8}", i) for i in ids), ids[:3]


def test_failed_assert_in_iterate_ends_the_run_even_with_lazy_errors(swift) -> None:
    src = 'iterate i {\n  trace(i);\n  assert(i != 3, "I_IS_3");\n} until (false);\n'
    for lazy in (False, True):
        r = swift(src, lazy_errors=lazy, timeout=10)
        assert not r.outcome.ok and r.outcome.exit_code == 2
        assert r.lines[-1] == "swift: assert failed: I_IS_3"
        assert r.lines.count("SwiftScript trace: 3") == 1


def test_trace_of_a_failed_value_prints_the_error(swift) -> None:
    src = f"""type file;
app (file o) fail() {{ "{sys.executable}" "-c" "import sys; sys.exit(1)" stdout=@o; }}
int v = readData(fail());
trace("v", v);
trace("ok", 1);
"""
    r = swift(src, lazy_errors=True)
    assert not r.outcome.ok and r.outcome.exit_code == 2
    assert "SwiftScript trace: ok, 1" in r.lines
    failed = [ln for ln in r.lines if ln.startswith("SwiftScript trace: ") and "ok, 1" not in ln]
    assert len(failed) == 1 and "exit code 1" in failed[0], r.lines
    assert "\n" not in failed[0]


class _CollectorWatch(SubprocessTestExecutor):
    """Records the collector's state as each app is submitted (i.e. while the run goes)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[int, int]] = []

    async def submit(self, task):
        import gc

        self.seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return await super().submit(task)


def test_a_run_collects_less_often_and_restores_the_collector(swift) -> None:
    """While a run goes, the youngest generation is collected every 20,000 allocations
    and what existed before the run is frozen out of collections; afterwards Python's
    thresholds are back and nothing stays frozen (a kernel's garbage is still collected)."""
    import gc

    before = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    watch = _CollectorWatch()
    r = swift('app (file o) echo(string s) { echo s stdout=@o; }\n'
              'file f <"f.txt">;\nf = echo("x");\n', executor=watch)
    assert r.outcome.ok, r.outcome
    assert len(watch.seen) == 1
    threshold, frozen = watch.seen[0]
    assert threshold == 20_000 and frozen > frozen_before
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen_before
