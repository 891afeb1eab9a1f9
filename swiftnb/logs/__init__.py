"""Sinks and readers of the event stream: the Swift-format log writer, the log reader
(ours and Swift/K 0.96 logs), pandas analysis, bokeh plots and the HTML report.

Imports are lazy so that the writer (on the hot path of every run) does not pull in
pandas or bokeh.
"""

from __future__ import annotations

from swiftnb.lazy import exported, lazy_exports

_LAZY = {
    "swiftnb.logs.writer": ("LogWriter", "write_events", "format_event"),
    "swiftnb.logs.reader": ("read_log", "read_events", "LogFormatError", "LogWarning"),
    "swiftnb.logs.tail": ("follow_log", "afollow_log", "LogFollower", "tail_to_bus"),
    "swiftnb.logs.frame": ("LogFrame", "events_frame"),
    "swiftnb.logs.report": ("write_report",),
    "swiftnb.logs.aimes": ("durations",),
}

__all__ = exported(_LAZY)


__getattr__ = lazy_exports("swiftnb.logs", _LAZY)
