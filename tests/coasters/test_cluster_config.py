"""Coaster sites whose blocks are batch jobs: what their configuration may say.

Every key of such a site takes effect, or is refused with the key, its place and why, or
(one Swift 0.96 took and ignored) is left out with a warning that says the same: none is
silently dropped (issue 13).  No daemon is needed: nothing here connects.
"""

from __future__ import annotations

import pytest

from swiftnb.coasters import make_provider
from swiftnb.coasters.blocks import LocalBlockProvider
from swiftnb.coasters.cluster import ClusterBlockProvider
from swiftnb.coasters.provider import CoasterProvider
from swiftnb.config import load_config_text
from swiftnb.events import EventBus
from swiftnb.scheduling.build import BuildContext
from swiftnb.scheduling.clock import RealClock
from swiftnb.scheduling.scheduler import SchedulerError as CoasterConfigError


def provider(execution: str, extra: str = "", warnings: list[str] | None = None
             ) -> CoasterProvider:
    """The coaster provider a run would build for site ``c`` (messages name swift.conf);
    the configuration's warnings go to ``warnings``."""
    config = load_config_text(
        "site.c {\n"
        f"  execution {{ {execution} }}\n"
        '  workDirectory: "/tmp/w"\n'
        f"  {extra}\n"
        "}\nsites: [c]\n")
    ctx = BuildContext(config, EventBus(), RealClock(), site_run="run-1")
    made = make_provider(config.sites["c"], ctx)
    if warnings is not None:
        warnings.extend(config.warnings)
    return made


def test_a_batch_job_manager_makes_a_cluster_block_provider():
    p = provider('type: "coaster", jobManager: "local:fork", options { maxJobs: 2, '
                 'jobQueue: "q", jobProject: "p", tasksPerNode: 3 }')
    blocks = p._block_provider
    assert isinstance(blocks, ClusterBlockProvider)
    assert blocks.name == "local:local" and blocks.launcher.name == "plain"
    assert (blocks.options.jobQueue, blocks.options.jobProject) == ("q", "p")
    assert p.settings.slots == 2 and p.settings.jobs_per_node == 3


def test_an_unknown_boot_method_is_refused_naming_the_known_ones():
    with pytest.raises(CoasterConfigError, match=r"no coaster boot method 'gt2' \(one of "
                       r"local, ssh-cl"):
        provider('type: "coaster", jobManager: "gt2:pbs"')


def test_an_unknown_batch_system_is_refused():
    with pytest.raises(CoasterConfigError, match="no batch system called 'nosuch'"):
        provider('type: "coaster", jobManager: "local:nosuch"')


def test_ssh_cl_needs_the_login_node():
    with pytest.raises(CoasterConfigError,
                       match=r"missing mandatory property 'site.c.execution.URL' \(the login "
                             r"node of the ssh-cl:local cluster\)"):
        provider('type: "coaster", jobManager: "ssh-cl:local"')


def test_queue_and_project_mean_nothing_to_local_blocks():
    """Swift/K's own tests/multiline/swift.conf names a queue for local:local blocks."""
    warnings: list[str] = []
    p = provider('type: "coaster", jobManager: "local:local", options { jobQueue: "normal" }',
                 warnings=warnings)
    assert isinstance(p._block_provider, LocalBlockProvider)  # local processes all the same
    assert warnings == [
        "swift.conf:2: site.c.execution.options.jobQueue has no effect with "
        'jobManager "local:local" (blocks are processes on this machine, not batch jobs); '
        "ignored"]


def test_login_options_mean_nothing_without_ssh_cl():
    with pytest.raises(CoasterConfigError, match=r"site.c.execution.options.user: only an "
                       r"ssh-cl jobManager logs in anywhere"):
        provider('type: "coaster", jobManager: "local:fork", options { user: "me" }')


def test_an_unknown_launcher_is_refused():
    with pytest.raises(CoasterConfigError, match=r"no launcher called 'torchrun' \(one of "
                       r"aprun, mpiexec, plain, srun, ssh\)"):
        provider('type: "coaster", jobManager: "local:fork", options { launcher: "torchrun" }')


def test_job_options_the_batch_system_does_not_know_are_left_out_with_a_warning():
    """Swift/K's tests/multi_remote/swift.conf gives PBS's ppn to ssh-cl:local blocks."""
    warnings: list[str] = []
    p = provider('type: "coaster", jobManager: "local:fork", options { jobOptions { ppn: 4, '
                 'pbs.aprun: true } }', warnings=warnings)
    blocks = p._block_provider
    assert isinstance(blocks, ClusterBlockProvider)
    assert not blocks.options.jobOptions  # neither reaches a block's job
    assert [w.split(" (it understands")[0] for w in warnings] == [
        "swift.conf:2: site.c.execution.options.jobOptions.ppn has no meaning for local",
        "swift.conf:2: site.c.execution.options.jobOptions.pbs.aprun has no meaning for local"]


def test_a_job_option_with_a_wrong_value_is_still_refused():
    with pytest.raises(CoasterConfigError, match=r"jobOptions.slurm.mem: a value with quotes"):
        provider('type: "coaster", jobManager: "local:slurm", '
                 'options { jobOptions { slurm.mem: "4\\"G" } }')


def test_ssh_cl_service_listens_on_loopback_and_the_relay_takes_internal_host_name():
    p = provider('type: "coaster", jobManager: "ssh-cl:local", URL: "login.example.org", '
                 'options { internalHostName: "10.1.2.3", user: "me", port: 2222 }')
    blocks = p._block_provider
    assert isinstance(blocks, ClusterBlockProvider)
    assert blocks.internal_host == "10.1.2.3"
    assert p.settings.bind_address == "127.0.0.1" and p.settings.contact_host == "127.0.0.1"
    assert blocks.shell.name == "login.example.org:2222"


def test_listen_address_means_nothing_behind_a_login_node():
    with pytest.raises(CoasterConfigError, match=r"listenAddress has no effect with an ssh-cl "
                       r"jobManager: the service listens on this machine's loopback"):
        provider('type: "coaster", jobManager: "ssh-cl:local", URL: "login.example.org", '
                 'options { listenAddress: "0.0.0.0" }')


def test_pbs_depth_takes_effect_through_aprun():
    p = provider('type: "coaster", jobManager: "local:pbs", options { tasksPerNode: 24, '
                 'jobOptions { pbs.aprun: true, depth: 24 } }')
    blocks = p._block_provider
    assert isinstance(blocks, ClusterBlockProvider)
    assert blocks.launcher.command("w", 2) == "aprun -n 2 -N 1 -d 24 sh -c w"


def test_internal_hostname_as_swift_k_test_configurations_spell_it():
    p = provider('type: "coaster", jobManager: "local:local", '
                 'options { internalHostname: "127.0.0.1" }')
    assert p.settings.internal_hostname == "127.0.0.1"
