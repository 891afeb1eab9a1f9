"""A configuration as large as real users' loads (issue 25): the hardening limits of
``config/locate.py`` sit far above real use.

The shape is that of a real 27-site swift.conf (1,297 lines, more than 1,000 keys) that
the old limit of 1,000 keys refused: one block per site, each with its execution
options and a three dozen apps.  Thirty such sites are checked by the real command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")


def many_sites(count: int, apps: int) -> str:
    lines = ["sites: [" + ", ".join(f"s{i}" for i in range(count)) + "]"]
    for i in range(count):
        lines += [
            f"site.s{i} {{",
            '  execution { type: "coaster", URL: "localhost", jobManager: "local:slurm",',
            '    options { maxJobs: 1, nodeGranularity: 1, maxNodesPerJob: 1, tasksPerNode: 4,',
            '              jobQueue: "normal", maxJobTime: "01:00:00", jobProject: "abc" } }',
            "  staging: local",
            f'  workDirectory: "/tmp/work{i}"',
            "  maxParallelTasks: 100",
            "  initialParallelTasks: 10",
        ]
        lines += [f'  app.app{a} {{ executable: "/usr/bin/app{a}", maxWallTime: "00:10:00", '
                  f'env.DATA: "/data/{a}" }}' for a in range(apps)]
        lines.append("}")
    return "\n".join(lines) + "\n"


def test_a_thirty_site_configuration_loads(tmp_path: Path) -> None:
    conf = tmp_path / "swift.conf"
    conf.write_text(many_sites(30, 36))
    assert conf.read_text().count("\n") > 1297  # larger than the real one
    done = subprocess.run([SWIFTNB, "check-config", "-config", str(conf)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=240,
                          env={**os.environ, "SWIFTNB_NO_CACHE": "1"})
    assert done.returncode == 0, done.stderr
    assert "more than" not in done.stderr
    assert "/usr/bin/app35" in done.stdout  # the last app of the last site was read
