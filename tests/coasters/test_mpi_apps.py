"""MPI apps on coaster blocks (User Guide 19.3.2): a real MPICH (Debian's ``mpich``,
installed by .ci/run), a real ``swiftnb run`` on a ``local:local`` block.

The configuration is the shape of swift-lang's tutorial ``mpi/swift.conf``
(tests/data/configs25/mpi-coasters.conf): ``jobType: "MPI"``, ``mpi.processes``,
``mpi.ppn``.  Before this, such a file was refused ("has no effect on site ... only batch
sites run an app as a job of its own").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.coasters.mpi import MpiShape, launch_spec, mpi_shape
from swiftnb.coasters.servicerecords import CoasterJob
from swiftnb.coasters.walltimes import WalltimeQueue

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]
CONF = Path(__file__).resolve().parent.parent / "data" / "configs25" / "mpi-coasters.conf"
HELLO_C = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
"""
# rank 0 holds a lock directory while the ranks run: two MPI tasks on the worker's 4 slots
# at once (each holds all 4) would find it taken, and fail
LOCKED = """#!/bin/sh
if [ "$PMI_RANK" = 0 ]; then mkdir "{lock}" || {{ echo "two MPI tasks at once" >&2; exit 9; }}; fi
echo "rank $PMI_RANK of $PMI_SIZE"
sleep 1
if [ "$PMI_RANK" = 0 ]; then rmdir "{lock}"; fi
"""
SCRIPT = """
type file;
app (file o) mpi_hello () {{ mpi_hello stdout=@o; }}
file outs[] <simple_mapper; prefix="out", suffix=".txt">;
foreach i in [0:{last}] {{ outs[i] = mpi_hello(); }}
"""


def _need_mpich(program: str) -> None:
    if shutil.which(program) is None:
        reason = f"{program} is not installed (Debian: apt-get install mpich libmpich-dev)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)


