"""swift.conf as Swift 0.96 users write it: defaults, forms, loading order, origins."""

from __future__ import annotations

import os
import shutil

import pytest

from swiftnb.coasters.settings import CoasterSettings
from swiftnb.config import DEFAULTS_FILE, THROTTLE_OFF, ConfigError, load_config
from swiftnb.execution.sim import SimProvider


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------ built-in defaults

def test_builtin_defaults_are_the_096_distribution_values(tmp_path, clean_env):
    config = load_config(cwd=tmp_path, env=clean_env)
    assert config.selected_sites == ["local"]
    assert config.lazy_errors is True  # schema false, distribution true
    assert config.always_transfer_wrapper_log is True
    assert config.execution_retries == 0
    assert config.keep_site_dir is False
    assert (config.job_submit_throttle, config.host_job_submit_throttle,
            config.file_transfers_throttle, config.file_operations_throttle) == (4, 2, 4, 8)
    assert config.TCP_port_range == (50000, 50100)
    assert config.replication_enabled is False
    assert (config.replication_min_queue_time, config.replication_limit) == (60, 3)
    assert config.max_foreach_threads == 16384
    assert config.log_provenance is False
    # schema defaults the distribution file does not set
    assert config.staging == "swift" and config.status_mode == "files"
    assert config.wrapper_parameter_mode == "args"
    assert config.ticker_enabled is True and config.ticker_prefix == "Progress: "
    assert config.ticker_date_format is None
    assert config.site_score_throttling_factor == 0.2
    assert config.clustering_enabled is False and config.clustering_min_time == 60
    assert config.site_selection_policy == "weighted"
    assert config.files == [("[D]", DEFAULTS_FILE), ("[C]", "<Command Line>")]


def test_embedded_local_site(tmp_path, clean_env):
    config = load_config(cwd=tmp_path, env=clean_env)
    local = config.sites["local"]
    assert local.execution.type == "local"
    assert local.filesystem is not None and local.filesystem.type == "local"
    assert local.work_directory == "swiftwork"
    assert (local.max_parallel_tasks, local.initial_parallel_tasks) == (2, 2)
    assert local.delay_base == 2.0
    assert local.cleanup_command == "/bin/rm" and local.cleanup_command_options == ["-rf"]
    app = config.app_for("local", "echo")
    assert app is not None and app.executable == "*"
    assert app.executable_for("echo") == "echo"
    assert app.which("sh") == shutil.which("sh")


def test_default_origins_match_the_096_file_lines(tmp_path, clean_env):
    config = load_config(cwd=tmp_path, env=clean_env)
    # the line numbers a real Swift 0.96.2 log printed for its etc/swift.conf
    assert config.origin("tracingEnabled") == "[D] line 51"
    assert config.origin("fileTransfersThrottle") == "[D] line 107"
    assert config.origin("fileOperationsThrottle") == "[D] line 121"
    assert config.origin("replicationMinQueueTime") == "[D] line 153"
    assert config.origin("maxForeachThreads") == "[D] line 194"
    assert config.origin("logProvenance") == "[D] line 200"
    assert config.origin("site.local.execution.type") == "[D] line 223"
    assert config.origin("site.local.workDirectory") == "[D] line 229"
    assert config.origin("site.local.app.ALL.executable") == "[D] line 232"
    assert config.origin("staging") == ""  # schema default, not set in any file


# ---------------------------------------------------------------- user files

def test_the_smallest_test_configuration(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "sites: local\nkeepSiteDir: true\n")
    config = load_config(cwd=tmp_path, env=clean_env)
    assert config.selected_sites == ["local"]
    assert config.keep_site_dir is True
    assert config.sites["local"].keep_site_dir is True
    assert config.origin("keepSiteDir") == "[R] line 2"
    assert config.files[1] == ("[R]", "swift.conf")


