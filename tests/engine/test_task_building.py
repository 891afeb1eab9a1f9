"""An app call's Task as the engine builds it (engine/taskbuild.py, engine/appplan.py):
every field read back from real runs, so that the per-app plan (literal words worked
out once, the job id's prefix), the Task made by position and the paths named once per
call give what a call always gave."""

from __future__ import annotations

import sys

from swiftnb.engine.task import Task

PY = sys.executable
SHOW = f'"{PY}" "-c" "import sys; print(sys.argv[1:])"'


def test_every_field_of_a_call_with_literals_values_files_and_profiles(swift, tmp_path) -> None:
    (tmp_path / "in1.txt").write_text("a\n")
    (tmp_path / "in2.txt").write_text("b\n")
    src = f"""type file;
app (file o, file e) show(file ins[], float f, int i, boolean b, string s) {{
    {SHOW} "-x" 7 2.50 true "lit eral" f i b s @filenames(ins) stdout=@o stderr=@e;
    profile "maxwalltime" = "00:02:30";
    profile "queue" = strcat("q", i);
}}
file ins[] <array_mapper; files=["in1.txt", "in2.txt"]>;
file o <"sub/out.txt">;
file e <"sub/err.txt">;
(o, e) = show(ins, 1.0, 2, false, "s p");
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    [task] = r.executor.tasks
    assert isinstance(task, Task)
    assert task.tr == PY and task.executable is None and task.attempt == 0
    assert task.args == ["-c", "import sys; print(sys.argv[1:])", "-x", "7", "2.5", "true",
                         "lit eral", "1.0", "2", "false", "s p", "in1.txt", "in2.txt"]
    assert (task.stdin, task.stdout, task.stderr) == (None, "sub/out.txt", "sub/err.txt")
    assert task.inputs == ["in1.txt", "in2.txt"]
    assert task.outputs == ["sub/out.txt", "sub/err.txt"]
    assert task.profiles == {"maxwalltime": "00:02:30", "queue": "q2"}
    assert task.maxwalltime == 150.0
    assert task.env == {} and task.output_globs == [] and task.more_commands == ()
    assert task.source == "test.swift:3:5"
    assert task.thread == "R-1"
    assert task.base_dir == str(tmp_path) and task.run_dir == str(tmp_path / "run001")
    prefix = PY.rsplit("/", 1)[-1].replace(".", "_") + "-"
    assert task.jobid.startswith(prefix) and len(task.jobid) == len(prefix) + 8
    assert (tmp_path / "sub" / "out.txt").read_text().strip() == (
        "['-x', '7', '2.5', 'true', 'lit eral', '1.0', '2', 'false', 's p', 'in1.txt', "
        "'in2.txt']")


def test_mapped_elements_are_named_once_per_call_and_each_call_differs(swift, tmp_path) -> None:
    src = """type file;
app (file o) echo (int i) { echo "n" i @o stdout=@o; }
file f[] <simple_mapper; prefix="out/f", suffix=".txt", padding=3>;
foreach i in [1:40] { f[i] = echo(i); }
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    tasks = sorted(r.executor.tasks, key=lambda t: int(t.args[1]))
    assert len(tasks) == 40
    for i, task in enumerate(tasks, 1):
        name = f"out/f{i:03d}.txt"
        assert task.args == ["n", str(i), name]
        assert task.stdout == name and task.outputs == [name]
    assert len({t.jobid for t in tasks}) == 40
    assert len({t.thread for t in tasks}) == 40
    assert (tmp_path / "out" / "f007.txt").read_text() == "n 7 out/f007.txt\n"


def test_literal_redirections_and_a_body_of_several_commands(swift, tmp_path) -> None:
    (tmp_path / "in.txt").write_text("x\n")
    src = """type file;
app (file o) two (file i, string w) {
    cat stdin="in.txt" stdout=@o;
    echo w "more" stdout=@o;
}
file i <"in.txt">;
file o <"o.txt">;
o = two(i, "word");
"""
    r = swift(src, dry_run=True)
    assert r.outcome.ok, r.outcome.errors
    events = [e for e in r.events if e.kind == "JOB_INIT"]
    assert len(events) == 1 and events[0]["tr"] == "cat"
    # a dry run hands nothing to the executor: build the same call for real
    r = swift(src)
    [task] = r.executor.tasks
    assert (task.tr, task.args, task.stdin, task.stdout, task.stderr) == (
        "cat", [], "in.txt", "o.txt", None)
    [second] = task.more_commands
    assert (second.tr, second.args, second.stdin, second.stdout, second.stderr) == (
        "echo", ["word", "more"], None, "o.txt", None)
    assert second.source == "test.swift:4:5"
