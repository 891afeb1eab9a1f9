"""A foreach whose body is one ``a[k] = pure expression`` runs many iterations at a time
(engine/bulkloop.py): every script here runs twice, in bulk and with the bulk planner
switched off, and must print the same, report the same errors and exit the same way.
The bulk run must also have taken the path it is meant to take (counted by a spy on
the chunk step), so that a test of equality is not a test of the old path twice."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from swiftnb.engine import bulkloop
from swiftnb.engine import compiler as compiler_module
from swiftnb.engine.run import Run, RunSettings
from swiftnb.events import EventBus
from swiftnb.lang.parser import parse

from engine_support import SubprocessTestExecutor

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    stdout: str
    ok: bool
    errors: list[str]
    exit_code: int
    #: chunks the bulk path ran, and chunks it handed back to the ordinary drive
    bulk_chunks: int
    fallbacks: int


@dataclass
class Counts:
    ran: int = 0
    refused: int = 0


@pytest.fixture
def chunk_counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    """Counts each bulk chunk step's result."""
    counts = Counts()
    real = bulkloop.BulkFeed._chunk

    def counted(self: bulkloop.BulkFeed, *args: Any) -> bool:
        ok = real(self, *args)
        if ok:
            counts.ran += 1
        else:
            counts.refused += 1
        return ok

    monkeypatch.setattr(bulkloop.BulkFeed, "_chunk", counted)
    yield counts


def _run(src: str, where: Path, **settings: Any) -> tuple[str, Any]:
    program = parse(src, "test.swift")
    out = io.StringIO()
    where.mkdir(parents=True, exist_ok=True)

    async def main() -> Any:
        r = Run(program, SubprocessTestExecutor(), bus=EventBus(),
                settings=RunSettings(**settings), base_dir=str(where),
                run_dir=str(where / "run001"), runid="run001", stdout=out)
        return await asyncio.wait_for(r.execute(), 60)

    old_err = sys.stderr
    sys.stderr = io.StringIO()
    try:
        outcome = asyncio.run(main())
    finally:
        sys.stderr = old_err
    return out.getvalue(), outcome


def both(src: str, tmp_path: Path, counts: Counts, monkeypatch: pytest.MonkeyPatch,
         **settings: Any) -> tuple[Outcome, Outcome]:
    """The script run in bulk, then with the planner off (every loop as before)."""
    runs = []
    for mode in ("bulk", "plain"):
        if mode == "plain":
            monkeypatch.setattr(compiler_module, "plan_bulk", lambda *_a: None)
        before = (counts.ran, counts.refused)
        stdout, outcome = _run(src, tmp_path / mode, **settings)
        runs.append(Outcome(stdout, outcome.ok, list(outcome.errors), outcome.exit_code,
                            counts.ran - before[0], counts.refused - before[1]))
    bulk, plain = runs
    assert plain.bulk_chunks == 0 and plain.fallbacks == 0
    assert (bulk.stdout, bulk.ok, bulk.errors, bulk.exit_code) == (
        plain.stdout, plain.ok, plain.errors, plain.exit_code)
    return bulk, plain