@pytest.mark.parametrize("text, expected", [
    ("sites: [a, b]", ["a", "b"]),
    ("sites: a", ["a"]),
    ('sites: "a, b"', ["a", "b"]),
    ("sites: [b]", ["b"]),
    ('sites = ["a", "b"]', ["a", "b"]),
])
def test_sites_forms(tmp_path, clean_env, text, expected):
    write(tmp_path / "swift.conf", text + """
site.a { execution.type: local, workDirectory: "wa" }
site.b { execution { type: "local" }
         workDirectory = "wb" }
""")
    config = load_config(cwd=tmp_path, env=clean_env)
    assert config.selected_sites == expected
    assert [s.name for s in config.enabled_sites] == expected


def test_aimes_two_site_coaster_configuration(data, clean_env):
    env = dict(clean_env, USER="yadunand")
    config = load_config(data / "aimes-swift.conf", env=env)
    assert config.selected_sites == ["stampede"]
    assert set(config.sites) == {"local", "stampede", "gordon"}
    stampede, gordon = config.sites["stampede"], config.sites["gordon"]
    assert stampede.execution.type == "coaster"
    assert stampede.execution.URL == "stampede.tacc.utexas.edu"
    assert (stampede.execution.bootstrap, stampede.execution.lrm) == ("ssh-cl", "slurm")
    assert (gordon.execution.bootstrap, gordon.execution.lrm) == ("ssh-cl", "pbs")
    assert stampede.work_directory == "/tmp/yadunand/swiftwork"
    assert stampede.staging == "local"
    assert (stampede.max_parallel_tasks, stampede.initial_parallel_tasks) == (2000, 2000)
    # the options as the coaster provider reads them (its CoasterSettings declares them)
    coaster = CoasterSettings.from_options(stampede.options)
    assert (coaster.slots, coaster.node_granularity, coaster.max_nodes,
            coaster.jobs_per_node) == (20, 1, 1, 16)
    assert coaster.maxtime == 25 * 60
    assert stampede.options["jobQueue"] == "normal"
    assert coaster.low_overallocation == 10.0  # default kept
    g = CoasterSettings.from_options(gordon.options)
    assert (g.low_overallocation, g.high_overallocation) == (100.0, 100.0)
    assert gordon.options["jobProject"] == "unc100"
    assert gordon.options["jobOptions"] == {"depth": 16}
    assert stampede.options["maxJobTime"] == "00:25:00"  # raw options kept as written
    app = config.app_for("stampede", "sleep")
    assert app.executable_for("sleep") == "sleep" and app.max_wall_time == 20 * 60
    assert config.execution_retries == 1 and config.keep_site_dir is True
    assert (config.job_submit_throttle, config.host_job_submit_throttle) == (10, 10)
    assert config.TCP_port_range == (50000, 51000)
    assert config.provider_staging_pin_swift_files is False


def test_dump_is_the_swift_096_configuration_block(data, clean_env):
    """Same text, byte for byte, as the SWIFT_CONFIGURATION block of a real 0.96.2 log."""
    env = dict(clean_env, USER="yadunand")
    config = load_config(data / "aimes-swift.conf", env=env)
    real = (data / "aimes-run017-dump.txt").read_text()
    real_lines = real.splitlines()
    mine_lines = config.dump().splitlines()
    assert mine_lines[0] == f"[D] {DEFAULTS_FILE}"
    assert real_lines[0].startswith("[D] ")
    assert mine_lines[1] == f"[R] {data / 'aimes-swift.conf'}"
    assert mine_lines[2:] == real_lines[2:]
    assert config.dump().endswith("}\n")


def test_dump_annotations(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "sites: [local]\nsite.local.maxParallelTasks: 3\n")
    config = load_config(cwd=tmp_path, env=clean_env, properties={"lazyErrors": "false"})
    text = config.dump()
    assert "\tlazyErrors: false" in text
    line = next(x for x in text.splitlines() if "lazyErrors" in x)
    assert line.endswith("# [C]") and line.index("#") == 60
    assert "\tsite.local {" in text and "\t\tmaxParallelTasks: 3" in text
    assert "\tsites: [local]" in text


