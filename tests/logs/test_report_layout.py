"""The HTML report reads well: of a real Swift 0.96 log and of a real local run, its titles
fit their charts, legends sit beside the data, times carry no float noise, and Tss says
that it includes waiting for a free slot."""

from __future__ import annotations

import asyncio
import html
import json
import re

import pytest
from bokeh.models import DatetimeAxis, Div, Legend, Title
from bokeh.plotting import figure

from swiftnb.logs.frame import LogFrame
from swiftnb.logs.report import report_layout, write_report

from ._helpers import DATA

pytestmark = pytest.mark.timeout(120)

#: a number with more decimals than any time or duration of the report needs
FLOAT_NOISE = re.compile(r"\d\.\d{7,}")


def _bag_run(tmp_path) -> LogFrame:
    """A real local run of 8 apps, as a log frame read back from its log."""
    from swiftnb.runner import start_run

    async def go():
        run = start_run('type file;\napp (file o) work(int i) { sh "-c" "sleep 0.$0; echo $0" '
                        'i stdout=@o; }\nfile f[] <simple_mapper; prefix="out", suffix=".txt">;'
                        "\nforeach i in [1:8] { f[i] = work(i); }\n", base_dir=str(tmp_path))
        await run
        assert run.ok, run.errors
        return run.log_path

    return LogFrame.read(asyncio.run(go()))


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    return {"swift-0.96": LogFrame.read(DATA / "stampede-exp-017" / "swift.log.bz2"),
            "local run": _bag_run(tmp_path_factory.mktemp("bag"))}


def _figures(lf: LogFrame) -> list[figure]:
    figures = list(report_layout(lf, title="a report").select({"type": figure}))
    assert len(figures) >= 4
    return figures


@pytest.mark.parametrize("which", ["swift-0.96", "local run"])
def test_titles_fit_their_charts(frames, which):
    for p in _figures(frames[which]):
        for title in p.select({"type": Title}):
            size = float(str(title.text_font_size or "13px").removesuffix("px"))
            widest = max((len(line) for line in title.text.split("\n")), default=0)
            # a bold sans character is at most ~0.6 em wide
            assert widest * 0.6 * size <= p.width, (title.text, p.width)


@pytest.mark.parametrize("which", ["swift-0.96", "local run"])
def test_legends_sit_beside_the_data(frames, which):
    legends = 0
    for p in _figures(frames[which]):
        assert not [r for r in p.center if isinstance(r, Legend)], p.title.text
        legends += len([r for r in p.right if isinstance(r, Legend)])
    assert legends >= 2


@pytest.mark.parametrize("which", ["swift-0.96", "local run"])
def test_clock_axes_say_clock_times(frames, which):
    axes = [a for p in _figures(frames[which]) for a in p.xaxis if isinstance(a, DatetimeAxis)]
    assert axes
    for axis in axes:
        assert axis.formatter.milliseconds == "%H:%M:%S.%3N"  # not bokeh's "0ms 500ms"


@pytest.mark.parametrize("which", ["swift-0.96", "local run"])
def test_times_without_float_noise(frames, which, tmp_path):
    path = write_report(frames[which], tmp_path / "r.html", title="a report")
    page = open(path, encoding="utf-8").read()
    docs = json.loads(re.search(r'<script type="application/json" id="[^"]+">\s*(.*?)\s*'
                                r"</script>", page, re.S).group(1))
    texts = [m for m in re.findall(r'"text":\s*"((?:[^"\\]|\\.)*)"', json.dumps(docs))]
    summary = html.unescape(next(t for t in texts if "time to completion" in t))
    assert not FLOAT_NOISE.search(summary), summary
    assert re.search(r"start</th><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC<", summary)
    assert "Tss" in summary


def test_tss_is_not_shown_as_set_up_alone(frames):
    from swiftnb.logs.report import timing_label

    assert "free slot" in timing_label("Tss")
    assert "submission" in timing_label("Tw")
    divs = [d.text for d in report_layout(frames["local run"]).select({"type": Div})]
    assert any("waiting for a free slot" in t for t in divs)
