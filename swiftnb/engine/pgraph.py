"""``-pgraph file.dot``: a Graphviz picture of a run's dataflow.

Swift drew one node per procedure call and one per dataset, with edges from the input
files of a call to the call and from the call to its outputs.  We record the same from
the tasks the engine builds (so it works with ``-dryrun`` too) and write a ``digraph``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swiftnb.engine.task import Task


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class PGraph:
    """Collects procedure calls and the files between them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[str], list[str]]] = []

    def call(self, proc: str, task: Task) -> None:
        self.calls.append((task.jobid, proc, list(task.inputs), list(task.outputs)))

    def dot(self) -> str:
        lines = ["digraph SwiftProgram {", '  graph [splines="compound", rankdir="TB"];',
                 '  node [color="seagreen", style="filled"];']
        files: set[str] = set()
        for jobid, proc, ins, outs in self.calls:
            lines.append(f"  {_q(jobid)} [shape=box, label={_q(proc)}, color=lightblue];")
            for f in ins:
                files.add(f)
                lines.append(f"  {_q(f)} -> {_q(jobid)};")
            for f in outs:
                files.add(f)
                lines.append(f"  {_q(jobid)} -> {_q(f)};")
        for f in sorted(files):
            lines.append(f"  {_q(f)} [shape=parallelogram, color=lightgrey];")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def write(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.dot())
