"""Sinks and readers of the event stream: the Swift-format log writer, the log reader
(ours and Swift/K 0.96 logs), pandas analysis, bokeh plots and the HTML report.

Imports are lazy so that the writer (on the hot path of every run) does not pull in
pandas or bokeh.
"""

from __future__ import annotations

from swiftnb.lazy import lazy_exports

_LAZY = {
    "LogWriter": "swiftnb.logs.writer",
    "write_events": "swiftnb.logs.writer",
    "format_event": "swiftnb.logs.writer",
    "read_log": "swiftnb.logs.reader",
    "read_events": "swiftnb.logs.reader",
    "follow_log": "swiftnb.logs.tail",
    "afollow_log": "swiftnb.logs.tail",
    "LogFrame": "swiftnb.logs.frame",
    "LogFormatError": "swiftnb.logs.reader",
    "LogWarning": "swiftnb.logs.reader",
    "LogFollower": "swiftnb.logs.tail",
    "tail_to_bus": "swiftnb.logs.tail",
    "events_frame": "swiftnb.logs.frame",
    "write_report": "swiftnb.logs.report",
    "durations": "swiftnb.logs.aimes",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy_exports("swiftnb.logs", _LAZY)
