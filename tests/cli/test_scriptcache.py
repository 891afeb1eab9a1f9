"""An unchanged script's parse is kept between runs (as Swift kept SCRIPT.kml): the next
run does not load the parser; a changed script, ``-recompile`` or a damaged cache parse
again; syntax errors are never kept."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swiftnb import scriptcache
from swiftnb.lang import parse

pytestmark = pytest.mark.timeout(120)

SCRIPT = 'type file;\napp (file o) greet (string s) { echo s stdout=@o; }\n' \
         'file f <"out.txt">;\nf = greet("{word}");\n'

# runs the real command in-process and says whether lark was loaded
RUN = ("import sys\nfrom swiftnb.cli import main\nsys.argv = ['swiftnb', *sys.argv[1:]]\n"
       "try:\n    code = main()\nexcept SystemExit as e:\n    code = e.code\n"
       "print('lark', 'lark' in sys.modules, 'exit', code)\n")


def _run(tmp_path, *args, **extra):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}
    done = subprocess.run([sys.executable, "-c", RUN, *args], env=env, capture_output=True,
                          text=True, timeout=90, cwd=tmp_path)
    last = done.stdout.strip().splitlines()[-1].split()
    return last[1] == "True", int(last[3]), done


def _kept(tmp_path):
    return sorted((tmp_path / "cache" / "swiftnb" / "scripts").glob("*.pickle"))


def test_an_unchanged_script_runs_again_without_the_parser(tmp_path):
    (tmp_path / "a.swift").write_text(SCRIPT.replace("{word}", "one"))
    loaded, code, _ = _run(tmp_path, "a.swift")
    assert (loaded, code) == (True, 0) and len(_kept(tmp_path)) == 1
    loaded, code, _ = _run(tmp_path, "a.swift")
    assert (loaded, code) == (False, 0)
    assert (tmp_path / "out.txt").read_text() == "one\n"
    # a changed script is parsed again, and what runs is the new text
    (tmp_path / "a.swift").write_text(SCRIPT.replace("{word}", "two"))
    loaded, code, _ = _run(tmp_path, "a.swift")
    assert (loaded, code) == (True, 0)
    assert (tmp_path / "out.txt").read_text() == "two\n"
    # -recompile parses an unchanged script again
    loaded, code, _ = _run(tmp_path, "-recompile", "a.swift")
    assert (loaded, code) == (True, 0)


def test_a_damaged_kept_parse_or_no_cache_parses_again(tmp_path):
    (tmp_path / "a.swift").write_text(SCRIPT.replace("{word}", "x"))
    assert _run(tmp_path, "a.swift")[:2] == (True, 0)
    for kept in _kept(tmp_path):
        kept.write_bytes(b"not a pickle")
    assert _run(tmp_path, "a.swift")[:2] == (True, 0)
    assert _run(tmp_path, "a.swift")[:2] == (False, 0)  # kept again, whole
    assert _run(tmp_path, "a.swift", SWIFTNB_NO_CACHE="1")[:2] == (True, 0)


def test_a_syntax_error_is_reported_every_time_and_never_kept(tmp_path):
    (tmp_path / "bad.swift").write_text("int x = ;\n")
    for _ in range(2):
        loaded, code, done = _run(tmp_path, "bad.swift")
        assert code == 3 and loaded
        assert "bad.swift" in done.stderr
    assert _kept(tmp_path) == []


def test_the_kept_parses_are_pruned_to_the_newest(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(scriptcache, "MAX_KEPT", 4)
    for i in range(6):
        text = f"int x = {i};\n"
        place = scriptcache._place(f"s{i}.swift", text)
        if place is not None and os.path.exists(place[0]):  # the oldest is pruned first
            os.utime(place[0], (1000 + i, 1000 + i))
        scriptcache.keep(text, f"s{i}.swift", parse(text, f"s{i}.swift"))
        place = scriptcache._place(f"s{i}.swift", text)
        assert place is not None
        os.utime(place[0], (1000 + i, 1000 + i))
    left = _kept(tmp_path)
    assert 2 <= len(left) <= 4
    newest = "int x = 5;\n"
    found = scriptcache.lookup(newest, "s5.swift")
    assert found is not None and found.statements[0].pos.file == "s5.swift"
    assert scriptcache.lookup(newest, "other.swift") is None  # the name is part of it
