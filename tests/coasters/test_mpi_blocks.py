"""One MPI task over several workers of a local coaster block, with a real MPICH
(Debian's ``mpich``) and a real ``swiftnb run`` (issue 25, User Guide 19.3.2).

Workers have ``tasksPerNode: 2`` and the apps ask for ``mpi.processes: 4``: no worker
has the slots, so every MPI task here spans two workers, and ``mpiexec`` runs on one of
them with ``-hosts`` naming both (``-launcher fork``: they are on this machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]
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
CONF = """
sites: [localhost]
site.localhost {{
    execution {{
        type: "coaster"
        jobManager: "local:local"
        options {{ maxJobs: {blocks}, tasksPerNode: 2, maxNodesPerJob: {nodes},
                   maxJobTime: "00:10:00" }}
    }}
    staging: "local"
    workDirectory: "{work}"
    maxParallelTasks: 8
    initialParallelTasks: 8
    app.mpi_app {{
        executable: "{app}"
        maxWallTime: "00:02:00"
        options {{ jobType: "MPI", mpi.processes: 4, mpi.ppn: 1 }}
    }}
    app.single {{ executable: "{single}", maxWallTime: "00:02:00" }}
}}
lazyErrors: false
"""
SCRIPT = """
type file;
app (file o) mpi_app () { mpi_app stdout=@o; }
app (file o) single (int i) { single i stdout=@o; }
file m <"mpi.txt">;
m = mpi_app();
file outs[] <simple_mapper; prefix="single", suffix=".txt">;
foreach i in [0:%d] { outs[i] = single(i); }
"""
#: the MPI task's rank 0 and a one-slot task wait for each other (each at most 60 s): both
#: finish only if the one-slot task runs while the MPI task holds its slots
RANKS_WAITING = """#!/bin/sh
if [ "$PMI_RANK" = 0 ]; then
    touch "{dir}/mpi-started"
    i=0; while [ ! -e "{dir}/single-ran" ]; do
        i=$((i+1)); [ $i -gt 600 ] && {{ echo "no single task ran meanwhile" >&2; exit 7; }}
        sleep 0.1
    done
fi
echo "rank $PMI_RANK of $PMI_SIZE"
"""
SINGLE_WAITING = """#!/bin/sh
if [ "$1" = 0 ]; then
    i=0; while [ ! -e "{dir}/mpi-started" ]; do
        i=$((i+1)); [ $i -gt 600 ] && {{ echo "the MPI task never started" >&2; exit 7; }}
        sleep 0.1
    done
    touch "{dir}/single-ran"
fi
echo "single $1"
"""
RANK_FAILS = """#!/bin/sh
if [ "$PMI_RANK" = 2 ]; then echo "rank 2 of $PMI_SIZE broke" >&2; exit 5; fi
echo "rank $PMI_RANK of $PMI_SIZE"
"""


def _need(program: str) -> None:
    if shutil.which(program) is None:
        reason = f"{program} is not installed (Debian: apt-get install mpich libmpich-dev)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)


@pytest.fixture
def mpi_hello(tmp_path: Path) -> Path:
    """A C MPI program, compiled with mpicc, that prints its rank and the size."""
    _need("mpicc")
    _need("mpiexec")
    (tmp_path / "hello.c").write_text(HELLO_C)
    subprocess.run(["mpicc", "-o", str(tmp_path / "hello"), str(tmp_path / "hello.c")],
                   check=True, timeout=120)
    return tmp_path / "hello"


def _program(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _run(tmp_path: Path, app: Path, single: Path | str = "/bin/echo", singles: int = 4,
         blocks: int = 1, nodes: int = 2) -> subprocess.CompletedProcess[str]:
    (tmp_path / "swift.conf").write_text(CONF.format(
        blocks=blocks, nodes=nodes, work=tmp_path / "work", app=app, single=single))
    (tmp_path / "wf.swift").write_text(SCRIPT % (singles - 1))
    return subprocess.run([*SWIFTNB, "run", "-config", "swift.conf", "wf.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=200)


def _spans(tmp_path: Path) -> list[str]:
    """The log's notes of MPI tasks spread over several workers."""
    logs = list(tmp_path.glob("**/wf-*.log"))
    assert logs, list(tmp_path.iterdir())
    return [line for log in logs for line in log.read_text().splitlines()
            if "MPI task" in line and " spans " in line]


def test_an_mpi_program_spans_two_workers_and_single_tasks_run_too(tmp_path, mpi_hello):
    r = _run(tmp_path, mpi_hello)
    assert r.returncode == 0, r.stdout + r.stderr
    ranks = sorted((tmp_path / "mpi.txt").read_text().splitlines())
    assert ranks == [f"rank {n} of 4" for n in range(4)]
    for i in range(4):
        assert (tmp_path / f"single{i:04d}.txt").read_text() == f"{i}\n"
    spans = _spans(tmp_path)
    assert len(spans) == 1 and spans[0].count("(2 slot(s))") == 2, spans


def test_single_tasks_run_while_an_mpi_task_holds_two_workers(tmp_path):
    _need("mpiexec")
    app = _program(tmp_path / "ranks.sh", RANKS_WAITING.format(dir=tmp_path))
    single = _program(tmp_path / "single.sh", SINGLE_WAITING.format(dir=tmp_path))
    r = _run(tmp_path, app, single, singles=5, blocks=2, nodes=3)
    assert r.returncode == 0, r.stdout + r.stderr
    ranks = sorted((tmp_path / "mpi.txt").read_text().splitlines())
    assert ranks == [f"rank {n} of 4" for n in range(4)]
    assert (tmp_path / "single-ran").exists()
    assert [line for line in _spans(tmp_path) if line.count("slot(s)") >= 2]


def test_a_failing_rank_fails_the_task_with_its_stderr(tmp_path):
    _need("mpiexec")
    app = _program(tmp_path / "ranks.sh", RANK_FAILS)
    r = _run(tmp_path, app, singles=1)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "rank 2 of 4 broke" in r.stderr, r.stderr
    assert "mpi_app" in r.stderr
    assert (tmp_path / "single0000.txt").read_text() == "0\n"
    assert _spans(tmp_path)
