"""Throttles: sliders bound to the live run's executor.

Moving a slider calls ``set_throttle(name, value, site)`` on the run's executor: the
multi-site Scheduler, or the single local site's executor, which offer the same contract
(:class:`~swiftnb.scheduling.throttles.ThrottleControl`).  Every change is a
``THROTTLE name= host= old= new=`` event, which this panel lists (so a change made
elsewhere shows too; ``parallelTasks``, the limit following a site's score, is the sites
table's "limit" column instead).  Sliders send their value when released
(``continuous_update=False``), so a drag is one change, not fifty.

Each slider has a readout beside it that says the value as Swift means it: a number, or
``off`` for no limit (Swift's ``"off"``, stored as Integer.MAX_VALUE).  For the names of
Swift's Throttle type the slider's last stop, past its numbers, is ``off``; a value beyond
the slider's range is shown in the readout with the slider at its end.

Watching a log, there is nothing to steer: the sliders are disabled and the readouts show
what the log states, the configuration it recorded at the start (``SWIFT_CONFIGURATION``,
Swift/K's and ours) overridden by the ``THROTTLE`` changes that followed; a value the log
does not state reads "unknown", its slider hidden (as on a bare event bus).
"""

from __future__ import annotations

import html
from collections import deque
from collections.abc import Iterable, Sequence

import ipywidgets as W

from swiftnb.events import Event
from swiftnb.monitor.state import (
    GLOBAL_THROTTLES,
    SITE_THROTTLES,
    ThrottleValues,
    logged_throttles,
    throttle_value,
)
from swiftnb.scheduling.throttles import OFF_NAMES, ThrottleControl
from swiftnb.widgets._util import table

__all__ = ["ThrottlesPanel", "GLOBAL", "PER_SITE", "OFF"]

#: name -> the slider's largest number (the run model's, which the monitors offer too)
GLOBAL = GLOBAL_THROTTLES
PER_SITE = SITE_THROTTLES
ALL_SITES = "(all sites)"
OFF = "off"
UNKNOWN = "unknown"

#: a throttle value as shown: a number, "off", or None (not known)
Value = int | float | str | None


def _listed(value: object) -> object:
    """A value of a THROTTLE event as the list of changes shows it: a Throttle value as
    the sliders show it, another (``replicationLimit`` 0, ``maxSubmitRate`` 0.5) as the
    event states it, a missing one blank."""
    if value in (None, "null"):   # a log writes null
        return None
    shown = throttle_value(value)
    return value if shown is None else shown


def _text(value: Value) -> str:
    if value is None:
        return UNKNOWN
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return str(value)


class _Row:
    """One throttle: its slider (numbers 1..top, then "off" where Swift allows it) and
    the readout that says the value."""

    def __init__(self, name: str, top: int, live: bool) -> None:
        self.name = name
        self.top = top
        self.off = name in OFF_NAMES
        # the name is a label of its own: it stays when the slider is hidden
        self.label = W.Label(value=name, layout=W.Layout(width="170px"))
        self.slider = W.IntSlider(value=1, min=1, max=top + 1 if self.off else top,
                                  continuous_update=False, readout=False, disabled=not live,
                                  layout=W.Layout(width="260px"))
        self.readout = W.HTML(value="", layout=W.Layout(width="110px"))
        self.widget = W.HBox([self.label, self.slider, self.readout])

    def position(self, value: Value) -> int:
        """Where the slider stands for ``value``."""
        if value == OFF or value is None:
            return self.slider.max
        assert not isinstance(value, str)
        return int(min(self.top, max(1, round(value))))

    def value_at(self, position: int) -> int | str:
        """The value a slider position sets."""
        return OFF if self.off and position > self.top else position

    def show(self, value: Value) -> bool:
        """Move the slider and the readout to ``value``; whether anything changed."""
        changed = False
        text = f"<code>{html.escape(_text(value))}</code>"
        if self.readout.value != text:
            self.readout.value = text
            changed = True
        position = self.position(value)
        if self.slider.value != position:
            self.slider.value = position
            changed = True
        visibility = "hidden" if value is None else "visible"
        if self.slider.layout.visibility != visibility:
            self.slider.layout.visibility = visibility
            changed = True
        return changed