def _run(tmp_path: Path, app: Path, tasks: int, conf: str | None = None
         ) -> subprocess.CompletedProcess[str]:
    text = conf or CONF.read_text()
    text = text.replace("WORKDIR", str(tmp_path / "work")).replace("MPIAPP", str(app))
    (tmp_path / "swift.conf").write_text(text)
    (tmp_path / "wf.swift").write_text(SCRIPT.format(last=tasks - 1))
    # Hydra's mpiexec runs as root without complaint; no env var or flag is needed
    return subprocess.run([*SWIFTNB, "run", "-config", "swift.conf", "wf.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=150)


def _ranks(path: Path) -> list[str]:
    return sorted(path.read_text().splitlines())


def test_an_mpi_program_in_c_runs_its_ranks_on_a_coaster_worker(tmp_path):
    _need_mpich("mpicc")
    _need_mpich("mpiexec")
    (tmp_path / "hello.c").write_text(HELLO_C)
    subprocess.run(["mpicc", "-o", str(tmp_path / "hello"), str(tmp_path / "hello.c")],
                   check=True, timeout=120)
    r = _run(tmp_path, tmp_path / "hello", tasks=2)
    assert r.returncode == 0, r.stderr
    for i in range(2):
        assert _ranks(tmp_path / f"out{i:04d}.txt") == [f"rank {n} of 4" for n in range(4)]


def test_an_mpi_task_holds_its_slots_until_it_ends(tmp_path):
    """Two tasks of 4 ranks on one worker of 4 slots: they run one after the other (the
    second would find rank 0's lock taken), ranks from PMI_RANK / PMI_SIZE."""
    _need_mpich("mpiexec")
    app = tmp_path / "ranks.sh"
    app.write_text(LOCKED.format(lock=tmp_path / "lock"))
    app.chmod(0o755)
    r = _run(tmp_path, app, tasks=3)
    assert r.returncode == 0, r.stderr
    for i in range(3):
        assert _ranks(tmp_path / f"out{i:04d}.txt") == [f"rank {n} of 4" for n in range(4)]


#: blocks of one worker of 4 slots
ONE_NODE = ("tasksPerNode: 4,", "tasksPerNode: 4, maxNodesPerJob: 1,")


def test_an_mpi_task_wider_than_a_block_fails_saying_so(tmp_path):
    _need_mpich("mpiexec")
    app = tmp_path / "ranks.sh"
    app.write_text("#!/bin/sh\necho rank $PMI_RANK\n")
    app.chmod(0o755)
    conf = CONF.read_text().replace("mpi.processes: 4, mpi.ppn: 1",
                                    "mpi.processes: 8").replace(*ONE_NODE)
    r = _run(tmp_path, app, tasks=1, conf=conf)
    assert r.returncode == 2, r.stderr
    assert "needs 8 worker slots at once" in r.stderr and "its blocks have 4" in r.stderr, \
        r.stderr


def test_mpi_shape_from_the_profiles_of_the_guide_and_the_tutorial():
    # User Guide 19.3.2: globus::mpi.processes=16;globus::mpi.ppn=8 -> 2 slots
    assert mpi_shape({"mpi.processes": "16", "mpi.ppn": "8"}, "p") == MpiShape(16, 2)
    assert mpi_shape({"jobType": "MPI", "count": "3"}, "p") == MpiShape(3, 3)
    assert mpi_shape({"jobType": "single"}, "p") is None
    assert mpi_shape({}, "p") is None
    with pytest.raises(ValueError, match="mpi.processes must be a whole number"):
        mpi_shape({"mpi.processes": "four"}, "p")
    with pytest.raises(ValueError, match="mpi.ppn needs mpi.processes"):
        mpi_shape({"mpi.ppn": "2"}, "p")
    spec = launch_spec({"executable": "/bin/app", "args": ["a"]}, MpiShape(4, 2))
    assert spec["executable"] == "mpiexec" and spec["slots"] == 2
    assert spec["args"] == ["-launcher", "fork", "-n", "4", "/bin/app", "a"]
    assert spec["mpi"] == {"processes": 4, "app": ["/bin/app", "a"]}


def test_a_worker_with_fewer_free_slots_gets_a_task_that_fits():
    """The queue hands a worker with one free slot the one-slot task behind a wider one
    of the same walltime, and the wide one to a worker with room."""
    def job(n: int, slots: int) -> CoasterJob:
        return CoasterJob(str(n), 60, {}, None, None, n=n, slots=slots)  # type: ignore[arg-type]

    queue = WalltimeQueue(0.01)
    queue.push(job(1, 4))
    queue.push(job(2, 1))
    assert queue.pop_fitting(100, 1).n == 2
    assert queue.pop_fitting(100, 3) is None
    assert queue.pop_fitting(100, 4).n == 1
    assert len(queue) == 0


@pytest.mark.parametrize("value", ['"abc"', '"\u00b2"', "0", "-2", "4.5"])
def test_an_mpi_process_count_that_is_no_whole_number_is_refused_with_its_line(tmp_path,
                                                                             value):
    text = CONF.read_text().replace("mpi.processes: 4", f"mpi.processes: {value}")
    (tmp_path / "swift.conf").write_text(text.replace("WORKDIR", str(tmp_path)))
    r = subprocess.run([*SWIFTNB, "check-config", "-config", "swift.conf"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert ("swift.conf:19: site.localhost.app.mpi_hello.options: app mpi_hello's "
            "mpi.processes must be a whole number of at least 1") in r.stdout + r.stderr


def test_an_app_wider_than_a_block_is_a_warning_when_the_configuration_is_read(tmp_path):
    text = CONF.read_text().replace("mpi.processes: 4, mpi.ppn: 1",
                                    "mpi.processes: 8").replace(*ONE_NODE)
    (tmp_path / "swift.conf").write_text(text.replace("WORKDIR", str(tmp_path)))
    r = subprocess.run([*SWIFTNB, "check-config", "-config", "swift.conf"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("swift.conf:19: site localhost: app mpi_hello needs 8 worker slots at once"
            in r.stdout + r.stderr)


def test_a_worker_starts_nothing_on_the_slots_an_mpi_task_holds(tmp_path):
    """A real worker of 2 slots given an MPI task of 2 slots and, in the same write, a
    one-slot task: the second starts only when the first has ended (it fails if the
    first's mark is not there yet)."""
    from test_worker_loop import FakeService

    service = FakeService(tmp_path, cores=2)
    mark = tmp_path / "first-done"
    try:
        first = {"op": "run", "n": 1, "spec": _spec(tmp_path, 1, f"sleep 0.3; touch {mark}",
                                                     slots=2)}
        second = {"op": "run", "n": 2, "spec": _spec(tmp_path, 2, f"test -e {mark}")}
        service.conn.sendall((json.dumps(first) + "\n" + json.dumps(second) + "\n").encode())
        seen = service.until_done(2)
        assert seen[1][-1]["result"]["ok"], seen[1]
        assert seen[2][-1]["result"]["ok"], seen[2]
    finally:
        service.close()


def _spec(tmp_path: Path, n: int, script: str, **kw: object) -> dict[str, object]:
    return {"jobid": f"t{n}", "tr": "sh", "executable": None, "args": ["-c", script],
            "base_dir": str(tmp_path), "work_dir": str(tmp_path / "work"),
            "site_run": "s-run001", "site": "fake", "stdin": None, "stdout": None,
            "stderr": None, "inputs": [], "outputs": [], "env": {}, "keep": False, **kw}
