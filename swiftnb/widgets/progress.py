"""Progress by state: one bar and one count per CoG task state, plus the job totals.

Counted from TASK_STATUS_CHANGE (each task id is in exactly one state) and JOB_INIT /
JOB_END / END_SUCCESS / END_FAILURE, which both a live run and a Swift 0.96 log carry.
"""

from __future__ import annotations

import ipywidgets as W

from swiftnb.events import Event

__all__ = ["ProgressPanel", "STATES"]

#: (status code, label, bar style) in the order a task passes them
STATES = (
    (8, "Submitting", "info"),
    (1, "Submitted", "info"),
    (16, "Stage in", "info"),
    (2, "Active", ""),
    (17, "Stage out", "info"),
    (7, "Completed", "success"),
    (5, "Failed", "danger"),
    (6, "Canceled", "warning"),
)


class ProgressPanel:
    """Bars and counts of tasks by state."""

    title = "Progress"

    def __init__(self) -> None:
        self.status: dict[str, int] = {}          # taskid -> latest status
        self.counts: dict[int, int] = {code: 0 for code, _, _ in STATES}
        self.jobs = 0
        self.jobs_ok = 0
        self.jobs_failed = 0
        self.bars = {
            code: W.IntProgress(value=0, min=0, max=1, description=label, bar_style=style,
                                layout=W.Layout(width="420px"))
            for code, label, style in STATES
        }
        self.counts_html = W.HTML(value="")
        self.summary = W.HTML(value="")
        rows = [W.HBox([self.bars[code], W.Label("")]) for code, _, _ in STATES]
        self._labels = {code: row.children[1] for (code, _, _), row in zip(STATES, rows)}
        self.widget = W.VBox([self.summary, *rows])

    def apply(self, events: list[Event]) -> None:
        status = self.status
        counts = self.counts
        for e in events:
            kind = e.kind
            if kind == "TASK_STATUS_CHANGE":
                f = e.fields
                tid = f.get("taskid")
                try:
                    new = int(f.get("status"))
                except (TypeError, ValueError):
                    continue
                old = status.get(tid)
                if old == new:
                    continue
                status[tid] = new
                if old in counts:
                    counts[old] -= 1
                if new in counts:
                    counts[new] += 1
            elif kind == "JOB_INIT":
                self.jobs += 1
            elif kind == "END_SUCCESS":
                self.jobs_ok += 1
            elif kind == "END_FAILURE":
                self.jobs_failed += 1

    def render(self) -> bool:
        changed = False
        total = max(1, len(self.status))
        for code, bar in self.bars.items():
            n = self.counts[code]
            if bar.max != total or bar.value != n:
                with bar.hold_sync():
                    bar.max = total
                    bar.value = n
                changed = True
            label = self._labels[code]
            text = str(n)
            if label.value != text:
                label.value = text
                changed = True
        summary = (f"<b>jobs</b> {self.jobs} &nbsp; <b>ok</b> {self.jobs_ok} &nbsp; "
                   f"<b>failed</b> {self.jobs_failed} &nbsp; <b>tasks</b> {len(self.status)}")
        if self.summary.value != summary:
            self.summary.value = summary
            changed = True
        return changed

    def snapshot(self) -> dict[str, int]:
        """Counts by state label (what the bars show)."""
        return {label: self.counts[code] for code, label, _ in STATES}