class ThrottlesPanel:
    """Global and per-site throttle sliders, and the log of THROTTLE events."""

    title = "Throttles"
    HEADERS = ("time", "name", "host", "old", "new")

    def __init__(self, scheduler: ThrottleControl | None = None) -> None:
        self.scheduler = scheduler
        self.changes: deque[tuple[float, str, str | None, object, object]] = deque(maxlen=8)
        #: what a log states (no live executor): its configuration, then THROTTLE changes
        self.latest: ThrottleValues = {}
        self.errors: list[str] = []
        self.t0: float | None = None
        self._syncing = False
        live = scheduler is not None
        names = list(scheduler.throttles().get("sites", {})) if scheduler is not None else []
        self.site = W.Dropdown(options=[ALL_SITES, *names], value=ALL_SITES,
                               description="site", disabled=not live)
        self.rows = {name: _Row(name, top, live) for name, top in {**GLOBAL, **PER_SITE}.items()}
        self.sliders: dict[str, W.IntSlider] = {n: r.slider for n, r in self.rows.items()}
        self.readouts: dict[str, W.HTML] = {n: r.readout for n, r in self.rows.items()}
        self._names = {id(r.slider): n for n, r in self.rows.items()}
        for row in self.rows.values():
            row.slider.observe(self._moved, names="value")
        self.site.observe(lambda change: self._load(), names="value")
        self.status = W.HTML(value="")
        self.log = W.HTML(value=table(self.HEADERS, [], cls="throttles"))
        self.widget = W.VBox([*(self.rows[n].widget for n in GLOBAL), self.site,
                              *(self.rows[n].widget for n in PER_SITE), self.status, self.log])
        self._load()

    # ------------------------------------------------------------ kernel -> sliders
    def _chosen_site(self, sites: Sequence[str]) -> str | None:
        chosen = self.site.value
        if chosen == ALL_SITES or chosen not in sites:
            return sites[0] if sites else None
        return chosen

    def _current(self) -> dict[str, Value]:
        if self.scheduler is None:
            return self._logged()
        th = self.scheduler.throttles()
        out: dict[str, Value] = {n: throttle_value(th.get(n)) for n in GLOBAL}
        sites = th.get("sites", {})
        chosen = self._chosen_site(list(sites))
        for n in PER_SITE:
            out[n] = throttle_value(sites.get(chosen, {}).get(n)) if chosen is not None else None
        return out

    def _logged(self) -> dict[str, Value]:
        out: dict[str, Value] = {n: self.latest.get((n, None)) for n in GLOBAL}
        chosen = self._chosen_site(self._logged_sites())
        for n in PER_SITE:
            out[n] = self.latest.get((n, chosen)) if chosen is not None else None
        return out

    def _logged_sites(self) -> list[str]:
        return list(dict.fromkeys(h for (_n, h) in self.latest if h is not None))

    def _load(self) -> bool:
        changed = False
        self._syncing = True
        try:
            for name, value in self._current().items():
                changed = self.rows[name].show(value) or changed
        finally:
            self._syncing = False
        return changed

    # ------------------------------------------------------------ browser -> kernel
    def _moved(self, change: dict) -> None:
        if self._syncing or self.scheduler is None:
            return
        name = self._names[id(change["owner"])]
        site = None
        if name in PER_SITE and self.site.value != ALL_SITES:
            site = self.site.value
        try:
            self.scheduler.set_throttle(name, self.rows[name].value_at(int(change["new"])),
                                        site=site)
            self.status.value = ""
        except ValueError as exc:   # refused (SchedulerError): shown to the person who moved it
            self.errors.append(str(exc))
            self.status.value = f"<span style='color:#b00'>{html.escape(str(exc))}</span>"
        self._load()   # the readout follows (and a refused move springs back)

    # ------------------------------------------------------------ events
    def apply(self, events: Iterable[Event]) -> None:
        for e in events:
            if self.t0 is None:
                self.t0 = e.time
            if e.kind == "CONFIG" and self.scheduler is None and e.text:
                values, sites = logged_throttles(e.text)
                self.latest.update(values)
                self._add_sites(sites)
                continue
            if e.kind != "THROTTLE":
                continue
            f = e.fields
            name = f.get("name")
            if name == "parallelTasks":
                continue  # the limit following a site's score: the sites table shows it
            host = f.get("host")
            host = None if host in (None, "", "null") else str(host)   # a log writes null
            self.changes.append((round(e.time - self.t0, 2), str(name), host,
                                 _listed(f.get("old")), _listed(f.get("new"))))
            self.latest[(str(name), host)] = throttle_value(f.get("new"))
            if host is not None and self.scheduler is None:
                self._add_sites([host])

    def _add_sites(self, sites: Iterable[str]) -> None:
        """Sites a log names become choices of the drop-down (it only selects what the
        disabled sliders show)."""
        new = [s for s in sites if s not in self.site.options]
        if new:
            chosen = self.site.value
            self.site.options = [*self.site.options, *new]
            self.site.value = chosen   # new options reset the choice to the first
            self.site.disabled = False

    def render(self) -> bool:
        changed = self._load()
        html_ = table(self.HEADERS, list(self.changes), cls="throttles")
        if html_ != self.log.value:
            self.log.value = html_
            changed = True
        return changed
