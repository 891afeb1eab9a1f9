"""A run with no configuration file of its own: the built-in defaults and the command
line, merged without pyhocon, give what the pyhocon merge gives."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swiftnb.config import load_config
from swiftnb.config.defaults import merge_plain

pytestmark = pytest.mark.timeout(120)

LOAD = ("import sys; from swiftnb.config import load_config; "
        "c = load_config(properties={'sites': 'local', 'lazyErrors': 'true'}); "
        "print(c.lazy_errors, 'pyhocon' in sys.modules)")


def _run(tmp_path, **extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}
    (tmp_path / "home").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-c", LOAD], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)


def test_a_run_without_configuration_files_does_not_import_pyhocon(tmp_path):
    first = _run(tmp_path)  # resolves the defaults once (pyhocon) and keeps them
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[0] == "True"
    second = _run(tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["True", "False"]


def test_a_damaged_or_missing_cache_resolves_the_defaults_again(tmp_path):
    assert _run(tmp_path).returncode == 0
    kept = list((tmp_path / "cache" / "swiftnb" / "defaults").glob("*.pickle"))
    assert len(kept) == 1
    kept[0].write_bytes(b"not a pickle")
    again = _run(tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split()[0] == "True"
    off = _run(tmp_path, SWIFTNB_NO_CACHE="1")
    assert off.returncode == 0 and off.stdout.split()[0] == "True"


@pytest.mark.parametrize("properties", [
    {},
    {"sites": "local", "lazyErrors": "true", "executionRetries": "3"},
    {"site.local.maxParallelTasks": "7", "site.local.workDirectory": "/tmp/w"},
    {"site.local.execution.type": "local", "site.local.staging": "direct"},
    {"site.extra.execution.type": "local", "sites": "extra,local"},
    {"TCPPortRange": "51000,51100", "keepSiteDir": "true", "site.local": None},
])
def test_the_plain_merge_is_the_pyhocon_merge(tmp_path, properties):
    plain_dir = tmp_path / "plain"
    hocon_dir = tmp_path / "hocon"
    plain_dir.mkdir()
    hocon_dir.mkdir()
    (hocon_dir / "swift.conf").write_text("# nothing: only makes the run read a file\n")
    env = {"HOME": str(tmp_path)}
    try:
        plain = load_config(properties=properties, env=env, cwd=plain_dir)
    except Exception as exc:  # noqa: BLE001 - both paths must fail alike
        with pytest.raises(type(exc)) as caught:
            load_config(properties=properties, env=env, cwd=hocon_dir)
        assert str(caught.value) == str(exc)
        return
    hocon = load_config(properties=properties, env=env, cwd=hocon_dir)
    assert plain.raw == hocon.raw
    assert plain.sites.keys() == hocon.sites.keys()


def test_merge_plain_merges_objects_replaces_the_rest_and_null_deletes():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": {"z": 3}}
    merged = merge_plain(base, {"a": {"y": [3], "w": {"v": None, "u": 4}}, "b": {"n": 1},
                                "c": None})
    assert merged == {"a": {"x": 1, "y": [3], "w": {"u": 4}}, "b": {"n": 1}}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": {"z": 3}}  # untouched
