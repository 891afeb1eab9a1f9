"""The swift command line's configuration options (-config, -sites, -lazyErrors ...)."""

from __future__ import annotations

import pytest

from swiftnb.config import ConfigError
from swiftnb.config.cli_options import load_from_args, sitelist, split_config_args


def test_split_keeps_script_and_its_arguments():
    args = split_config_args(["-config", "my.conf", "-sites", "a,b", "-lazyErrors",
                              "-resume", "x.rlog", "-maxForeachThreads", "64",
                              "script.swift", "-n=10", "-sites", "not-an-option"])
    assert args.config == "my.conf"
    assert args.properties == {"sites": "a,b", "lazyErrors": "true",
                               "maxForeachThreads": "64"}
    assert args.rest == ["-resume", "x.rlog", "script.swift", "-n=10", "-sites",
                         "not-an-option"]


def test_boolean_with_value_and_legacy_names():
    args = split_config_args(["-keepSiteDir", "false", "-execution.retries", "2",
                              "-sites.file", "sites.xml", "-tc.file", "tc.data",
                              "-config", "swift.properties", "-listconfig", "full",
                              "-sitelist", "s.swift"])
    assert args.properties == {"keepSiteDir": "false", "executionRetries": "2"}
    assert (args.sites_file, args.tc_file, args.properties_file) == (
        "sites.xml", "tc.data", "swift.properties")
    assert args.listconfig == "full" and args.sitelist is True
    assert args.rest == ["s.swift"]


def test_missing_value():
    with pytest.raises(ConfigError, match=r"^<Command Line>: -config: missing value$"):
        split_config_args(["-config"])


def test_load_from_args(tmp_path, clean_env):
    (tmp_path / "run.conf").write_text(
        "site.b { execution.type: local, workDirectory: wb }\n")
    args = split_config_args(["-config", "run.conf", "-sites", "local,b", "-lazyErrors",
                              "false", "s.swift"])
    config = load_from_args(args, env=clean_env, cwd=tmp_path)
    assert config.selected_sites == ["local", "b"] and config.lazy_errors is False
    assert config.origin("sites") == "[C]"
    assert sitelist(config) == ("Defined sites:\n  b: local (enabled)\n"
                                "  local: local (enabled)\n")