def test_values_from_env_substitution(tmp_path, clean_env):
    env = dict(clean_env, SCRATCH="/scratch/alice")
    write(tmp_path / "swift.conf", 'site.local.workDirectory: ${env.SCRATCH}"/swiftwork"\n'
          'hostName: ${?env.NOT_SET_ANYWHERE}\n')
    config = load_config(cwd=tmp_path, env=env)
    assert config.sites["local"].work_directory == "/scratch/alice/swiftwork"
    assert config.host_name is None  # optional substitution left the key out
    # Swift 0.96 printed env-built values as command-line ones
    assert config.origin("site.local.workDirectory") == "[C]"
    detail = config.origin_detail("site.local.workDirectory")
    assert (detail.file, detail.line) == ("swift.conf", 1)


def test_system_property_substitution(tmp_path, clean_env):
    write(tmp_path / "swift.conf", 'site.local.workDirectory: ${user.home}"/work"\n')
    config = load_config(cwd=tmp_path, env=clean_env)
    assert config.sites["local"].work_directory == clean_env["HOME"] + "/work"


def test_include_relative_and_with_env_in_path(tmp_path, clean_env):
    write(tmp_path / "conf.d" / "throttles.conf", "\n\njobSubmitThrottle: 16\n")
    write(tmp_path / "shared" / "apps.conf", "site.local.app.cat { executable: /bin/cat }\n")
    env = dict(clean_env, SHARED=str(tmp_path / "shared"))
    write(tmp_path / "swift.conf", 'include "conf.d/throttles.conf"\n'
          'include "${env.SHARED}/apps.conf"\nsites: [local]\n')
    config = load_config(cwd=tmp_path, env=env)
    assert config.job_submit_throttle == 16
    assert config.origin("jobSubmitThrottle") == "[R] throttles.conf line 3"
    assert config.app_for("local", "cat").executable == "/bin/cat"


def test_include_inside_an_object(tmp_path, clean_env):
    write(tmp_path / "local-site.conf", "maxParallelTasks: 6\ninitialParallelTasks: 3\n")
    write(tmp_path / "swift.conf", 'site.local {\n  include "local-site.conf"\n}\n')
    config = load_config(cwd=tmp_path, env=clean_env)
    assert config.sites["local"].max_parallel_tasks == 6
    assert config.origin("site.local.maxParallelTasks") == "[R] local-site.conf line 1"


def test_null_deletes_an_earlier_definition(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "site.local: null\nsite.here {\n  execution.type: local\n"
          "  workDirectory: w\n}\nsites: here\n")
    config = load_config(cwd=tmp_path, env=clean_env)
    assert "local" not in config.sites and list(config.sites) == ["here"]
    assert config.app_for("here", "echo") is None  # the embedded app.ALL went too


def test_objects_merge_and_scalars_override_across_files(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "site.local { maxParallelTasks: 8, initialParallelTasks: 8 }\n"
          "site.local.execution { type: local }\n")
    config = load_config(cwd=tmp_path, env=clean_env)
    local = config.sites["local"]
    assert local.max_parallel_tasks == 8 and local.work_directory == "swiftwork"
    assert config.origin("site.local.workDirectory") == "[D] line 229"
    assert config.origin("site.local.execution.type") == "[R] line 2"


# ------------------------------------------------------------- loading order

def test_loading_order_and_tags(tmp_path, clean_env):
    home = tmp_path / "home"
    site_conf = write(tmp_path / "etc" / "site.conf",
                      "jobSubmitThrottle: 5\nhostJobSubmitThrottle: 5\n"
                      "fileTransfersThrottle: 5\nfileOperationsThrottle: 5\n")
    write(home / ".swift" / "swift.conf",
          "hostJobSubmitThrottle: 6\nfileTransfersThrottle: 6\nfileOperationsThrottle: 6\n")
    write(tmp_path / "run" / "swift.conf", "fileTransfersThrottle: 7\nfileOperationsThrottle: 7\n")
    env = dict(clean_env, SWIFT_SITE_CONF=str(site_conf))
    config = load_config(cwd=tmp_path / "run", env=env,
                         properties={"fileOperationsThrottle": "9"})
    assert (config.job_submit_throttle, config.host_job_submit_throttle,
            config.file_transfers_throttle, config.file_operations_throttle) == (5, 6, 7, 9)
    assert [tag for tag, _ in config.files] == ["[D]", "[S]", "[U]", "[R]", "[C]"]
    assert config.origin("jobSubmitThrottle") == "[S] line 1"
    assert config.origin("hostJobSubmitThrottle") == "[U] line 1"
    assert config.origin("fileTransfersThrottle") == "[R] line 1"
    assert config.origin("fileOperationsThrottle") == "[C]"


