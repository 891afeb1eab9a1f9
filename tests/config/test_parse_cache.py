"""The parse of an include-free configuration is kept on disk between processes."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)

DUMP = ("from swiftnb.config import load_config_text; "
        "print(load_config_text('site.local.maxParallelTasks: 3\\n').dump())")


def _run(env_cache, tmp_path, **extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(env_cache),
           **extra}
    return subprocess.run([sys.executable, "-c", DUMP], env=env, capture_output=True,
                          text=True, timeout=50, cwd=tmp_path)


def test_a_second_process_reads_the_cached_parse_and_gets_the_same_config(tmp_path):
    cache = tmp_path / "cache"
    first = _run(cache, tmp_path)
    assert first.returncode == 0, first.stderr
    kept = list((cache / "swiftnb" / "hocon").glob("*.pickle"))
    assert len(kept) == 2  # the embedded defaults and the text
    second = _run(cache, tmp_path)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert "maxParallelTasks: 3" in second.stdout


def test_a_damaged_cache_file_is_parsed_again(tmp_path):
    cache = tmp_path / "cache"
    good = _run(cache, tmp_path)
    for kept in (cache / "swiftnb" / "hocon").glob("*.pickle"):
        kept.write_bytes(b"not a pickle")
    again = _run(cache, tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == good.stdout


def test_no_cache_when_asked_or_when_the_directory_cannot_be_written(tmp_path):
    off = _run(tmp_path / "off", tmp_path, SWIFTNB_NO_CACHE="1")
    assert off.returncode == 0 and not (tmp_path / "off").exists()
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory\n")
    blocked = _run(blocker, tmp_path)
    assert blocked.returncode == 0, blocked.stderr
    assert "maxParallelTasks: 3" in blocked.stdout
