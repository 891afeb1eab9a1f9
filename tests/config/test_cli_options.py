"""The one command-line parser of every swiftnb sub-command (swiftnb.config.cli_options).

The table test runs every property name through ``swiftnb run`` and through
``swiftnb check-config`` and asserts both give the same Config value, the one the
table expects.
"""

from __future__ import annotations

import io

import pytest

from swiftnb import cli
from swiftnb.config import ConfigError
from swiftnb.config import cli_options
from swiftnb.config.cli_options import (PROPERTIES, CommandLineError, load_from_args,
                                        parse_command_line, sitelist)
from swiftnb.config.commands import check_config

#: swift.conf key -> (Config attribute, value given, typed value expected)
KEYS: dict[str, tuple[str, str, object]] = {
    "sites": ("selected_sites", "local", ["local"]),
    "staging": ("staging", "wrapper", "wrapper"),
    "lazyErrors": ("lazy_errors", "false", False),
    "executionRetries": ("execution_retries", "3", 3),
    "cachingAlgorithm": ("caching_algorithm", "LRU", "LRU"),
    "jobSubmitThrottle": ("job_submit_throttle", "7", 7),
    "hostJobSubmitThrottle": ("host_job_submit_throttle", "5", 5),
    "fileTransfersThrottle": ("file_transfers_throttle", "6", 6),
    "fileOperationsThrottle": ("file_operations_throttle", "9", 9),
    "siteScoreThrottlingFactor": ("site_score_throttling_factor", "0.5", 0.5),
    "keepSiteDir": ("keep_site_dir", "true", True),
    "logProvenance": ("log_provenance", "true", True),
    "replicationEnabled": ("replication_enabled", "true", True),
    "replicationMinQueueTime": ("replication_min_queue_time", "30", 30),
    "replicationLimit": ("replication_limit", "5", 5),
    "statusMode": ("status_mode", "provider", "provider"),
    "wrapperParameterMode": ("wrapper_parameter_mode", "files", "files"),
    "wrapperInvocationMode": ("wrapper_invocation_mode", "relative", "relative"),
    "CDMBroadcastMode": ("CDM_broadcast_mode", "off", "off"),
    "CDMFile": ("CDM_file", "policy.cdm", "policy.cdm"),
    "providerStagingPinSwiftFiles": ("provider_staging_pin_swift_files", "true", True),
    "tickerDateFormat": ("ticker_date_format", "HH:mm", "HH:mm"),
    "tickerPrefix": ("ticker_prefix", "P:", "P:"),
    "tickerEnabled": ("ticker_enabled", "false", False),
    "fileGCEnabled": ("file_GC_enabled", "false", False),
    "mappingCheckerEnabled": ("mapping_checker_enabled", "false", False),
    "hostName": ("host_name", "example.org", "example.org"),
    "TCPPortRange": ("TCP_port_range", "51000,51100", (51000, 51100)),
    "alwaysTransferWrapperLog": ("always_transfer_wrapper_log", "false", False),
    "wrapperLogPerJob": ("wrapper_log_per_job", "true", True),
    "tracingEnabled": ("tracing_enabled", "true", True),
    "wrapperStagingLocalServer": ("wrapper_staging_local_server", "http://x", "http://x"),
    "maxForeachThreads": ("max_foreach_threads", "64", 64),
    "maxThreads": ("max_threads", "99", 99),
    "clusteringEnabled": ("clustering_enabled", "true", True),
    "clusteringMinTime": ("clustering_min_time", "30", 30),
    "clusteringQueueDelay": ("clustering_queue_delay", "2", 2.0),
    "siteSelectionPolicy": ("site_selection_policy", "best", "best"),
    "memoize": ("memoize", "true", True),
    "memoizeStore": ("memoize_store", "/tmp/store", "/tmp/store"),
    "memoizeCacheSize": ("memoize_cache_size", "2 MB", 2 << 20),
    "monitorListenAddress": ("monitor_listen_address", "0.0.0.0", "0.0.0.0"),
}

#: names that do not set their key's value as given
SPECIAL: dict[str, tuple[str, str, object]] = {
    "ticker.disable": ("ticker_enabled", "true", False),
    "use.provider.staging": ("staging", "true", "local"),
    "use.wrapper.staging": ("staging", "true", "wrapper"),
}

