"""The charts in a real browser (tests/test_browser.py's Chromium and tabs): bars as long as their
values, a day axis without gaps, no page wider than its window at 1,366 px or on a phone, unknown
cost told as unknown, a long command clipped and opened with a click, and the hints of an empty range.

Besides the embedded sample, a server on an archive of sample agent logs of several kinds, one of
whose commands is a long heredoc. Screenshots are kept in tests/artifacts/browser/."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import shutil

import pytest
from conftest import sample_source, write_files
from test_browser import Visit, browser, server  # noqa: F401  (the fixtures)
from test_web import serving

from archivist.archive.indexer import index_workspace

KINDS = ("aider", "codex", "cursor", "gemini-cli", "opencode")
RUN = "uv run pytest tests/test_keepalive.py --count 50 -q"  # a command in the sample Claude Code log
HEREDOC = "cat > notes/keepalive.md <<'EOF'\n" + "".join(f"line {n} of the notes\n" for n in range(1, 41)) + "EOF"
SHORT_PATH = "/home/dev/src/captions-gateway/tests/test_keepalive.py"  # a file it names
LONG_PATH = "/home/dev/src/captions-gateway/tests/" + "deeply/nested/" * 12 + "test_keepalive.py"
WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
YEAR = "start_date=2025-01-01&end_date=2025-12-31"


@pytest.fixture(scope="module")
def logs_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("charts")
    claude = root / "projects"
    shutil.copytree(sample_source("claude-code"), claude)
    for log in claude.rglob("*.jsonl"):
        text = log.read_text(encoding="utf-8")
        text = text.replace(json.dumps(RUN), json.dumps(HEREDOC)).replace(SHORT_PATH, LONG_PATH)
        log.write_text(text, encoding="utf-8")
    workspace = write_files(root / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    sources = [("claude-code", claude), *((kind, sample_source(kind)) for kind in KINDS)]
    index_workspace(workspace, log_sources=sources)
    with serving(workspace) as base:
        yield base


def bars_of(page, chart: str) -> list[dict]:
    """Each bar of a chart: its key, its value, and the width of its fill and where its track starts."""
    return page.evaluate(
        """(chart) => [...document.querySelectorAll(`[data-chart="${chart}"] .bar`)].map((bar) => ({
            key: bar.dataset.key, value: bar.dataset.value,
            width: bar.querySelector('.fill').getBoundingClientRect().width,
            track: bar.querySelector('.track').getBoundingClientRect().left,
            label: bar.querySelector('.label').getBoundingClientRect().right,
        }))""",
        chart,
    )


def scrolls_sideways(page) -> int:
    """How far a page is wider than its window, in pixels (none: 0)."""
    return page.evaluate("() => document.scrollingElement.scrollWidth - window.innerWidth")


def test_bars_are_as_long_as_their_values_and_equal_values_equal_bars(browser, logs_server):  # noqa: F811
    visit = Visit(browser, logs_server)
    page = visit.page
    page.set_viewport_size(WIDE)
    page.goto(logs_server + "/activity?" + YEAR)
    equal_pairs = 0
    for chart in ("project", "agent", "model"):
        bars = bars_of(page, chart)
        assert len(bars) >= 2, chart
        top = max(bars, key=lambda bar: float(bar["value"]))
        assert top["width"] > 100, chart
        for bar in bars:
            assert bar["width"] == pytest.approx(top["width"] * float(bar["value"]) / float(top["value"]), abs=2), (
                chart,
                bar,
            )
            assert bar["track"] == pytest.approx(top["track"], abs=0.5)  # every bar starts where the others do
            assert bar["label"] <= bar["track"]  # its label in a column of its own
        for one, other in itertools.pairwise(bars):
            if one["value"] == other["value"]:
                equal_pairs += 1
                assert one["width"] == pytest.approx(other["width"], abs=0.5), (chart, one, other)
    assert equal_pairs >= 1  # the sample has projects of as many sessions
    visit.shot("charts-01-activity-wide")
    visit.close()


def test_the_day_axis_of_activity_has_every_day(browser, logs_server):  # noqa: F811
    visit = Visit(browser, logs_server)
    page = visit.page
    page.goto(logs_server + "/activity?" + YEAR)
    for chart in ("sessions", "messages", "total_tokens", "cost"):
        periods = page.eval_on_selector_all(f'[data-chart="{chart}"] .bar', "bars => bars.map(b => b.dataset.period)")
        first, last = dt.date.fromisoformat(periods[0]), dt.date.fromisoformat(periods[-1])
        assert len(periods) == (last - first).days + 1 > 30, chart
        assert periods == [(first + dt.timedelta(days=n)).isoformat() for n in range(len(periods))], chart
        labels = page.eval_on_selector_all(
            f'[data-chart="{chart}"] .bar .label',
            "labels => labels.filter(l => l.textContent).map(l => [l.getBoundingClientRect().left, l.getBoundingClientRect().right])",
        )
        assert 2 <= len(labels) <= 8
        assert all(left[1] <= right[0] for left, right in itertools.pairwise(labels)), labels  # none overlaps
    visit.close()


@pytest.mark.parametrize("size", [WIDE, PHONE], ids=["1366", "390"])
def test_no_page_scrolls_sideways(browser, server, logs_server, size):  # noqa: F811
    wide = size == WIDE
    sample, logs = Visit(browser, server), Visit(browser, logs_server)
    for visit, paths in (
        (sample, ["/", "/search?query=authentication", "/document/1"] if wide else ["/search?query=authentication"]),
        (
            logs,
            ["/activity", "/activity?" + YEAR, "/usage", "/project/hooks", "/file?path=src%2Fhooks%2Fsender.py"]
            if wide
            else ["/activity", "/activity?" + YEAR],
        ),
    ):
        visit.page.set_viewport_size(size)
        for path in paths:
            response = visit.page.goto(visit.server + path)
            assert response.status == 200, path
            assert scrolls_sideways(visit.page) <= 0, (size, path)
    logs.shot(f"charts-02-activity-{size['width']}")
    sample.close()
    logs.close()


def test_unknown_cost_is_told_as_unknown(browser, logs_server):  # noqa: F811
    visit = Visit(browser, logs_server)
    page = visit.page
    page.goto(logs_server + "/activity?" + YEAR)
    unknown = page.locator('[data-chart="cost"] .bar.unknown')
    assert unknown.count() >= 1
    assert unknown.first.locator(".n").text_content() == "unknown"
    assert unknown.first.get_attribute("title").endswith(": unknown")
    cursor = page.locator('[data-by="agent"] tr', has_text="cursor")
    assert "unknown" in cursor.inner_text() and "0.00" not in cursor.inner_text()
    page.goto(logs_server + "/usage?group_by=agent&" + YEAR)
    row = page.locator('tr[data-key="cursor"]')
    assert "unknown" in row.inner_text() and "0.00" not in row.inner_text()
    visit.close()


def test_a_long_command_and_a_long_path_are_clipped_and_open_on_a_click(browser, logs_server):  # noqa: F811
    visit = Visit(browser, logs_server)
    page = visit.page
    page.goto(logs_server + "/activity?" + YEAR)
    clip = page.locator("details.archivist-clip", has_text="cat > notes/keepalive.md")
    assert clip.count() == 1
    whole = clip.locator("pre")
    assert clip.locator("summary").inner_text().startswith("cat > notes/keepalive.md <<'EOF'")
    assert not whole.is_visible() and "line 40 of the notes" not in clip.inner_text()
    clip.locator("summary").click()
    assert whole.is_visible() and whole.inner_text().endswith("line 40 of the notes\nEOF")
    visit.shot("charts-03-a-command-opened")
    cut = page.locator(f'.archivist-project a.archivist-file-link[title="{LONG_PATH}"]')
    assert cut.count() == 1 and "…" in cut.inner_text() and len(cut.inner_text()) < len(LONG_PATH)
    cut.click()
    page.wait_for_url("**/file?path=**")
    assert LONG_PATH in page.locator("body").inner_text()
    assert scrolls_sideways(page) <= 0
    visit.close()


@pytest.mark.parametrize("view", ["activity", "usage"])
def test_an_empty_range_says_where_the_newest_day_is_and_leads_there(browser, logs_server, view):  # noqa: F811
    visit = Visit(browser, logs_server)
    page = visit.page
    page.goto(f"{logs_server}/{view}?start_date=2020-01-01&end_date=2020-01-31")
    hint = page.locator(".archivist-empty-hint")
    newest = hint.get_attribute("data-newest")
    assert newest and newest in hint.inner_text()
    hint.locator("a").click()
    page.wait_for_url(f"**end_date={newest}**")
    shown = ".archivist-project" if view == "activity" else ".archivist-usage-table tbody tr"
    assert page.locator(shown).count() >= 1
    assert page.locator(".archivist-timeline .bar").count() >= 1
    visit.shot(f"charts-04-{view}-from-the-hint")
    visit.close()
