"""Throttles: sliders bound to the live scheduler.

Moving a slider calls ``Scheduler.set_throttle(name, value, site)`` on the running run;
the scheduler logs every change as a ``THROTTLE name= host= old= new=`` event, which this
panel lists (so a change made elsewhere shows too; ``parallelTasks``, the limit following
a site's score, is the sites table's "limit" column instead).  Sliders send their value when released (``continuous_update=False``),
so a drag is one change, not fifty.  ``off`` (no limit) shows as the slider's maximum.

Watching a log, there is no scheduler to steer: the sliders are disabled and show the
last THROTTLE values the log recorded.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import ipywidgets as W

from swiftnb.events import Event
from swiftnb.widgets._util import table

__all__ = ["ThrottlesPanel", "GLOBAL", "PER_SITE"]

#: name -> slider maximum
GLOBAL = {"jobSubmitThrottle": 256, "fileTransfersThrottle": 256, "fileOperationsThrottle": 256}
PER_SITE = {"maxParallelTasks": 1024, "hostJobSubmitThrottle": 256}
ALL_SITES = "(all sites)"


def _value(v: Any, hi: int) -> int:
    if v is None or v == "off":
        return hi
    try:
        f = float(v)
    except (TypeError, ValueError):
        return hi
    if f != f or f == float("inf"):
        return hi
    return int(min(hi, max(1, round(f))))


class ThrottlesPanel:
    """Global and per-site throttle sliders, and the log of THROTTLE events."""

    title = "Throttles"
    HEADERS = ("time", "name", "host", "old", "new")

    def __init__(self, scheduler: Any = None) -> None:
        self.scheduler = scheduler
        self.changes: deque[tuple] = deque(maxlen=8)
        self.latest: dict[tuple[str, str | None], Any] = {}
        self.errors: list[str] = []
        self.t0: float | None = None
        self._syncing = False
        live = scheduler is not None
        names = [s.name for s in getattr(scheduler, "sites", ())] if live else []
        self.site = W.Dropdown(options=[ALL_SITES, *names], value=ALL_SITES,
                               description="site", disabled=not live)
        self.sliders: dict[str, W.IntSlider] = {}
        for name, hi in {**GLOBAL, **PER_SITE}.items():
            slider = W.IntSlider(value=1, min=1, max=hi, description=name,
                                 continuous_update=False, disabled=not live,
                                 style={"description_width": "170px"},
                                 layout=W.Layout(width="460px"))
            slider.observe(self._moved, names="value")
            self.sliders[name] = slider
        self.site.observe(lambda change: self._load(), names="value")
        self.status = W.HTML(value="")
        self.log = W.HTML(value=table(self.HEADERS, [], cls="throttles"))
        self.widget = W.VBox([*(self.sliders[n] for n in GLOBAL), self.site,
                              *(self.sliders[n] for n in PER_SITE), self.status, self.log])
        self._load()

    # ------------------------------------------------------------ kernel -> sliders
    def _current(self) -> dict[str, Any]:
        if self.scheduler is None:
            out = {n: self.latest.get((n, None)) for n in GLOBAL}
            for n in PER_SITE:
                out[n] = next((v for (k, _h), v in reversed(list(self.latest.items()))
                               if k == n), None)
            return out
        th = self.scheduler.throttles()
        out = {n: th.get(n) for n in GLOBAL}
        sites = th.get("sites", {})
        chosen = self.site.value
        if chosen == ALL_SITES:
            chosen = next(iter(sites), None)
        for n in PER_SITE:
            out[n] = sites.get(chosen, {}).get(n) if chosen is not None else None
        return out

    def _load(self) -> bool:
        changed = False
        self._syncing = True
        try:
            for name, value in self._current().items():
                slider = self.sliders[name]
                v = _value(value, slider.max)
                if slider.value != v:
                    slider.value = v
                    changed = True
        finally:
            self._syncing = False
        return changed

    # ------------------------------------------------------------ browser -> kernel
    def _moved(self, change: dict) -> None:
        if self._syncing or self.scheduler is None:
            return
        slider = change["owner"]
        name = slider.description
        site = None
        if name in PER_SITE and self.site.value != ALL_SITES:
            site = self.site.value
        try:
            self.scheduler.set_throttle(name, int(change["new"]), site=site)
            self.status.value = ""
        except Exception as exc:  # noqa: BLE001 - shown to the person who moved it
            self.errors.append(str(exc))
            self.status.value = f"<span style='color:#b00'>{exc}</span>"

    # ------------------------------------------------------------ events
    def apply(self, events: list[Event]) -> None:
        if self.t0 is None and events:
            self.t0 = events[0].time
        for e in events:
            if e.kind != "THROTTLE":
                continue
            f = e.fields
            if f.get("name") == "parallelTasks":
                continue  # the limit following a site's score: the sites table shows it
            self.changes.append((round(e.time - self.t0, 2), f.get("name"), f.get("host"),
                                 f.get("old"), f.get("new")))
            self.latest[(f.get("name"), f.get("host"))] = f.get("new")

    def render(self) -> bool:
        changed = self._load()
        html = table(self.HEADERS, list(self.changes), cls="throttles")
        if html != self.log.value:
            self.log.value = html
            changed = True
        return changed
