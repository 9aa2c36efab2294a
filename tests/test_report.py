"""`kg report`: one self-contained offline HTML page of charts and tables."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli

CHROMIUM = Path("/usr/bin/chromium")


def _attributes(page: str, name: str) -> list[str]:
    return re.findall(rf'\b{name}="([^"]*)"', page)


@pytest.fixture(scope="module")
def two_topics_report(two_topics_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report") / "report.html"
    kg.report(two_topics_ttl, out)
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def sample_report(sample_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample graph rendered and reported, in a folder of its own; the report in a sub-folder."""
    folder = tmp_path_factory.mktemp("sample-report")
    graph = folder / "icml2024.ttl"
    shutil.copy(sample_ttl, graph)
    kg.render(graph, graph.with_suffix(".html"))
    out = folder / "reports" / "icml2024.html"
    result = CliRunner().invoke(cli, ["report", str(graph), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_report_shows_every_chart_when_years_differ(two_topics_report: str) -> None:
    for section in ("summary", "top-concepts", "areas", "trends", "cooccurrence", "communities", "related", "bridges"):
        assert f'<section id="{section}"' in two_topics_report
    assert two_topics_report.count("<svg") == 4  # top concepts, areas, trends, heat map
    # the areas are the two top concepts of the fixture scheme
    areas = two_topics_report.split('id="chart-areas"')[1].split("</svg>")[0]
    assert ">astronomy<" in areas and ">biology<" in areas


def test_report_lists_the_communities_with_their_members(two_topics_report: str) -> None:
    items = re.findall(r'<li id="community-\d+">(.*?)</li>', two_topics_report)
    assert len(items) == 2
    assert any(all(c in item for c in ("quasar lensing", "pulsar timing", "nebula mapping")) for item in items)
    assert any(all(c in item for c in ("protein folding", "gene editing", "cell imaging")) for item in items)


def test_report_escapes_text_and_loads_nothing(two_topics_report: str) -> None:
    assert "<script" not in two_topics_report  # the bridge paper's title is "<script>alert('x')</script> & …"
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; a $bridge$" in two_topics_report
    assert _attributes(two_topics_report, "src") == []
    assert all(h.startswith("#") for h in _attributes(two_topics_report, "href") + _attributes(two_topics_report, "xlink:href"))
    assert "default-src 'none'" in two_topics_report
    assert "run <code>kg render two-topics.ttl</code>" in two_topics_report  # no interactive graph beside it


def test_single_year_has_no_trend_chart(sample_report: Path) -> None:
    page = sample_report.read_text(encoding="utf-8")
    assert 'id="trends"' not in page  # the bundled sample is all ICML 2024
    assert '<a href="../icml2024.html">interactive graph</a>' in page
    assert page.count("<svg") == 3


def test_report_is_byte_identical(two_topics_ttl: Path, two_topics_report: str, tmp_path: Path) -> None:
    assert kg.report(two_topics_ttl, tmp_path / "again.html").read_text(encoding="utf-8") == two_topics_report


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs headless Chromium at /usr/bin/chromium")
def test_report_opens_offline_in_chromium_with_its_charts(sample_report: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    requests: list[str] = []
    errors: list[str] = []
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=args)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(sample_report.as_uri())
            boxes = page.eval_on_selector_all(
                "svg", "els => els.filter(e => !e.parentElement.closest('svg')).map(e => e.getBoundingClientRect()).map(r => [r.width, r.height])"
            )
            text_in_charts = page.eval_on_selector_all("div.chart svg text", "els => els.length")
            link = page.get_attribute("#summary a", "href")
        finally:
            browser.close()
    assert requests and all(u.startswith("file://") for u in requests), requests
    assert errors == []  # a CSP violation (anything the page tried to load) would be logged here
    assert len(boxes) == 3
    assert all(w > 200 and h > 50 for w, h in boxes), boxes
    assert text_in_charts > 10  # labels are real text, drawn
    assert (sample_report.parent / link).resolve() == sample_report.parent.parent / "icml2024.html"


def test_the_trend_axis_reads_whole_years(two_topics_report: str) -> None:
    """Two years of papers gave ticks at 2023.75 and 2024.25; a year axis names years."""
    import re

    trends = two_topics_report.split('id="chart-trends"')[1].split("</svg>")[0]
    ticks = re.findall(r">\s*(\d{4}(?:\.\d+)?)\s*<", trends)
    assert ticks and all("." not in t for t in ticks), ticks
