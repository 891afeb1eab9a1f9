"""The dataflow graph of a run, as ``-pgraph`` writes it (swiftnb/engine/pgraph.py): one
box per procedure call, one parallelogram per file, edges from a call's input files to the
call and from the call to its outputs, drawn as an SVG laid out here (no Graphviz).

Layout: a file no call writes is in layer 0; a call is one layer below its deepest input;
an output file one below its call.  Within a layer nodes keep the order they appeared.
Only the first ``MAX_CALLS`` calls are drawn (a note says how many more there are); the
SVG is redrawn when the number of calls (or of reused ones) changed, at most once per
``EVERY`` seconds.  A call memoization reused (JOB_CACHED in the stream) is drawn in the
cached colour with "cached" in its tooltip: the part of the graph a re-run skipped.
"""

from __future__ import annotations

import html
import time

import ipywidgets as W

from swiftnb.engine.pgraph import PGraph
from swiftnb.events import Event
from swiftnb.widgets.progress import CACHED_COLOR

__all__ = ["GraphPanel", "layout"]

_W, _H, _GX, _GY = 120, 26, 16, 46   # node size and gaps (px)


def layout(calls: list[tuple[str, str, list[str], list[str]]]) -> tuple[
        dict[str, tuple[int, int]], list[tuple[str, str]], dict[str, str]]:
    """Positions (layer, index in layer) of every node, the edges, and each node's kind
    ("call" or "file") keyed by node id (a call's jobid, a file's path)."""
    kind: dict[str, str] = {}
    layer: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    for jobid, _proc, ins, outs in calls:
        kind[jobid] = "call"
        for f in ins:
            kind.setdefault(f, "file")
            layer.setdefault(f, 0)
            edges.append((f, jobid))
        depth = 1 + max((layer[f] for f in ins), default=-1)
        layer[jobid] = max(depth, layer.get(jobid, 0))
        for f in outs:
            kind.setdefault(f, "file")
            layer[f] = max(layer.get(f, 0), layer[jobid] + 1)
            edges.append((jobid, f))
    # a file read before it was written: push its readers below it
    for _ in range(3):
        moved = False
        for a, b in edges:
            if layer[b] <= layer[a]:
                layer[b] = layer[a] + 1
                moved = True
        if not moved:
            break
    pos: dict[str, tuple[int, int]] = {}
    count: dict[int, int] = {}
    for node in layer:
        i = count.get(layer[node], 0)
        count[layer[node]] = i + 1
        pos[node] = (layer[node], i)
    return pos, edges, kind


def svg(calls: list[tuple[str, str, list[str], list[str]]],
        reused: frozenset[str] | set[str] = frozenset()) -> str:
    """The graph as an SVG document; the calls whose jobid is in ``reused`` marked."""
    pos, edges, kind = layout(calls)
    label = {jobid: proc for jobid, proc, _i, _o in calls}

    def xy(node: str) -> tuple[int, int]:
        lay, i = pos[node]
        return 8 + i * (_W + _GX), 8 + lay * (_H + _GY)

    width = 16 + (1 + max((i for _l, i in pos.values()), default=0)) * (_W + _GX)
    height = 16 + (1 + max((lay for lay, _i in pos.values()), default=0)) * (_H + _GY)
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
             f"font-family='monospace' font-size='10'>",
             "<defs><marker id='swiftnb-arrow' markerWidth='8' markerHeight='8' refX='8' "
             "refY='4' orient='auto'><path d='M0,0 L8,4 L0,8 z' fill='#666'/></marker></defs>"]
    for a, b in edges:
        (x1, y1), (x2, y2) = xy(a), xy(b)
        parts.append(f"<line x1='{x1 + _W // 2}' y1='{y1 + _H}' x2='{x2 + _W // 2}' "
                     f"y2='{y2}' stroke='#888' marker-end='url(#swiftnb-arrow)'/>")
    for node, k in kind.items():
        x, y = xy(node)
        name = label.get(node, node) if k == "call" else node.rsplit("/", 1)[-1]
        text = html.escape(name if len(name) <= 18 else name[:17] + "…")
        cached = k == "call" and node in reused
        title = html.escape(f"{label[node]} ({node}{', cached' if cached else ''})"
                            if k == "call" else node)
        if k == "call":
            fill = CACHED_COLOR if cached else "lightblue"
            shape = (f"<rect x='{x}' y='{y}' width='{_W}' height='{_H}' rx='3' "
                     f"fill='{fill}' stroke='#4a7'/>")
            if cached:
                k = "call swiftnb-cached"
        else:
            shape = (f"<polygon points='{x + 8},{y} {x + _W},{y} {x + _W - 8},{y + _H} "
                     f"{x},{y + _H}' fill='#e8e8e8' stroke='#999'/>")
        parts.append(f"<g class='swiftnb-{k}'><title>{title}</title>{shape}"
                     f"<text x='{x + _W // 2}' y='{y + _H // 2 + 4}' text-anchor='middle'>"
                     f"{text}</text></g>")
    parts.append("</svg>")
    return "".join(parts)


class GraphPanel:
    """The run's dataflow graph, redrawn as calls appear."""

    title = "Graph"
    MAX_CALLS = 200
    EVERY = 2.0

    def __init__(self, pgraph: PGraph | None) -> None:
        self.pgraph = pgraph
        self.drawn = -1
        self.reused: set[str] = set()      # jobids of the calls memoization reused
        self._drawn_reused = 0
        self._at = -1e9
        self.image = W.HTML(value="<i>no app call yet</i>" if pgraph is not None else
                            "<i>no dataflow graph: it is recorded by a live run</i>",
                            layout=W.Layout(overflow="auto", max_height="420px"))
        self.widget = W.VBox([self.image])

    @property
    def calls(self) -> list[tuple[str, str, list[str], list[str]]]:
        return [] if self.pgraph is None else self.pgraph.calls

    def apply(self, events: list[Event]) -> None:
        """The graph comes from the engine's PGraph; the events say which calls were
        reused."""
        for e in events:
            if e.kind == "JOB_CACHED":
                self.reused.add(str(e.fields.get("jobid")))

    def render(self, final: bool = False) -> bool:
        calls = self.calls
        if not calls or (len(calls) == self.drawn and len(self.reused) == self._drawn_reused):
            return False
        now = time.monotonic()
        if not final and now - self._at < self.EVERY:
            return False
        self._at = now
        self.drawn = len(calls)
        self._drawn_reused = len(self.reused)
        shown = calls[:self.MAX_CALLS]
        more = len(calls) - len(shown)
        note = (f"<i>{len(calls)} calls; the first {len(shown)} are drawn</i>"
                if more else f"{len(calls)} call{'s' if len(calls) != 1 else ''}")
        if self.reused:
            note += f", {len(self.reused)} reused (cached)"
        note = f"<div>{note}</div>"
        self.image.value = note + svg(shown, self.reused)
        return True

    def finish(self) -> None:
        self.render(final=True)