SHAPES = {
    "steps and bounds": """
int a[]; foreach i in [0:20:3] { a[i] = i * 2; }
int b[]; foreach i in [10:-4:-2] { b[i] = i - 1; }
int c[]; foreach i in [-5:5] { c[i] = i * i; }
int d[]; foreach i in [1:6] { d[i] = i + 100; }
int e[]; foreach i in [5:4] { e[i] = i; }
int g[]; foreach x, j in [3:12:3] { g[j] = x * x; }
trace(a, b, c, d, length(e), g);
""",
    "operators": """
int a[]; foreach i in [-6:6] { a[i] = (i * 7 - 3) %/ 4 + i %% 5 - (-i) %% 3; }
float f[]; foreach i in [-3:3] { f[i] = i / 4 + 0.5 * i - 2; }
boolean t[]; foreach i in [0:7] { t[i] = (i > 2 && i != 5) || !(i < 7); }
string s[]; foreach i in [0:4] { s[i] = "n" + i + ":" + (i * 0.5) + (i > 1); }
float h[]; foreach i in [0:4] { h[i] = i; }
int m[]; foreach i in [0:4] { m[i] = -(i - 2) * +3; }
float r[]; foreach i in [0:4] { r[i] = (i + 0.5) %% 2; }
trace(a, f, t, s, h, m, r);
""",
    "32-bit wrap": """
int a[]; foreach i in [0:5] { a[i] = i * 1073741824 + 2147483647; }
int b[]; foreach v, k in a { b[k] = v * v - 1; }
int c[]; foreach v, k in a { c[k] = (v + 1) %/ 3; }
int d[]; foreach i in [0:3] { d[i] = -(i - 2147483647 - 1); }
boolean e[]; foreach v, k in a { e[k] = v * 2 > 0; }
trace(a, b, c, d, e);
""",
    "closed arrays of each type": """
int ints[] = [4, 8, 15, 16, 23, 42];
float fl[] = [1.5, -2.25, 3.0];
string st[] = ["x", "yy", "zzz"];
boolean bo[] = [true, false, true];
int i2[]; foreach v, k in ints { i2[k] = v %% 7; }
float f2[]; foreach v, k in fl { f2[k] = v * 2 + k; }
string s2[]; foreach v, k in st { s2[k] = v + k; }
boolean b2[]; foreach v, k in bo { b2[k] = !v; }
int byval[]; foreach v in ints { byval[v] = v + 1; }
int from1[int]; from1[1] = 10; from1[2] = 20;
int f3[]; foreach v, k in from1 { f3[k] = v * 3; }
trace(i2, f2, s2, b2, byval, f3);
""",
    "variables outside the loop": """
int n = 7;
float x = 0.25;
string tag = "t";
int a[]; foreach i in [0:4] { a[i] = i * n; }
float b[]; foreach i in [0:4] { b[i] = i * x; }
string c[]; foreach i in [0:4] { c[i] = tag + i; }
int late;
int d[]; foreach i in [0:4] { d[i] = i + late; }
late = 3;
trace(a, b, c, d);
""",
    "nested foreach": """
int total[];
foreach i in [0:3] {
  int row[];
  foreach j in [0:4] { row[j] = i * 10 + j; }
  total[i] = sum(row);
}
trace(total);
""",
    "read while it is filled": """
int b[];
foreach v, k in a { b[k] = v + 1; }
trace(a[7], length(a));
int a[];
foreach i in [0:199999] { a[i] = i * 3; }
trace(b[199999], length(b));
""",
    "error in the body": """
int a[];
foreach i in [0:9] { a[i] = 100 %/ (i - 3); }
trace(a[0]);
""",
    "remainder by zero": """
int a[];
foreach i in [0:9] { a[i] = 100 %% (5 - i); }
trace(a[9]);
""",
    "float division by zero": """
float a[];
foreach i in [0:4] { a[i] = 1.0 / (i - 2); }
float b[];
foreach i in [0:4] { b[i] = (i - 2) / 0; }
trace(a, b);
""",
    "elements of closed arrays": """
int a[]; foreach i in [0:99] { a[i] = i * i; }
float w[]; foreach i in [1:10] { w[i] = i / 8; }
int c[]; foreach j in [0:99] { c[j] = a[99 - j] + a[j %% 7] * 2; }
float d[]; foreach j in [1:10] { d[j] = w[j] + w[11 - j] + a[j]; }
int e[]; foreach v, k in a { e[k] = a[(k + 1) %% 100] - v; }
trace(c, d, e[5]);
""",
    "an element that is not there": """
int a[]; foreach i in [0:9] { a[i] = i; }
int c[]; foreach j in [0:11] { c[j] = a[j] + 1; }
trace(c[0]);
""",
    "written twice": """
int dup[];
foreach i in [0:5] { dup[i] = (i * 3 + 1) %% 4 + 1; }
int c[];
foreach v in dup { c[v] = v * 2; }
trace(c[4]);
""",
    "an error past the first chunk": """
int a[];
foreach i in [0:199999] { a[i] = 7 %/ (i - 100000); }
trace(a[0], a[199999]);
""",
}