#: accepted for compatibility, no effect (a warning says so)
NO_EFFECT = {"kickstart.enabled": "maybe", "kickstart.always.transfer": "true",
             "pgraph.graph.options": 'splines="compound"',
             "pgraph.node.options": 'color="seagreen"'}


def _case(name: str) -> tuple[str, str, object]:
    """(attribute, value, expected) of one property name."""
    if name in SPECIAL:
        return SPECIAL[name]
    return KEYS[PROPERTIES[name].key]


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A clean directory and environment (no ~/.swift/swift.conf, no SWIFT_*)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("SWIFT_SITE_CONF", "SWIFT_CONF_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.cdm").write_text("rule .* DEFAULT\n")
    return tmp_path


@pytest.fixture
def loaded(monkeypatch):
    """Every Config the one loader builds, in order (both commands go through it)."""
    configs = []
    real = cli_options.load_config

    def spy(*args, **kwargs):
        configs.append(real(*args, **kwargs))
        return configs[-1]

    monkeypatch.setattr(cli_options, "load_config", spy)
    return configs


def test_every_name_has_a_case():
    """Adding a property name without saying what it must do fails here."""
    missing = [n for n in PROPERTIES
               if n not in NO_EFFECT and n not in SPECIAL and PROPERTIES[n].key not in KEYS]
    assert missing == []


def test_the_guide_names_are_all_accepted():
    """Guide 4.1.1 (command-line properties) and 10 (swift.properties) names."""
    guide = ["caching.algorithm", "clustering.enabled", "clustering.min.time",
             "clustering.queue.delay", "ip.address", "kickstart.always.transfer",
             "kickstart.enabled", "lazy.errors", "pgraph.graph.options",
             "pgraph.node.options", "sitedir.keep", "tcp.port.range", "execution.retries",
             "foreach.max.threads", "provenance.log", "replication.enabled",
             "replication.limit", "status.mode", "throttle.file.operations",
             "throttle.host.submit", "throttle.score.job.factor", "throttle.submit",
             "throttle.transfers", "ticker.disable", "wrapper.invocation.mode",
             "wrapper.parameter.mode", "wrapperlog.always.transfer", "cdm.file", "cdmfile",
             "CDMFile", "hostname"]
    assert [n for n in guide if n not in PROPERTIES] == []
    line = parse_command_line(["-sites.file", "s.xml", "-tc.file", "tc.data", "-pgraph",
                               "g.dot", "w.swift"])
    assert (line.sites_file, line.tc_file, line.values["-pgraph"]) == (
        "s.xml", "tc.data", "g.dot")