def test_config_option_replaces_the_current_directory_file(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "jobSubmitThrottle: 7\n")
    other = write(tmp_path / "other.conf", "hostJobSubmitThrottle: 3\n")
    config = load_config(other, cwd=tmp_path, env=clean_env)
    assert config.job_submit_throttle == 4  # ./swift.conf not read
    assert config.host_job_submit_throttle == 3
    assert ("[R]", str(other)) in config.files


def test_configpath_replaces_the_search(tmp_path, clean_env):
    a = write(tmp_path / "a.conf", "site.x { execution.type: local, workDirectory: w }\n"
              "sites: x\n")
    b = write(tmp_path / "b.conf", "lazyErrors: false\n")
    config = load_config(cwd=tmp_path, env=clean_env, configpath=[str(a), str(b)])
    assert list(config.sites) == ["x"] and config.lazy_errors is False
    assert config.job_submit_throttle == 4  # schema default, no [D] file


def test_missing_files_named(tmp_path, clean_env):
    with pytest.raises(ConfigError, match=r"^nope.conf: configuration file not found$"):
        load_config("nope.conf", cwd=tmp_path, env=clean_env)
    env = dict(clean_env, SWIFT_SITE_CONF=str(tmp_path / "gone.conf"))
    with pytest.raises(ConfigError, match=r"gone.conf: configuration file not found"):
        load_config(cwd=tmp_path, env=env)


# ------------------------------------------------------------- command line

def test_command_line_properties(tmp_path, clean_env):
    write(tmp_path / "swift.conf",
          "site.b { execution.type: local, workDirectory: wb }\nsites: [local]\n")
    config = load_config(cwd=tmp_path, env=clean_env, properties={
        "sites": "local,b", "lazyErrors": "false", "keepSiteDir": "true",
        "TCPPortRange": "40000, 40010", "site.b.maxParallelTasks": "4",
        "maxForeachThreads": "64", "tracingEnabled": "true", "hostName": "10.0.0.5",
        "jobSubmitThrottle": "off", "execution.retries": "2"})
    assert config.selected_sites == ["local", "b"]
    assert config.lazy_errors is False and config.keep_site_dir is True
    assert config.TCP_port_range == (40000, 40010)
    assert config.sites["b"].max_parallel_tasks == 4
    assert config.max_foreach_threads == 64 and config.tracing_enabled is True
    assert config.host_name == "10.0.0.5" and config.job_submit_throttle == THROTTLE_OFF
    assert config.execution_retries == 2  # legacy property names accepted too
    assert config.origin("sites") == "[C]" and config.origin("site.b.maxParallelTasks") == "[C]"


def test_command_line_error_says_command_line(tmp_path, clean_env):
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env=clean_env, properties={"maxForeachThreads": "many"})
    assert str(info.value) == ("<Command Line>: maxForeachThreads: invalid value \"many\", "
                               "expected an integer from 1 to 2147483647")


# ------------------------------------------------------------------ app lookup

