"""An app's job options (``count``, ``jobType``, ``jobQueue``, ``mpi.*``, LRM keys) take
effect on batch sites (tests/execution/batch/test_batch_sites.py) and are refused, with
their line, on every other site: dropped silently they would run the app somewhere the
user did not ask for."""

from __future__ import annotations

import pytest

from swiftnb.config import load_config_text
from swiftnb.scheduling.build import check_sites


@pytest.mark.parametrize("execution", ['type: "local"',
                                       # coaster sites run MPI apps (tests/coasters/test_mpi_apps.py)
                                       'type: "sim"'])
def test_job_options_of_an_app_are_refused_where_no_job_runs_per_task(execution):
    config = load_config_text(
        "site.s {\n"
        f"  execution {{ {execution} }}\n"
        '  app.sim { executable: "/bin/true", options { mpi { processes: 4 } } }\n'
        '  workDirectory: "/tmp/w"\n'
        "}\nsites: [s]\n")
    problems = check_sites(config)
    assert len(problems) == 1
    assert problems[0].startswith("swift.conf:3: site.s.app.sim.options.mpi.processes has no "
                                  "effect on site s (execution type ")
    assert "only batch sites (slurm, sge, pbs, lsf, condor, cobalt) run an app" in problems[0]


def test_brokerage_requirements_and_walltime_are_taken_everywhere():
    config = load_config_text(
        'site.s { execution { type: "local" }, workDirectory: "/tmp/w" }\nsites: [s]\n'
        'app.ALL { executable: "*", options { cores: 2, memory: 1024, maxwalltime: 60 } }\n')
    assert check_sites(config) == []
