"""Numbers in a site's ``execution.options`` follow the configuration's rules (Java's
int for counts, finite numbers), and a site's back-off never overflows, however often it
failed (issue 14, item 8)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.execution.ssh import SSHOptions
from swiftnb.scheduling.options import OptionsError
from swiftnb.scheduling.sites import Site, backoff

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")


@pytest.mark.parametrize("value", [99999999999, -99999999999, "1e308", "nan", "inf", "1_000"])
def test_a_provider_option_out_of_range_is_refused_with_the_range(value: object) -> None:
    with pytest.raises(OptionsError) as err:
        SSHOptions.from_mapping({"port": value}, where="site.s.execution.options")
    text = str(err.value)
    assert "site.s.execution.options.port" in text
    assert "expected an integer from -2147483648 to 2147483647" in text
    assert len(text) < 200  # a huge number is not printed in full


def test_a_provider_option_in_range_is_taken() -> None:
    assert SSHOptions.from_mapping({"port": "2222", "connectTimeout": 2.5}).port == 2222


@pytest.mark.parametrize("option", ["maxJobs: 99999999999", "lowOverallocation: 1e308",
                                    "maxNodesPerJob: -99999999999", "maxJobTime: 99999999999"])
def test_coaster_options_out_of_range_fail_check_config(tmp_path: Path, option: str) -> None:
    (tmp_path / "c.conf").write_text(
        'sites: [c]\nsite.c {\n  execution { type: "coaster", jobManager: "local:local",\n'
        f'    options {{ {option} }} }}\n  workDirectory: "w"\n}}\n')
    p = subprocess.run([SWIFTNB, "check-config", "-config", "c.conf"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stdout[-500:] + p.stderr
    key = option.split(":")[0]
    assert "c.conf:4: invalid value" in p.stderr and f"options.{key}'" in p.stderr
    assert "expected" in p.stderr and "Traceback" not in p.stderr


def test_backoff_of_a_site_that_failed_without_end_is_infinite_not_an_error() -> None:
    assert backoff(0.1, 2.0, 3) == pytest.approx(0.8)
    assert backoff(0.1, 2.0, 5000) == math.inf
    site = Site("flaky", provider=None)
    site.score = -5000.0
    site.last_used = 10.0
    assert site.permitted_at() == math.inf
    assert site.weight(now=1e9) == 0.0
