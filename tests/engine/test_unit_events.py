"""Swift's unit events (FOREACH_IT_START / SCOPE / FOREACH_IT_END per foreach iteration,
STARTCOMPOUND / ENDCOMPOUND per compound call, SCOPE per if branch): written only when
someone reads them (``unit_events``, the CLI's -debug), never paid for otherwise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SRC = """type file;
app (file o) gen (string s) { echo s stdout=@o; }
(file r) wrap (string s) { file t = gen(s); r = t; }
foreach i in [0:2] {
  file w = wrap(strcat("w", i));
  if (i == 1) { trace("one"); }
}
"""

UNIT = {"FOREACH_IT_START", "FOREACH_IT_END", "SCOPE", "STARTCOMPOUND", "ENDCOMPOUND"}


def test_unit_events_per_iteration_and_compound_call(swift) -> None:
    r = swift(SRC, unit_events=True)
    assert r.outcome.ok, r.outcome.errors
    units = [e for e in r.events if e.kind in UNIT]
    starts = [e for e in units if e.kind == "FOREACH_IT_START"]
    assert sorted(e["thread"] for e in starts) == ["R-4-0", "R-4-1", "R-4-2"]
    assert all(e["line"] == 4 and e.level == "DEBUG" for e in starts)
    for e in starts:
        t = e["thread"]
        mine = [(x.kind, x.fields) for x in units if x["thread"] == t]
        # the iteration's SCOPE follows its start, its end comes last
        assert mine[0] == ("FOREACH_IT_START", {"line": 4, "thread": t})
        assert mine[1] == ("SCOPE", {"thread": t})
        assert mine[-1] == ("FOREACH_IT_END", {"line": 4, "thread": t})
        assert ("STARTCOMPOUND", {"thread": t, "name": "wrap"}) in mine
        assert ("ENDCOMPOUND", {"thread": t, "name": "wrap"}) in mine
    # the if branch taken (i == 1) opens one more scope in its iteration's thread
    assert [e["thread"] for e in units if e.kind == "SCOPE"].count("R-4-1") == 2
    assert sum(e.kind == "STARTCOMPOUND" for e in units) == 3


def test_no_unit_events_unless_asked(swift) -> None:
    r = swift(SRC)
    assert r.outcome.ok, r.outcome.errors
    assert not [e for e in r.events if e.kind in UNIT]
    assert any(e.kind == "PROCEDURE" for e in r.events)


def test_nested_foreach_threads_name_their_parent(swift) -> None:
    r = swift("foreach i in [0:1] {\n  foreach j in [0:1] { trace(i, j); }\n}\n",
              unit_events=True)
    assert r.outcome.ok, r.outcome.errors
    threads = sorted(e["thread"] for e in r.events if e.kind == "FOREACH_IT_START")
    assert threads == ["R-1-0", "R-1-0-2-0", "R-1-0-2-1", "R-1-1", "R-1-1-2-0", "R-1-1-2-1"]


def _swiftnb() -> str:
    return str(Path(sys.executable).parent / "swiftnb")


def test_debug_run_writes_them_to_the_log_and_a_plain_run_does_not(tmp_path) -> None:
    (tmp_path / "u.swift").write_text(SRC)
    for args, runid in ((["-debug"], "dbg"), ([], "plain")):
        proc = subprocess.run([_swiftnb(), "run", *args, "-runid", runid, "u.swift"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    dbg = (tmp_path / "dbg" / "u-dbg.log").read_text()
    plain = (tmp_path / "plain" / "u-plain.log").read_text()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\+0000"
    for pattern, n in ((r"DEBUG swift FOREACH_IT_START line=4 thread=R-4-\d", 3),
                       (r"DEBUG swift SCOPE thread=R-4-\d", 4),  # 3 iterations, 1 branch
                       (r"DEBUG swift FOREACH_IT_END line=4 thread=R-4-\d", 3),
                       (r"INFO  swift STARTCOMPOUND thread=R-4-\d name=wrap", 3),
                       (r"INFO  swift ENDCOMPOUND thread=R-4-\d name=wrap", 3)):
        assert len(re.findall(rf"^{stamp} {pattern}$", dbg, re.M)) == n, (pattern, dbg)
    assert not re.search(r"FOREACH_IT|SCOPE|COMPOUND", plain)
    # the command line cleans top-level temporaries too: nothing is left in _concurrent
    assert not list((tmp_path / "dbg").glob("_concurrent/*"))