def test_app_resolution_order(tmp_path, clean_env):
    write(tmp_path / "swift.conf", """
sites: [s]
app.ALL { env.LANG: "C", env.WHO: "global-all", maxWallTime: "5" }
app.sim { executable: "/global/sim", env.WHO: "global-sim" }
app.only { executable: "/global/only" }
site.s {
    execution.type: local
    workDirectory: w
    app.sim { executable: "/site/sim", maxWallTime: "01:00:00" }
    app.ALL { env.SITE: "s" }
}
site.t {
    execution.type: local
    workDirectory: w
    app.ALL { executable: "*" }
}
""")
    config = load_config(cwd=tmp_path, env=clean_env)
    sim = config.app_for("s", "sim")
    assert sim.executable == "/site/sim" and sim.name == "sim"
    assert sim.max_wall_time == 3600
    assert sim.env == {"LANG": "C", "WHO": "global-sim", "SITE": "s"}
    only = config.app_for("s", "only")
    assert only.executable == "/global/only" and only.max_wall_time == 300
    # site t: its app.ALL (executable "*") comes before the global app.only
    assert config.app_for("t", "only").executable_for("only") == "only"
    # nothing on site s names an executable for "other", nor does the global app.ALL
    assert config.app_for("s", "other") is None
    assert config.sites_for("other") == []
    assert config.sites_for("sim") == ["s"]


def test_app_attributes_and_options(tmp_path, clean_env):
    write(tmp_path / "swift.conf", """
site.local.app.mpi {
    executable: "/opt/mpi/app"
    maxWallTime: "00:10:00"
    options { jobQueue: "debug", count: 4, ppn: 2, mpi.processes: 8 }
    jobType: "MPI"
    env { OMP_NUM_THREADS: 2 }
}
""")
    config = load_config(cwd=tmp_path, env=clean_env)
    app = config.app_for("local", "mpi")
    assert app.options == {"jobQueue": "debug", "count": 4, "ppn": 2, "mpi": {"processes": 8}}
    assert app.attributes == {"jobType": "MPI"}
    assert app.env == {"OMP_NUM_THREADS": "2"} and app.max_wall_time_text == "00:10:00"


# ------------------------------------------------------ later-feature keys

def test_two_site_coasters_and_sim_keys_are_kept(data, clean_env):
    env = dict(clean_env, HOME="/home/alice")
    config = load_config(data / "midway-beagle.conf", env=env)
    assert config.selected_sites == ["midway", "beagle"]
    midway = config.sites["midway"]
    assert midway.execution.job_manager == "local:slurm" and midway.execution.lrm == "slurm"
    assert midway.work_directory == "/home/alice/swiftwork"
    options = midway.options
    CoasterSettings.from_options(options)  # the coaster provider takes them
    assert options["workerLoggingLevel"] == "DEBUG"
    assert options["workerLoggingDirectory"] == "/home/alice/coaster-logs"
    assert options["jobOptions"] == {"slurm": {"exclusive": True, "mem-per-cpu": "2000"}}
    assert options.get("jobProject") is None  # ${?env.SWIFT_PROJECT} unset
    beagle = config.sites["beagle"]
    assert beagle.options["jobOptions"]["pbs"] == {"aprun": True, "mpp": True}
    assert beagle.options["userHomeOverride"] == "/lustre/beagle/alice"
    simulate = config.app_for("beagle", "simulate")
    assert simulate.max_wall_time == 45 * 60  # a bare number is minutes
    assert simulate.env == {"LANG": "C", "OMP_NUM_THREADS": "24"}
    sim = SimProvider("grid1", config.sites["grid1"].options)  # the sim provider's reading
    assert (sim.slots, sim.failure_probability, sim.seed, sim.speed) == (8, 0.05, 1, 1.5)
    assert (sim.queue_time.kind, sim.queue_time.params) == ("exp", (20.0,))
    assert (sim.task_duration.kind, sim.task_duration.params) == ("uniform", (30.0, 90.0))
    assert sim.outages == [(600.0, 120.0)]
    assert config.job_submit_throttle == THROTTLE_OFF
    assert config.execution_retries == 2 and config.replication_enabled is True
    assert config.site_selection_policy == "sitesets"
    assert config.site_selection_options == {"queueTimeThrottle": 300, "jobThrottle": 0.2}
    assert config.origin("app.analyse.executable") == "[R] apps.conf line 6"
    assert config.get("site.beagle.execution.options.maxJobs") == 2
    assert config.get("site.nothere.x", "dflt") == "dflt"


