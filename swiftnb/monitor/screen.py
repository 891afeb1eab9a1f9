"""What the terminal monitor draws: one screen of a :class:`RunState`, fitted to the
terminal (80x24 at least: each section gets the rows its content needs, within a budget
of lines, and long cells are cut with an ellipsis rather than wrapped).

The order is the notebook dashboard's: the header with N of M, rate and ETA and a bar;
per-app progress; sites; coaster blocks (when there are any); throttles, one of them
selected for the keys; failures with the last line of their stderr; what the run waits
for; the newest lines of the summary feed; the keys.
"""

from __future__ import annotations

from collections.abc import Sequence

from swiftnb.display import cell, duration
from swiftnb.monitor.frame import Line, Span, Style, clean, line
from swiftnb.monitor.state import RunState, Throttle

__all__ = ["draw", "KEYS_HELP", "throttle_text"]

KEYS_HELP = "↑/↓ select throttle  +/- change it  q leave (run goes on)  Ctrl-C cancel"
#: rows each section shows at most, whatever the space (the feed takes what is left)
_MOST = {"apps": 6, "sites": 4, "blocks": 4, "throttles": 4, "failures": 3, "waiting": 3}
_THROTTLE_COLUMNS = 3
_THROTTLE_WIDTH = 24


def throttle_text(t: Throttle) -> str:
    """``maxParallelTasks@local 8``: a throttle as its cell shows it."""
    where = f"@{t.site}" if t.site else ""
    return f"{t.name}{where} {'?' if t.value is None else t.value}"


def _throttle_cell(t: Throttle) -> str:
    """A throttle's cell: its name (and site) cut to fit, its value always whole."""
    name, _, value = throttle_text(t).rpartition(" ")
    return f"{_cut(name, _THROTTLE_WIDTH - len(value) - 1)} {value}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _pad(text: str, width: int, left: bool) -> str:
    """``text`` cut to ``width`` characters and padded to them."""
    text = _cut(text, width)
    return text.ljust(width) if left else text.rjust(width)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], *,
           widths: dict[int, int] | None = None) -> list[Line]:
    """Columns as plain padded text (a rich Table measured every cell on every redraw:
    ten times the cost, paid by the run's own loop)."""
    cells = [[str(cell(c)) for c in row] for row in rows]
    most = widths or {}
    sizes = [min(most.get(i, 12), max([len(h)] + [len(r[i]) for r in cells]))
             for i, h in enumerate(headers)]

    def text(values: Sequence[str]) -> str:
        return " ".join(_pad(v, w, left=i == 0) for i, (v, w) in enumerate(zip(values, sizes)))

    return [line(text(headers), Style.BOLD)] + [line(text(row)) for row in cells]


