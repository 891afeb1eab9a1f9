"""The workloads several benchmarks run, written once: the bag of ``echo`` calls (each to
a file of its own) and the local coaster site they run it on."""

from __future__ import annotations

#: ``N`` (``.format(n=N)``) calls of ``echo i`` to out/fI.txt
ECHO_BAG = """type file;
app (file o) echo (int i) {{ echo i stdout=@o; }}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:{n}] {{ f[i] = echo(i); }}
"""

#: one local coaster block of two workers, eight calls at a time
COASTER_CONF = """sites: coast
site.coast {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 1, maxNodesPerJob: 2, tasksPerNode: 1, allocationStepSize: 1 }
    }
    workDirectory: "swiftwork"
    maxParallelTasks: 8
    initialParallelTasks: 8
    app.echo { executable: "echo" }
}
"""