def test_sim_site_without_work_directory_and_distribution_sampling(tmp_path, clean_env):
    write(tmp_path / "swift.conf", """
sites: [g]
site.g.execution { type: sim, options { queueTime: 5, taskDuration: "normal:60:10",
                   outages: "100+20, 400+5" } }
""")
    import random

    config = load_config(cwd=tmp_path, env=clean_env)
    sim = SimProvider("g", config.sites["g"].options)
    assert sim.queue_time.sample(random.Random(1)) == 5.0
    draws = [sim.task_duration.sample(random.Random(i)) for i in range(200)]
    assert all(d >= 0 for d in draws) and 50 < sum(draws) / len(draws) < 70
    assert sim.outages == [(100.0, 20.0), (400.0, 5.0)]
    assert config.sites["g"].type == "sim" and sim.slots == 8  # the provider's default


def test_execution_options_are_checked_by_the_provider_of_the_sites_type(tmp_path, clean_env):
    """Options are the provider's (declared once, by its options class): a key of another
    provider, or a misspelt one, is refused when the run is built and by check-config,
    with the nearest key of the right provider."""
    from swiftnb.scheduling.build import check_sites

    write(tmp_path / "swift.conf", """
sites: [c, s]
site.c { execution { type: coaster, options { maxJobs: 2, slots: 4, queueTime: 5 } }
         workDirectory: "w" }
site.s { execution { type: ssh, URL: "h", options { user: "me", pythn: "python3" } }
         workDirectory: "w" }
""")
    config = load_config(cwd=tmp_path, env=clean_env)  # the schema leaves options to providers
    problems = check_sites(config)
    assert len(problems) == 2
    assert "site.c.execution.options.queueTime" in problems[0]
    assert "site.s.execution.options.pythn" in problems[1] and "python" in problems[1]

def test_time_and_throttle_types():
    from swiftnb.config.types import BadValue, ValueType, time_to_seconds

    assert time_to_seconds("10") == 600 and time_to_seconds(10) == 600
    assert time_to_seconds("01:30") == 5400 and time_to_seconds("00:25:00") == 1500
    throttle = ValueType("throttle")
    assert throttle.convert("off") == THROTTLE_OFF and throttle.convert("12") == 12
    for bad in ("0", "-3", "lots", 1.5):
        with pytest.raises(BadValue):
            throttle.convert(bad)


def test_listconfig_files(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "sites: local\n")
    config = load_config(cwd=tmp_path, env=clean_env)
    assert config.listconfig() == f"[D] {DEFAULTS_FILE}\n[R] swift.conf\n[C] <Command Line>\n"


def test_defaults_file_is_shipped():
    assert os.path.isfile(DEFAULTS_FILE)


def test_load_config_text_reads_no_user_file(tmp_path, monkeypatch):
    from swiftnb.config import load_config_text

    home = tmp_path / "home"
    write(home / ".swift" / "swift.conf", "jobSubmitThrottle: 99\n")
    monkeypatch.setenv("HOME", str(home))
    config = load_config_text("sites: [g]\nsite.g.execution { type: sim, options.slots: 4 }\n",
                              properties={"lazyErrors": "false"})
    assert config.job_submit_throttle == 4
    assert config.selected_sites == ["g"] and config.sites["g"].options == {"slots": 4}
    assert config.lazy_errors is False
    assert config.origin("sites") == "[R] line 1"
    with pytest.raises(ConfigError, match=r"^swift.conf:1: sites: unknown site \"h\""):
        load_config_text("sites: h")


def test_null_then_redefinition_in_a_later_file_cuts_off_the_defaults(tmp_path, clean_env):
    write(tmp_path / "swift.conf", "site.local: null\nsite.local {\n  execution.type: local\n"
          "  workDirectory: /w\n}\n")
    config = load_config(cwd=tmp_path, env=clean_env)
    local = config.sites["local"]
    assert local.work_directory == "/w" and local.filesystem is None
    assert config.app_for("local", "echo") is None  # the built-in app.ALL is gone
    assert config.origin("site.local.workDirectory") == "[R] line 4"


