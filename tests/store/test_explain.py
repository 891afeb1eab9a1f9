"""explain: the tree of calls behind a file, and with why what changed since the
earlier run; checked line by line on a three-call chain built from records."""

from __future__ import annotations

import pytest

from swiftnb.store import FileRecord, RunStore, explain
from tests.store.helpers import call, digest

pytestmark = pytest.mark.timeout(60)

T0 = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC


def f(path: str, char: str) -> FileRecord:
    return FileRecord(path, digest(char), 4)


def chain(store: RunStore, run: str, a: str, b: str, *, decisions=("ran", "ran", "ran"),
          t: float = T0) -> None:
    """gen: /w/a.txt -> /w/b.txt; step: /w/b.txt, /w/p.txt -> /w/c.txt; final: /w/c.txt -> /w/d.txt"""
    store.record_call(call(run, "gen-1", f"sha256:gen-{a}", app="gen",
                           command=["gen", "-i", "/w/a.txt", "-o", "/w/b.txt"],
                           key_parts={"app": "sha256:gen", "args": "sha256:1",
                                      "input:/w/a.txt": digest(a)},
                           inputs=[f("/w/a.txt", a)], outputs=[f("/w/b.txt", b)],
                           decision=decisions[0], started=t))
    store.record_call(call(run, "step-2", f"sha256:step-{b}", app="step",
                           command=["step", "/w/b.txt", "my params.txt"],
                           key_parts={"app": "sha256:step", "args": "sha256:2",
                                      "input:/w/b.txt": digest(b),
                                      "input:/w/p.txt": digest("p")},
                           inputs=[f("/w/b.txt", b), f("/w/p.txt", "p")],
                           outputs=[f("/w/c.txt", "c")], decision=decisions[1], started=t + 3))
    store.record_call(call(run, "final-3", "sha256:final", app="final",
                           command=["final", "/w/c.txt"],
                           key_parts={"app": "sha256:final", "args": "sha256:3",
                                      "input:/w/c.txt": digest("c")},
                           inputs=[f("/w/c.txt", "c")], outputs=[f("/w/d.txt", "d")],
                           decision=decisions[2], started=t + 6,
                           reason="inputs unchanged" if decisions[2] == "cached" else ""))


TREE = """\
/w/d.txt  dddddddddddd
└─ final  ran  on local  exit 0
   │  $ final /w/c.txt
   │  2027-01-15 08:00:06 -> 2027-01-15 08:00:08 UTC (2.5 s), job final-3, run r1
   └─ /w/c.txt  cccccccccccc
      └─ step  ran  on local  exit 0
         │  $ step /w/b.txt 'my params.txt'
         │  2027-01-15 08:00:03 -> 2027-01-15 08:00:05 UTC (2.5 s), job step-2, run r1
         ├─ /w/b.txt  bbbbbbbbbbbb
         │  └─ gen  ran  on local  exit 0
         │     │  $ gen -i /w/a.txt -o /w/b.txt
         │     │  2027-01-15 08:00:00 -> 2027-01-15 08:00:02 UTC (2.5 s), job gen-1, run r1
         │     └─ /w/a.txt  111111111111  (source file)
         └─ /w/p.txt  pppppppppppp  (source file)"""


def test_the_tree_of_a_three_call_chain(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        chain(store, "r1", "1", "b")
        assert str(explain(store, "/w/d.txt")) == TREE


WHY = """\
/w/d.txt  dddddddddddd
└─ final  cached  on local  exit 0
   │  $ final /w/c.txt
   │  2027-01-16 08:00:06 -> 2027-01-16 08:00:08 UTC (2.5 s), job final-3, run r2
   │  why: reused (cached): inputs unchanged
   └─ /w/c.txt  cccccccccccc
      └─ step  ran  on local  exit 0
         │  $ step /w/b.txt 'my params.txt'
         │  2027-01-16 08:00:03 -> 2027-01-16 08:00:05 UTC (2.5 s), job step-2, run r2
         │  why: ran: input changed: /w/b.txt (bbbbbbbbbbbb -> eeeeeeeeeeee)
         ├─ /w/b.txt  eeeeeeeeeeee
         │  └─ gen  ran  on local  exit 0
         │     │  $ gen -i /w/a.txt -o /w/b.txt
         │     │  2027-01-16 08:00:00 -> 2027-01-16 08:00:02 UTC (2.5 s), job gen-1, run r2
         │     │  why: ran: input changed: /w/a.txt (111111111111 -> 222222222222)
         │     └─ /w/a.txt  222222222222  (source file)
         └─ /w/p.txt  pppppppppppp  (source file)"""


def test_why_says_what_changed_since_the_earlier_run(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        chain(store, "r1", "1", "b")
        chain(store, "r2", "2", "e", decisions=("ran", "ran", "cached"), t=T0 + 86400)
        assert str(explain(store, "/w/d.txt", why=True)) == WHY


def test_first_run_app_and_argument_changes_are_named(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        chain(store, "r1", "1", "b")
        text = str(explain(store, "/w/b.txt", why=True))
        assert "why: ran: no earlier call" in text
        store.record_call(call("r2", "gen-9", "sha256:new", app="gen",
                               command=["/usr/bin/gen2", "-x"],
                               key_parts={"app": "sha256:other", "args": "sha256:9",
                                          "input:/w/a.txt": digest("1"),
                                          "input:/w/z.txt": digest("z")},
                               inputs=[f("/w/a.txt", "1")], outputs=[f("/w/b.txt", "b")]))
        text = str(explain(store, "/w/b.txt", why=True))
        assert ("why: ran: app changed: /usr/bin/gen2; arguments changed; "
                "input added: /w/z.txt") in text


def test_a_file_nobody_produced_is_a_message(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        chain(store, "r1", "1", "b")
        found = explain(store, "/w/a.txt")
    assert not found.found
    assert str(found).startswith("/w/a.txt: no recorded call produced this file")


def test_a_call_reached_twice_is_drawn_once(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        store.record_call(call("r1", "split-1", "sha256:s", app="split",
                               outputs=[f("/w/x", "x"), f("/w/y", "y")]))
        store.record_call(call("r1", "join-2", "sha256:j", app="join",
                               inputs=[f("/w/x", "x"), f("/w/y", "y")], outputs=[f("/w/z", "z")]))
        text = str(explain(store, "/w/z"))
    assert text.count("split  ran") == 1
    assert "/w/y  yyyyyyyyyyyy  (its call is shown above)" in text
