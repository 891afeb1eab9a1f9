"""A corpus of wrong configuration files, each with the exact message it must produce.

The files are in data/bad/; data/bad/expected-errors.txt gives each one's message
(``file:line: key: problem, did you mean X?``).  A message never shows a traceback.
"""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swiftnb.config import ConfigError, load_config
from swiftnb.scheduling.build import check_sites

BAD = pathlib.Path(__file__).parent / "data" / "bad"
KIND = {".properties": "properties_file", ".xml": "sites_file", ".data": "tc_file"}


def expected_messages() -> dict[str, str]:
    blocks: dict[str, list[str]] = {}
    current = None
    for line in (BAD / "expected-errors.txt").read_text().splitlines():
        if line.startswith("== "):
            current = line[3:].strip()
            blocks[current] = []
        elif current is not None and line.strip():
            blocks[current].append(line)
    return {name: "\n".join(lines) for name, lines in blocks.items()}


EXPECTED = expected_messages()


def test_every_wrong_file_has_an_expected_message():
    files = sorted(p.name for p in BAD.iterdir() if p.name != "expected-errors.txt")
    assert files == sorted(EXPECTED)
    assert len(files) >= 20


def problems_of(name: str, env) -> str:
    """The messages a file gets: the loader's, else its sites' providers' (each site's
    execution options are its provider's to check, as a run and check-config do)."""
    kind = KIND.get(pathlib.Path(name).suffix, "path")
    try:
        config = load_config(**{kind: name}, cwd=BAD, env=env)
    except ConfigError as exc:
        return str(exc)
    return "\n".join(check_sites(config))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_file_message(name, clean_env):
    message = problems_of(name, clean_env)
    assert message == EXPECTED[name]
    assert "Traceback" not in message
    for line in message.splitlines():
        assert line.startswith(name + ":"), line  # names the file (and line) first


def test_a_swift_key_without_effect_on_its_site_is_a_warning(tmp_path, clean_env):
    """Swift 0.96's schema took the coaster keys on every site, and a local site did
    nothing with them: the configuration loads and builds, and a warning names the key,
    its line and why."""
    (tmp_path / "swift.conf").write_text("site.local.execution.options.lowOverallocation: 100\n")
    config = load_config(cwd=tmp_path, env=clean_env)
    assert check_sites(config) == []
    assert config.warnings == [
        "swift.conf:1: site.local.execution.options.lowOverallocation: a "
        'coaster option (blocks of pilot jobs), with no effect for execution type "local": '
        'remove it, or make the site execution.type "coaster" with a jobManager such as '
        '"local:slurm"']


def test_errors_list_matches_message(clean_env):
    with pytest.raises(ConfigError) as info:
        load_config("two-errors.conf", cwd=BAD, env=clean_env)
    assert len(info.value.errors) == 2
    assert str(info.value) == "\n".join(info.value.errors)


def test_unknown_key_in_included_file_names_that_file(tmp_path, clean_env):
    (tmp_path / "inc.conf").write_text("\n\nsite.local.maxParallelTask: 4\n")
    (tmp_path / "swift.conf").write_text('include "inc.conf"\n')
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env=clean_env)
    assert str(info.value) == (f"{tmp_path / 'inc.conf'}:3: site.local.maxParallelTask: "
                               "unknown key, did you mean maxParallelTasks?")


def test_wrong_type_inside_user_home_file(tmp_path, clean_env):
    user = pathlib.Path(clean_env["HOME"]) / ".swift" / "swift.conf"
    user.parent.mkdir(parents=True)
    user.write_text("replicationLimit: none\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env=clean_env)
    assert str(info.value) == (f"{user}:1: replicationLimit: invalid value \"none\", "
                               "expected an integer from 1 to 2147483647")


PIECES = ["site", ".", "local", "{", "}", "[", "]", ":", "=", "+=", ",", "\n", '"x"',
          "${env.A}", "${?env.B}", "${site.local}", "null", "1", "-3", "true", "sites",
          "maxJobs", "execution", "type", "app", "ALL", "include", '"nope.conf"', "#c",
          "//c", '"""t"""', "off", "00:10:00", " ", "workDirectory", "${sites}", "$", '"']


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=25))
def test_any_text_gives_a_config_or_a_config_error(pieces):
    from swiftnb.config import load_config_text

    try:
        load_config_text(" ".join(pieces), env={"A": "a"})
    except ConfigError as exc:
        assert str(exc) and "Traceback" not in str(exc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["localhost", "echo", "/bin/echo", "INSTALLED", "null",
                                 'env::A="b"', ";", "GLOBUS::maxwalltime=", '"0:1"', "\t",
                                 " ", "\n", "#", "*", "globus::", "=", '"', "a.b"]),
                min_size=1, max_size=20))
def test_any_tc_data_gives_a_config_or_a_config_error(tmp_path_factory, pieces):
    folder = tmp_path_factory.mktemp("tc")
    (folder / "tc.data").write_text("".join(pieces))
    try:
        load_config(tc_file="tc.data", cwd=folder, env={"HOME": str(folder)})
    except ConfigError as exc:
        assert str(exc).startswith("tc.data") or "site." in str(exc), str(exc)


def test_quoted_site_names(clean_env):
    from swiftnb.config import load_config_text

    config = load_config_text('site { "my.site" { execution.type: local, workDirectory: w } }\n'
                              'sites: "my.site"\n')
    assert config.selected_sites == ["my.site"]
    assert config.origin('site."my.site".workDirectory') == "[R] line 1"
    assert '\t\t"my.site" {' in config.dump()