def _throttles(throttles: list[Throttle], selected: int, rows: int) -> list[Line]:
    first_row = max(0, selected // _THROTTLE_COLUMNS - rows + 1)
    lines: list[Line] = []
    for r in range(first_row, first_row + rows):
        chunk = list(enumerate(throttles))[r * _THROTTLE_COLUMNS:(r + 1) * _THROTTLE_COLUMNS]
        if not chunk:
            break
        spans: list[Span] = []
        for i, t in chunk:
            text = _throttle_cell(t)
            spans.append((text, Style.REVERSE if i == selected else Style.PLAIN))
            spans.append((" " * (_THROTTLE_WIDTH + 2 - len(text)), Style.PLAIN))
        lines.append(tuple(spans))
    return lines


def _bar(done: int, known: int, width: int) -> Line:
    """``━━━━━━━━━━━━━ 18/40``: the share of calls done."""
    count = f" {done}/{known}"
    room = max(10, width - len(count))
    filled = room * done // max(1, known)
    return (("━" * filled, Style.GREEN), ("━" * (room - filled), Style.GREY),
            (count, Style.PLAIN))


def _allot(lines: int, counts: dict[str, int]) -> dict[str, int]:
    """Rows per section within ``lines`` (each shown section also takes a title line):
    first one row to every section that has any, in order, then one more to each in
    turn up to its most, so that a long table never hides the failures."""
    shown = dict.fromkeys(counts, 0)
    for name, count in counts.items():
        if count and lines >= 2:
            shown[name] = 1
            lines -= 2
    grew = True
    while lines > 0 and grew:
        grew = False
        for name, count in counts.items():
            if lines > 0 and 0 < shown[name] < min(count, _MOST[name]):
                shown[name] += 1
                lines -= 1
                grew = True
    return shown


def _title(text: str) -> Line:
    return line(text, Style.TITLE)


def draw(state: RunState, *, width: int, height: int, selected: int = 0,
         message: str = "") -> list[Line]:
    """The whole screen for a terminal of ``width`` x ``height``: at most ``height``
    lines (the painter cuts each to ``width`` columns), their text clean of control
    characters."""
    title = state.label if state.outcome is None else f"{state.label} ({state.outcome})"
    parts: list[Line] = [line(f"swiftnb {title} · {state.headline()}", Style.BOLD)]
    parts.append(_bar(state.done, state.known, width))
    left = height - 3   # header, bar, keys line
    throttles = state.throttles()
    apps = state.app_rows()
    sites = state.site_rows()
    blocks = list(state.blocks.values())
    failures = list(state.failures)
    waiting = state.waiting_rows()
    # the throttles' lines are kept for them first (the keys act on them)
    throttle_rows = min(_MOST["throttles"], -(-len(throttles) // _THROTTLE_COLUMNS),
                        max(0, left - 1))
    if throttle_rows:
        left -= throttle_rows + 1
    shown = _allot(left, {"apps": len(apps), "sites": len(sites), "blocks": len(blocks),
                          "failures": len(failures), "waiting": len(waiting)})
    left -= sum(n + 1 for n in shown.values() if n)
    if shown["apps"]:
        parts.extend(_table(
            ("app", "done", "of", "failed", "cached", "rate/s", "ETA"),
            [(name, a.done, a.known, a.failed, a.cached,
              "" if rate is None else f"{rate:.3g}", duration(eta))
             for name, a, rate, eta in apps[:shown["apps"]]], widths={0: 20}))
    if shown["sites"]:
        parts.extend(_table(
            ("site", "score", "tscore", "limit", "run", "queue", "done", "failed", "set"),
            [(s.name, s.score, s.tscore, s.limit, s.running, s.queued, s.done, s.failed,
              s.set) for s in sites[:shown["sites"]]], widths={0: 16}))
    if shown["blocks"]:
        parts.extend(_table(
            ("block", "site", "shape", "state", "LRM", "workers", "run", "done"),
            [(b.id, b.site, b.shape, b.state, b.lrm, len(b.workers), b.running, b.done)
             for b in blocks[-shown["blocks"]:]], widths={0: 14, 4: 14}))
    if throttle_rows:
        parts.append(_title("throttles"))
        parts.extend(_throttles(throttles, selected, throttle_rows))
    n = shown["failures"]
    if n:
        parts.append(_title(f"failures ({state.failure_count})"))
        for f in failures[-n:]:
            code = "" if f.exit_code is None else f" exit {f.exit_code}"
            last = f.stderr.splitlines()[-1] if f.stderr else ""
            parts.append(((f"{f.app}@{f.site or '?'}{code} ", Style.PLAIN), (last, Style.RED)))
    n = shown["waiting"]
    if n:
        parts.extend(_table(("waiting", "site", "reason", "detail"),
                            [(f"{w.subject} {w.id}", w.site, w.reason, w.detail)
                             for w in waiting[-n:]], widths={0: 18, 2: 16, 3: 40}))
    if left >= 2 and state.feed:
        lines = list(state.feed)[-(left - 1):]
        parts.append(_title("summary"))
        parts.extend(line(text) for text in lines)
    parts.append(line(message or KEYS_HELP, Style.YELLOW if message else Style.DIM))
    if len(parts) > height:   # a terminal shorter than the header: the keys line stays
        parts = parts[:max(0, height - 1)] + parts[-1:]
    return [clean(row) for row in parts]
