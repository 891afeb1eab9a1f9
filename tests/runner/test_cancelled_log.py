"""A run whose task is cancelled from outside (the loop shutting down, a kernel interrupt)
still ends its log the way Swift's did."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from swiftnb.runner import start_run

pytestmark = pytest.mark.timeout(60)


def test_a_run_cancelled_with_its_loop_ends_its_log_with_errors(tmp_path):
    pidfile = tmp_path / "pid"
    src = ('type file;\napp (file o) sleeper(string p) { sh "-c" "echo $$ > \\"$0\\"; '
           'exec sleep 60" p stdout=@o; }\nfile z <"z.txt"> = sleeper("%s");' % pidfile)

    async def main():
        handle = start_run(src, base_dir=str(tmp_path))
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.05)
        return handle  # asyncio.run cancels the still-running run task on the way out

    handle = asyncio.run(main())
    assert handle.done and handle.ok is False
    with open(handle.log_path, encoding="utf-8") as log:
        ends = [line for line in log if "Swift finished with" in line]
    assert ends and ends[-1].rstrip().endswith("Swift finished with errors")
    pid = int(pidfile.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the app outlived its cancelled run")
