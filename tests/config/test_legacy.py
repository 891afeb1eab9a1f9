"""The legacy trio (sites.xml, tc.data, swift.properties) -> the same typed model."""

from __future__ import annotations

import pytest

from swiftnb.coasters.settings import CoasterSettings

from swiftnb.config import THROTTLE_OFF, ConfigError, load_config
from swiftnb.config.legacy import tscore


def test_trio_named_by_swift_properties(data, clean_env):
    env = dict(clean_env, SUBMIT_HOST="submit.example.org")
    config = load_config(properties_file=data / "legacy" / "swift.properties", env=env)
    # swift.properties -> global keys
    assert config.lazy_errors is True and config.execution_retries == 3
    assert config.keep_site_dir is True and config.always_transfer_wrapper_log is True
    assert config.job_submit_throttle == 8 and config.host_job_submit_throttle == THROTTLE_OFF
    assert (config.file_transfers_throttle, config.file_operations_throttle) == (16, 16)
    assert config.site_score_throttling_factor == 0.5
    assert config.replication_enabled is True
    assert (config.replication_min_queue_time, config.replication_limit) == (120, 2)
    assert config.max_foreach_threads == 1024
    assert config.status_mode == "provider" and config.wrapper_parameter_mode == "files"
    assert config.TCP_port_range == (50000, 50100)
    assert config.host_name == "submit.example.org"  # ${env.X} expanded
    assert config.staging == "local"  # use.provider.staging=true
    assert config.ticker_enabled is True
    assert (config.clustering_enabled, config.clustering_min_time,
            config.clustering_queue_delay) == (True, 30, 5.0)
    assert any("kickstart.enabled: ignored" in w for w in config.warnings)
    # sites.xml -> sites, all pools enabled in file order
    assert config.selected_sites == ["localhost", "beagle", "tgncsa"]
    local = config.sites["localhost"]
    assert local.execution.type == "local" and local.filesystem.type == "local"
    assert local.work_directory == "/home/alice/swiftwork"
    assert local.OS == "INTEL32::LINUX"
    # karajan jobThrottle 0.07, initialScore 10000 -> int(0.07*100+1), int(0.07*tscore+1)
    assert local.max_parallel_tasks == 8
    assert local.initial_parallel_tasks == int(0.07 * tscore(10000) + 1) == 7
    assert local.job_throttle == 0.07 and local.initial_score == 10000
    beagle = config.sites["beagle"]
    assert beagle.execution.type == "coaster" and beagle.execution.job_manager == "ssh-cl:pbs"
    assert beagle.staging == "local"  # a pool without a filesystem
    assert (beagle.max_parallel_tasks, beagle.initial_parallel_tasks) == (240, 239)
    assert beagle.delay_base == 3.0
    coaster = CoasterSettings.from_options(beagle.options)  # as the coaster provider reads them
    assert (beagle.options["jobQueue"], beagle.options["jobProject"]) == ("batch", "CI-CCR000013")
    assert coaster.maxtime == 3600 and beagle.options["maxJobTime"] == "01:00:00"
    assert (coaster.slots, coaster.max_nodes, coaster.jobs_per_node) == (10, 2, 24)
    assert (coaster.low_overallocation, coaster.high_overallocation) == (100.0, 100.0)
    assert beagle.options["jobOptions"] == {"pbs": {"aprun": True, "mpp": True}, "depth": "24"}
    gram = config.sites["tgncsa"]
    assert (gram.execution.type, gram.execution.URL, gram.execution.job_manager) == (
        "gt2", "grid-hg.ncsa.teragrid.org", "PBS")
    assert gram.filesystem.type == "gsiftp"
    assert gram.filesystem.URL == "gsiftp://gridftp-hg.ncsa.teragrid.org"
    # tc.data -> apps
    echo = config.app_for("localhost", "echo")
    assert echo.executable == "/bin/echo"
    assert echo.env == {"OMP_NUM_THREADS": "1"}  # sites.xml env profile: app.ALL.env
    r = config.app_for("localhost", "R")
    assert r.env == {"OMP_NUM_THREADS": "1", "R_LIBS": "/home/user/r_libs",
                     "R_HOME": "/home/user/r"}
    assert config.app_for("localhost", "sort") is None  # not in tc.data
    sim = config.app_for("beagle", "sim_job")
    assert sim.max_wall_time == 20 * 60 and sim.options == {"jobQueue": "scalability"}
    anything = config.app_for("beagle", "whatever")  # the `*` entry
    assert anything.executable_for("whatever") == "whatever"
    assert anything.env == {"PATH": "/lustre/beagle/alice/bin:/usr/bin:/bin"}
    assert anything.max_wall_time == 15 * 60  # globus:maxWallTime of the pool
    touch = config.app_for("tgncsa", "touch")
    assert touch.max_wall_time == 60 and touch.options == {"jobQueue": "debug"}
    assert touch.env == {"PATHPREFIX": "/home/ac/alice/bin"}