@pytest.mark.parametrize("name", sorted(PROPERTIES, key=str.lower))
def test_run_and_check_config_give_the_same_config(name, here, loaded, capsys):
    if name in NO_EFFECT:
        argv = ["-" + name, NO_EFFECT[name]]
    else:
        attr, value, expected = _case(name)
        argv = ["-" + name, value]
    assert cli.main(["run", *argv, "-listconfig", "full"]) == 0
    run_dump = capsys.readouterr().out
    out, err = io.StringIO(), io.StringIO()
    assert check_config([*argv, "-listconfig", "full"], out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == run_dump
    run_config, check_config_config = loaded
    if name in NO_EFFECT:
        assert run_config.raw == check_config_config.raw
        assert f"-{name}: removed in Swift 0.96, no effect" in err.getvalue()
        return
    assert getattr(run_config, attr) == expected
    assert getattr(check_config_config, attr) == expected
    assert "# [C]" in run_dump


def test_a_script_after_the_properties_changes_nothing(here, loaded):
    """The same properties before a script reach the run's configuration."""
    (here / "wf.swift").write_text("int i = 1;\n")
    line = parse_command_line(["-clustering.enabled", "true", "-lazy.errors", "wf.swift"])
    config = load_from_args(line, cwd=here)
    assert config.clustering_enabled is True and config.lazy_errors is True
    assert line.script == "wf.swift"


def test_options_script_and_arguments():
    line = parse_command_line(["-config", "my.conf", "-sites", "a,b", "-lazyErrors",
                               "-resume", "x.rlog", "-maxForeachThreads", "64",
                               "script.swift", "-n=10", "-sites", "c", "word"])
    assert line.config_file == "my.conf" and line.properties_file is None
    assert line.conf == {"sites": "c", "lazyErrors": "true", "maxForeachThreads": "64"}
    assert line.values == {"-config": "my.conf", "-resume": "x.rlog"}
    assert line.script == "script.swift" and line.script_args == ["-n=10", "word"]


def test_booleans_legacy_names_and_files():
    line = parse_command_line(["-keepSiteDir", "false", "-execution.retries", "2",
                               "-sites.file", "sites.xml", "-tc.file", "tc.data",
                               "-config", "swift.properties", "-listconfig", "full",
                               "-sitelist", "-ticker.disable", "-lazy.errors=no"])
    assert line.conf == {"keepSiteDir": "false", "executionRetries": "2",
                         "tickerEnabled": "false", "lazyErrors": "no"}
    assert (line.sites_file, line.tc_file, line.properties_file, line.config_file) == (
        "sites.xml", "tc.data", "swift.properties", None)
    assert line.listconfig == "full" and line.sitelist is True
    assert line.given["ticker.disable"] == "true"


def test_a_boolean_does_not_eat_the_script():
    line = parse_command_line(["-sitedir.keep", "wf", "-n=1"])
    assert line.conf == {"keepSiteDir": "true"} and line.script == "wf"


@pytest.mark.parametrize("argv,message", [
    (["-config"], "option -config needs a value"),
    (["-executionRetries"], "option -executionRetries needs a value"),
    (["-sites", "-lazyErrors", "w.swift"], "option -sites needs a value"),
    (["-clustering.enable", "true"],
     "unknown option -clustering.enable (did you mean -clustering.enabled?)"),
    (["-lazyerrors"], "unknown option -lazyerrors (did you mean -lazyErrors?)"),
    (["-configpath", ":"], "-configpath: no file given"),
])
def test_usage_errors(argv, message):
    with pytest.raises(CommandLineError) as caught:
        parse_command_line(argv)
    assert str(caught.value) == message
    assert isinstance(caught.value, ConfigError)


@pytest.mark.parametrize("name", ["cdm.file", "cdmfile", "CDMFile"])
def test_cdm_file_sets_CDMFile_and_must_exist(name, here):
    line = parse_command_line(["-" + name, "policy.cdm"])
    assert load_from_args(line, cwd=here).CDM_file == "policy.cdm"
    missing = parse_command_line(["-" + name, "nope.cdm"])
    with pytest.raises(CommandLineError, match=rf"^-{name} nope.cdm: no such file$"):
        load_from_args(missing, cwd=here)


def test_default_CDM_file_is_not_required(here):
    assert load_from_args(parse_command_line([]), cwd=here).CDM_file == "fs.data"


def test_check_config_unknown_property_and_run_only_options(here):
    err = io.StringIO()
    assert check_config(["-clustering.enable", "true"], out=io.StringIO(), err=err) == 1
    assert err.getvalue() == ("swiftnb check-config: unknown option -clustering.enable "
                              "(did you mean -clustering.enabled?)\n")
    err = io.StringIO()
    assert check_config(["-resume", "x.rlog"], out=io.StringIO(), err=err) == 1
    assert "-resume is an option of swiftnb run, not of check-config" in err.getvalue()
    err = io.StringIO()
    assert check_config(["wf.swift"], out=io.StringIO(), err=err) == 1
    assert "unexpected argument 'wf.swift'" in err.getvalue()


def test_load_from_args(tmp_path, clean_env):
    (tmp_path / "run.conf").write_text(
        "site.b { execution.type: local, workDirectory: wb }\n")
    args = parse_command_line(["-config", "run.conf", "-sites", "local,b", "-lazyErrors",
                               "false", "s.swift"])
    config = load_from_args(args, env=clean_env, cwd=tmp_path)
    assert config.selected_sites == ["local", "b"] and config.lazy_errors is False
    assert config.origin("sites") == "[C]"
    assert sitelist(config) == ("Defined sites:\n  b: local (enabled)\n"
                                "  local: local (enabled)\n")
