"""Temporary files are deleted when the scope that declared them ends (Swift's
cleanDataset / fileGCEnabled), unless something still refers to them; files of user
mappings never are."""

from __future__ import annotations

from pathlib import Path

GEN = 'type file;\napp (file o) gen (string s) { echo s stdout=@o; }\n'


def _concurrent(tmp_path: Path) -> list[str]:
    d = tmp_path / "run001" / "_concurrent"
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()) if d.exists() else []


def test_foreach_temporaries_go_and_user_mapped_outputs_stay(swift, tmp_path) -> None:
    src = GEN + """app (file o) cat (file i) { cat @i stdout=@o; }
file outs[] <simple_mapper; prefix="o", suffix=".txt">;
foreach i in [0:2] {
  file t = gen(strcat("x", i));
  outs[i] = cat(t);
}
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert len(r.executor.tasks) == 6
    assert _concurrent(tmp_path) == []
    assert [(tmp_path / f"o000{i}.txt").read_text() for i in range(3)] == ["x0\n", "x1\n", "x2\n"]


def test_values_stored_outside_or_returned_survive_their_scope(swift, tmp_path) -> None:
    src = GEN + """file keep[];
file dropped[];
(file r) wrap (string s) { file t = gen(s); r = t; }
(file r[]) many () { file a[]; foreach j in [0:1] { a[j] = gen(strcat("m", j)); } r = a; }
foreach i in [0:2] {
  file t = gen(strcat("k", i));
  file u = gen(strcat("u", i));
  keep[i] = t;
}
file w = wrap("w");
file ms[] = many();
foreach m, k in ms { trace("m", k, readData(m)); }
foreach f, i in keep { trace("k", i, readData(f)); }
trace("w", readData(w));
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert sorted(r.lines) == ["SwiftScript trace: k, 0, k0", "SwiftScript trace: k, 1, k1",
                               "SwiftScript trace: k, 2, k2", "SwiftScript trace: m, 0, m0",
                               "SwiftScript trace: m, 1, m1", "SwiftScript trace: w, w"]
    left = _concurrent(tmp_path)
    # the three u files went with their iterations; t (in keep), w's and many's stay
    assert len(left) == 6, left
    assert all(not name.startswith("u-") for name in left), left
    contents = sorted((tmp_path / "run001" / "_concurrent" / n).read_text() for n in left)
    assert contents == ["k0\n", "k1\n", "k2\n", "m0\n", "m1\n", "w\n"]


def test_a_temporary_that_took_a_user_file_never_deletes_it(swift, tmp_path) -> None:
    (tmp_path / "in.txt").write_text("data\n")
    src = GEN + """file inp <"in.txt">;
foreach i in [0:1] {
  file t = inp;
  trace(i, readData(t));
}
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert sorted(r.lines) == ["SwiftScript trace: 0, data", "SwiftScript trace: 1, data"]
    assert (tmp_path / "in.txt").read_text() == "data\n"


def test_test_mapper_temp_and_remap_follow_swift(swift, tmp_path) -> None:
    src = GEN + """app (file o) cat2 (file a, file b) { cat @a @b stdout=@o; }
(file fr) p () {
  file t1 <test_mapper; file="a.1.tmp", temp="true">;
  file t2 <test_mapper; file="a.2.out", temp="false">;
  t1 = gen("f1");
  t2 = gen("f2");
  file t3 <test_mapper; file="a.3.tmp", temp="true", remappable="true">;
  file t4 <test_mapper; file="a.4.tmp", temp="true", remappable="true">;
  t3 = t1;
  t4 = t2;
  fr = cat2(t3, t4);
}
file f <"a.out">;
f = p();
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert (tmp_path / "a.out").read_text() == "f1\nf2\n"
    assert not (tmp_path / "a.1.tmp").exists()
    assert (tmp_path / "a.2.out").read_text() == "f2\n"
    assert not (tmp_path / "a.3.tmp").exists() and not (tmp_path / "a.4.tmp").exists()
    # test_mapper reports on stdout as Swift's did; the persistent file is never "cleaned"
    assert "Cleaning file a.1.tmp" in r.lines
    assert not any(line.startswith("Cleaning file a.2.out") for line in r.lines)
    assert "Not cleaning a.2.out (not temporary)" in r.lines
    assert "Remapping $ -> a.1.tmp" in r.lines


def test_file_gc_disabled_keeps_everything(swift, tmp_path) -> None:
    src = GEN + 'foreach i in [0:2] { file t = gen(strcat("x", i)); }\n'
    r = swift(src, file_gc=False)
    assert r.outcome.ok, r.outcome.errors
    assert len(_concurrent(tmp_path)) == 3


def test_file_gc_follows_the_config_key(tmp_path) -> None:
    """fileGCEnabled reaches the engine from swift.conf (through the runner)."""
    from swiftnb.runner import load_run_config, start_run

    config = load_run_config(properties={"fileGCEnabled": False})
    src = GEN + 'foreach i in [0:1] { file t = gen(strcat("x", i)); }\n'

    handle = start_run(src, base_dir=str(tmp_path), config=config, runid="run001")
    assert handle.wait(timeout=60).ok
    assert len(_concurrent(tmp_path)) == 2


def test_top_level_temporaries_only_with_gc_top_level(swift, tmp_path) -> None:
    src = GEN + 'file t = gen("x");\nfile k <"k.txt">;\nk = gen("k");\n'
    r = swift(src)
    assert r.outcome.ok and len(_concurrent(tmp_path)) == 1
    (tmp_path / "run001").rename(tmp_path / "first")
    r = swift(src, gc_top_level=True)
    assert r.outcome.ok and _concurrent(tmp_path) == []
    assert (tmp_path / "k.txt").read_text() == "k\n"


def test_after_an_error_nothing_more_is_cleaned(swift, tmp_path) -> None:
    # with lazy errors the run goes on; the files of completed calls stay for -resume
    src = GEN + """app (file o) bad () { "false" stdout=@o; }
foreach i in [0:2] {
  file t = gen(strcat("x", i));
  file b;
  if (i == 1) { b = bad(); } else { b = gen("b"); }
}
"""
    r = swift(src, lazy_errors=True)
    assert not r.outcome.ok
    left = _concurrent(tmp_path)
    assert any(name.startswith("t-") for name in left), left


def test_command_line_cleans_top_level_temporaries_unless_file_gc_is_off(tmp_path) -> None:
    import subprocess
    import sys

    (tmp_path / "t.swift").write_text(GEN + 'file top = gen("x");\nfile k <"k.txt">;\nk = gen("k");\n')
    swiftnb = str(Path(sys.executable).parent / "swiftnb")
    for args, runid in (([], "on"), (["-fileGCEnabled", "false"], "off")):
        proc = subprocess.run([swiftnb, "run", *args, "-runid", runid, "t.swift"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    assert not list((tmp_path / "on").glob("_concurrent/*"))
    assert len(list((tmp_path / "off").glob("_concurrent/*"))) == 1
    assert (tmp_path / "k.txt").read_text() == "k\n"


def test_iterate_condition_may_read_the_iteration_files(swift, tmp_path) -> None:
    # the condition also waits for a slow outer value: the iteration's body is long done
    # when it reads f again
    src = GEN + """app (file o) slow () { sh "-c" "sleep 0.4; echo 2" stdout=@o; }
int lim = toInt(readData(slow()));
iterate i {
  file f = gen(strcat(i));
} until (toInt(readData(f)) >= lim);
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert len(r.executor.tasks) == 4  # slow, then i = 0, 1, 2
    assert not [n for n in _concurrent(tmp_path) if n.startswith("f-")]