def test_windows_and_provider_staging_wrapper_defaults(tmp_path, clean_env):
    write(tmp_path / "swift.conf", """
sites: [win, staged]
site.win { execution.type: local, workDirectory: "C:/work", OS: "INTEL32::WINDOWS" }
site.staged { execution.type: local, workDirectory: w, staging: "local" }
""")
    config = load_config(cwd=tmp_path, env=clean_env)
    win, staged = config.sites["win"], config.sites["staged"]
    assert (win.wrapper_interpreter, win.wrapper_interpreter_options, win.wrapper_script) == (
        "cscript.exe", ["//Nologo"], "_swiftwrap.vbs")
    assert (win.cleanup_command, win.cleanup_command_options) == ("cmd.exe", ["/C", "del", "/Q"])
    assert staged.wrapper_script == "_swiftwrap.staging"
    assert config.sites["local"].wrapper_script == "_swiftwrap"


def test_include_forms_and_swift_conf_path(tmp_path, clean_env):
    write(tmp_path / "a.conf", "jobSubmitThrottle: 11\n")
    write(tmp_path / "b.conf", "hostJobSubmitThrottle: 12\n")
    write(tmp_path / "swift.conf", 'include file("a.conf")\ninclude required(file("b.conf"))\n')
    config = load_config(cwd=tmp_path, env=clean_env)
    assert (config.job_submit_throttle, config.host_job_submit_throttle) == (11, 12)
    assert config.origin("hostJobSubmitThrottle") == "[R] b.conf line 1"
    write(tmp_path / "c.conf", "sites: x\nsite.x { execution.type: local, workDirectory: w }\n")
    env = dict(clean_env, SWIFT_CONF_PATH=f"{tmp_path / 'a.conf'}:{tmp_path / 'c.conf'}")
    config = load_config(cwd=tmp_path, env=env)  # replaces [D]..[R]
    assert [tag for tag, _ in config.files] == ["[R]", "[R]", "[C]"]
    assert list(config.sites) == ["x"] and config.job_submit_throttle == 11


@pytest.mark.parametrize("which", ["aimes", "midway", "legacy", "guide", "095"])
def test_dump_is_hocon_for_the_same_tree(data, clean_env, which):
    """The braces of the dump parse back (as HOCON) to exactly the merged tree."""
    from pyhocon import ConfigFactory

    from swiftnb.config.hocon import _plain

    env = dict(clean_env, USER="yadunand", SUBMIT_HOST="h", HOME="/home/alice")
    config = {
        "aimes": lambda: load_config(data / "aimes-swift.conf", env=env),
        "midway": lambda: load_config(data / "midway-beagle.conf", env=env),
        "legacy": lambda: load_config(properties_file=data / "legacy" / "swift.properties",
                                      env=env),
        "guide": lambda: load_config(properties_file=data / "guide" / "swift.properties",
                                     env=env),
        "095": lambda: load_config(properties_file=data / "legacy095" / "swift.properties",
                                   env=env),
    }[which]()
    text = config.dump()
    body = text[text.index("\n{") + 1:]
    assert _plain(ConfigFactory.parse_string(body)) == config.raw


def test_examples_of_the_configuration_doc_load():
    import pathlib

    from swiftnb.config import load_config_text

    doc = pathlib.Path(__file__).parents[2] / "docs" / "configuration.md"
    blocks, current, inside, lang = [], [], False, ""
    for line in doc.read_text().splitlines(keepends=True):
        if line.startswith("```"):
            if inside:
                blocks.append((lang, "".join(current)))
                current = []
            else:
                lang = line[3:].strip()
            inside = not inside
        elif inside:
            current.append(line)
    examples = [text for lang, text in blocks
                if lang == "" and text.startswith("sites:")]  # not the message samples
    assert len(examples) >= 2
    for text in examples:
        config = load_config_text(text, env={"HOME": "/home/alice"})
        assert config.selected_sites