#: shapes whose every loop runs in bulk, one chunk each (an empty range: none)
ALL_IN_BULK = {"steps and bounds": 5, "elements of closed arrays": 5, "nested foreach": 4,
               "32-bit wrap": 5, "operators": 7}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_bulk_prints_and_fails_as_the_ordinary_drive(name: str, tmp_path: Path,
                                                    chunk_counts: Counts,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    bulk, _ = both(SHAPES[name], tmp_path, chunk_counts, monkeypatch)
    assert bulk.bulk_chunks + bulk.fallbacks > 0, "the bulk path was not tried"
    if name in ALL_IN_BULK:
        assert (bulk.bulk_chunks, bulk.fallbacks) == (ALL_IN_BULK[name], 0)


def test_an_error_falls_back_from_its_chunk_on(tmp_path: Path, chunk_counts: Counts,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bulk, plain = both(SHAPES["an error past the first chunk"], tmp_path, chunk_counts,
                       monkeypatch)
    assert not plain.ok and plain.exit_code == 2
    assert any("/ by zero" in e for e in plain.errors)
    # the first chunk stored in bulk, the second (with the error) went back to the drive
    assert bulk.bulk_chunks == 1 and bulk.fallbacks == 1


def test_a_wide_fill_and_read_match_element_by_element(tmp_path: Path,
                                                       chunk_counts: Counts,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    src = """
int a[]; foreach i in [0:149999] { a[i] = i * 40000 - 7; }
int b[]; foreach v, i in a { b[i] = v %% 1000 + i; }
foreach v, i in b { if (v != (((i * 40000 - 7) %% 1000) + i)) { trace("differs", i); } }
trace(sum(b), length(b), b[149999]);
"""
    bulk, _ = both(src, tmp_path, chunk_counts, monkeypatch)
    assert bulk.ok and "differs" not in bulk.stdout
    assert bulk.bulk_chunks >= 6  # 150,000 / 65,536, twice


FALLBACKS = {
    "two statements": "int a[]; int b[]; foreach i in [0:9] { a[i] = i; b[i] = i; } trace(a, b);",
    "a call": "string s[]; foreach i in [0:9] { s[i] = toString(i); } trace(s);",
    "a key computed": "int a[]; foreach i in [0:9] { a[i + 1] = i; } trace(a);",
    "an element of an open array": """
int a[];
int b[]; foreach i in [0:2] { b[i] = a[i] + 1; }
a[0] = 0; a[1] = 5; a[2] = 10;
trace(b);
""",
    "an element of a member": ("type P { int x[]; } P p; p.x[0] = 4; int b[];"
                               " foreach i in [0:0] { b[i] = p.x[i]; } trace(b);"),
    "a float range": "float a[]; foreach x, i in [0:1:0.25] { a[i] = x * 2; } trace(a);",
    "writes what it reads": ("int a[]; a[0] = 1; foreach v, k in a { if (k < 5) { a[k + 1] = v * 2; } }"
                             " trace(a);"),
    "an open array": """
int a[];
foreach v, k in a { b[k] = v + 1; }
int b[];
a[0] = 1; a[1] = 2;
trace(b);
""",
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_what_is_not_proved_runs_as_before(name: str, tmp_path: Path, chunk_counts: Counts,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    bulk, _ = both(FALLBACKS[name], tmp_path, chunk_counts, monkeypatch)
    assert bulk.bulk_chunks == 0 and bulk.fallbacks == 0
    assert bulk.ok, bulk.errors


def test_logged_iterations_run_one_by_one(tmp_path: Path, chunk_counts: Counts,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """With unit events read, each iteration has its events: no bulk run."""
    bulk, _ = both("int a[]; foreach i in [0:9] { a[i] = i * 2; } trace(a);", tmp_path,
                   chunk_counts, monkeypatch, unit_events=True)
    assert bulk.bulk_chunks == 0 and bulk.ok


def test_the_command_exits_as_before_on_an_error_in_a_bulk_body(tmp_path: Path) -> None:
    """The whole ``swiftnb run``: the ordinary drive's message and exit code 2."""
    (tmp_path / "div.swift").write_text(
        "int a[];\nforeach i in [0:99] { a[i] = 5 %/ (i - 50); }\ntrace(length(a));\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", "from swiftnb.cli import console; console()", "run",
         "-ui", "none", "div.swift"], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    assert "/ by zero" in text and "div.swift" in text