def test_legacy_origins_name_file_and_line(data, clean_env):
    config = load_config(properties_file=data / "legacy" / "swift.properties",
                         env=dict(clean_env, SUBMIT_HOST="h"))
    assert config.origin("executionRetries") == "[R] swift.properties line 6"
    assert config.origin("site.beagle.execution.options.maxJobs") == "[R] sites.xml line 20"
    assert config.origin("site.localhost.app.R.env.R_HOME") == "[R] tc.data line 4"
    legacy = data / "legacy"
    assert config.files[1:] == [("[R]", str(legacy / "swift.properties")),
                                ("[R]", str(legacy / "sites.xml")),
                                ("[R]", str(legacy / "tc.data")),
                                ("[C]", "<Command Line>")]
    text = config.dump()
    assert text.splitlines()[2] == f"[R] {legacy / 'sites.xml'}"
    line = next(x for x in text.splitlines() if "maxParallelTasks: 240" in x)
    assert line.endswith("# [R] sites.xml line 28")


def test_user_guide_examples(data, clean_env):
    config = load_config(properties_file=data / "guide" / "swift.properties", env=clean_env)
    assert config.host_name == "192.168.0.1"  # ip.address (deprecated) -> hostName
    assert config.selected_sites == ["example", "localhost", "pbscluster", "condorg", "i2u2",
                                     "teragrid"]
    example = config.sites["example"]
    assert (example.execution.type, example.execution.URL,
            example.execution.job_manager) == ("gt2", "example.org", "PBS")
    assert example.filesystem.URL == "gsiftp://example.org"
    assert any("swift:storagesize ignored" in w for w in config.warnings)
    assert config.sites["localhost"].max_submit_rate == 0.2
    pbs = config.sites["pbscluster"]
    assert pbs.execution.type == "pbs" and pbs.execution.URL is None
    assert config.app_for("pbscluster", "x") is None  # no tc.data entry for it
    condor = config.sites["condorg"]
    assert condor.raw["app"]["ALL"]["options"] == {
        "jobType": "grid", "gridResource": "gt2 belhaven-1.renci.org/jobmanager-fork"}
    ssh = config.sites["i2u2"]
    assert (ssh.execution.type, ssh.execution.URL) == ("ssh", "www11.i2u2.org")
    assert (ssh.filesystem.type, ssh.filesystem.URL) == ("ssh", "www11.i2u2.org")
    tg = config.sites["teragrid"]
    assert tg.execution.job_manager == "gt2:gt2:pbs" and tg.execution.lrm == "pbs"
    opts = CoasterSettings.from_options(tg.options)
    assert (opts.maxtime, opts.slots, opts.node_granularity, opts.max_nodes,
            opts.jobs_per_node) == (7200, 8, 2, 4, 8)
    assert (opts.allocation_step_size, opts.overallocation_decay_factor, opts.spread,
            opts.reserve, opts.internal_hostname) == (0.5, 0.002, 0.5, 30, "10.0.0.1")
    # tc.data: echo with maxwalltime, R with one and with two env profiles
    assert config.app_for("localhost", "echo2").max_wall_time == 20 * 60
    assert config.app_for("localhost", "R").env == {"R_LIBS": "/home/user/r_libs"}
    assert config.app_for("localhost", "R2").env == {"R_LIBS": "/home/user/r_libs",
                                                     "R_HOME": "/home/user/r"}
    assert any("'TGUC' is not in the site catalog" in w for w in config.warnings)


def test_tc_data_alone_maps_localhost_to_the_builtin_local_site(tmp_path, clean_env):
    (tmp_path / "tc.data").write_text(
        "localhost  echo  /bin/echo  INSTALLED  INTEL32::LINUX  null\n"
        "localhost  wc    /usr/bin/wc  INSTALLED  INTEL32::LINUX  "
        'GLOBUS::maxwalltime="00:05:00";env::LC_ALL="C"\n')
    config = load_config(tc_file="tc.data", cwd=tmp_path, env=clean_env)
    assert config.selected_sites == ["local"]
    assert config.app_for("local", "echo").executable == "/bin/echo"
    wc = config.app_for("local", "wc")
    assert wc.max_wall_time == 300 and wc.env == {"LC_ALL": "C"}
    assert config.origin("site.local.app.wc.env.LC_ALL") == "[R] tc.data line 2"


def test_sites_xml_local_pool_replaces_builtin_local(tmp_path, clean_env):
    (tmp_path / "sites.xml").write_text(
        '<sites>\n <pool handle="local">\n  <execution provider="local"/>\n'
        "  <workdirectory>/tmp/w</workdirectory>\n </pool>\n</sites>\n")
    config = load_config(sites_file="sites.xml", cwd=tmp_path, env=clean_env)
    local = config.sites["local"]
    assert local.work_directory == "/tmp/w"
    assert local.filesystem is None and local.staging == "local"
    assert config.app_for("local", "echo") is None  # the built-in app.ALL is gone
    assert config.origin("site.local.workDirectory") == "[R] sites.xml line 4"


