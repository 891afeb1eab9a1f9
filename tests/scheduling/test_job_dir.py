"""JOB_START's ``tmpdir=`` names the directory the job really ran in (the provider's own
layout: retries get a directory of their own), through the single-site executor and the
multi-site scheduler alike."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)

SCRIPT = """type file;
app (file o) flaky (string marker) {
  sh "-c" "if [ -e \\"$0\\" ]; then echo ok; else touch \\"$0\\"; exit 1; fi" marker stdout=@o;
}
file x <"x.txt">;
x = flaky("%s");
"""

TWO_SITES = """sites: [a, b]
executionRetries: 1
keepSiteDir: true
site.a { execution { type: "local" }, filesystem { type: "local" }, workDirectory: "swiftwork", app.ALL { executable: "*" } }
site.b { execution { type: "local" }, filesystem { type: "local" }, workDirectory: "swiftwork", app.ALL { executable: "*" } }
"""

ONE_SITE = """executionRetries: 1
keepSiteDir: true
"""


@pytest.mark.parametrize("conf", [ONE_SITE, TWO_SITES], ids=["single-site", "scheduler"])
def test_job_start_tmpdir_is_the_job_directory_used(tmp_path, conf):
    (tmp_path / "swift.conf").write_text(conf)
    (tmp_path / "t.swift").write_text(SCRIPT % (tmp_path / "marker"))
    swiftnb = os.path.join(os.path.dirname(sys.executable), "swiftnb")
    done = subprocess.run([swiftnb, "run", "-config", "swift.conf", "-runid", "r1", "t.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "r1" / "t-r1.log").read_text()
    tmpdirs = re.findall(r"JOB_START .*tmpdir=(\S+)", log)
    assert len(tmpdirs) == 2, log            # the failed first attempt and the retry
    assert tmpdirs[0] != tmpdirs[1]
    for tmpdir in tmpdirs:
        assert (tmp_path / "swiftwork" / tmpdir).is_dir(), (tmpdir, os.listdir(tmp_path / "swiftwork"))