def test_legacy_files_replace_current_directory_swift_conf(tmp_path, clean_env):
    (tmp_path / "swift.conf").write_text("jobSubmitThrottle: 99\n")
    (tmp_path / "swift.properties").write_text("throttle.host.submit=3\n")
    config = load_config(properties_file="swift.properties", cwd=tmp_path, env=clean_env)
    assert config.job_submit_throttle == 4 and config.host_job_submit_throttle == 3
    config = load_config("swift.conf", properties_file="swift.properties", cwd=tmp_path,
                         env=clean_env)
    assert config.job_submit_throttle == 99 and config.host_job_submit_throttle == 3


def test_missing_legacy_file(tmp_path, clean_env):
    with pytest.raises(ConfigError, match=r"^sites.xml: site catalog not found$"):
        load_config(sites_file="sites.xml", cwd=tmp_path, env=clean_env)


def test_legacy_wrong_value_reported_at_its_line(tmp_path, clean_env):
    (tmp_path / "swift.properties").write_text("# x\n\nexecution.retries=many\n")
    with pytest.raises(ConfigError) as info:
        load_config(properties_file="swift.properties", cwd=tmp_path, env=clean_env)
    assert str(info.value) == ('swift.properties:3: executionRetries: invalid value "many", '
                               "expected an integer from 0 to 2147483647")


def test_selected_site_with_only_applications_is_an_error(tmp_path, clean_env):
    (tmp_path / "tc.data").write_text("cluster  echo  /bin/echo  INSTALLED  INTEL32::LINUX  null\n")
    config = load_config(tc_file="tc.data", cwd=tmp_path, env=clean_env)
    assert "cluster" not in config.sites
    assert any("site.cluster: only applications" in w for w in config.warnings)
    with pytest.raises(ConfigError) as info:
        load_config(tc_file="tc.data", cwd=tmp_path, env=clean_env,
                    properties={"sites": "cluster"})
    assert str(info.value) == ("tc.data:1: site.cluster.execution.type: missing mandatory "
                               "key (the execution provider, e.g. local, coaster, slurm, sim)")


def test_swift_095_properties_with_site_definitions(data, clean_env):
    env = dict(clean_env, USER="alice")
    config = load_config(properties_file=data / "legacy095" / "swift.properties", env=env)
    assert config.selected_sites == ["sandyb", "westmere"]
    assert config.keep_site_dir is True and config.always_transfer_wrapper_log is True
    sandyb, westmere = config.sites["sandyb"], config.sites["westmere"]
    assert (sandyb.execution.type, sandyb.execution.job_manager) == ("coaster", "local:slurm")
    assert sandyb.work_directory == "/scratch/midway/alice/work"  # $USER expanded
    assert sandyb.filesystem.type == "local"
    opts = CoasterSettings.from_options(sandyb.options)
    assert (opts.jobs_per_node, sandyb.options["jobQueue"], opts.slots) == (16, "sandyb", 1)
    assert westmere.options["jobOptions"] == {
        "slurm": {"mail-user": "alice"}, "pbs": {"aprun": True}, "depth": "12"}
    assert (westmere.max_parallel_tasks, westmere.initial_parallel_tasks) == (24, 24)
    assert westmere.initial_score == 10000
    echo = config.app_for("sandyb", "echo")
    assert echo.executable == "/bin/echo" and echo.max_wall_time == 300
    # an app is defined, so 0.95 turned the $PATH wildcard off
    assert config.app_for("westmere", "cat") is None
    assert config.origin("site.sandyb.execution.options.maxJobs") == (
        "[R] swift.properties line 7")


def test_swift_095_properties_without_apps_use_path(tmp_path, clean_env):
    (tmp_path / "swift.properties").write_text(
        "site.westmere.jobManager=slurm\nsite.westmere.workdir=/w\nsite=westmere\n"
        "site.westmere.tasksPerWorkr=4\n")
    with pytest.raises(ConfigError) as info:
        load_config(properties_file="swift.properties", cwd=tmp_path, env=clean_env)
    assert str(info.value) == ("swift.properties:4: site.westmere.tasksPerWorkr: unknown "
                               "site property, did you mean tasksPerWorker?")
    (tmp_path / "swift.properties").write_text(
        "site.westmere.jobManager=slurm\nsite.westmere.workdir=/w\nsite=westmere\n")
    config = load_config(properties_file="swift.properties", cwd=tmp_path, env=clean_env)
    assert config.app_for("westmere", "cat").executable_for("cat") == "cat"


def test_config_option_naming_a_properties_file(data, clean_env):
    config = load_config(data / "legacy095" / "swift.properties",
                         env=dict(clean_env, USER="alice"))
    assert config.selected_sites == ["sandyb", "westmere"]
