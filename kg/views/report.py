"""The `report` verb: one self-contained, offline HTML page of charts and tables about a graph.

Charts are drawn by matplotlib (Figure API with the SVG backend: no pyplot, no display) and
inlined as SVG with text kept as text; a Content-Security-Policy forbids every network load.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kg.core import progress
from kg.graph.atomic import atomic_write
from kg.graph.facts import Facts
from kg.graph.handle import refuse_overwrite
from kg.graph.index_facts import read_shown
from kg.views.analyze import Analysis, compute
from kg.views.venues import shares

TOP = 20  # concepts in the bar chart and tables
HEAT = 15  # concepts in the co-occurrence heat map
TRENDS = 6  # concepts followed year by year
COLOR = "#3b6ea8"
CSP = "default-src 'none'; style-src 'unsafe-inline'"


@progress.stepped("reporting on {graph}")
def report(graph: str | Path, out: str | Path) -> Path:
    """Write the HTML report of the graph file `graph` to `out` (atomically) and return its path."""
    refuse_overwrite(out, [graph])
    page = report_html(graph, Path(out).parent)
    with atomic_write(out, "w") as stream:
        stream.write(page)
    return Path(out)


def report_html(graph: str | Path, out_dir: str | Path = ".") -> str:
    """The report page of a graph file; links are relative to `out_dir`, where the page will live."""
    progress.stage(f"reading {graph}")
    result = compute(read_shown(graph))  # every figure of the page, not only those the analysis reads (decision 0075)
    facts = result.facts
    interactive = Path(graph).with_suffix(".html")
    link = quote(Path(os.path.relpath(interactive, out_dir)).as_posix()) if interactive.is_file() else None
    progress.stage("charts")
    by_concept = facts.papers_of()
    top = sorted(by_concept, key=lambda c: (-len(by_concept[c]), -result.pagerank.get(c, 0), c))
    sections = [
        _summary(facts, result, Path(graph).name, link),
        _chart_section("top-concepts", "Top concepts", "Papers per concept, for the most frequent concepts.", _bar_svg(
            "top-concepts", [(facts.concepts[c], len(by_concept[c])) for c in top[:TOP]], "papers")),
        _chart_section("areas", "Papers per top-level area", "A paper counts once in each area its concepts fall under: each concept's area is the one the rendered graph colours it by and the GraphML/GEXF export gives it (the nearest top concept up skos:broader).",
                       _bar_svg("areas", _areas(facts), "papers")),
        _trends_section(facts, top[:TRENDS]),
        _venues_section(facts),
        _chart_section("cooccurrence", "Co-occurrence of the top concepts", "Shared papers between pairs of the most frequent concepts.",
                       _heat_svg(facts, top[:HEAT])),
        _communities(result),
        _related(result, top[:TOP]),
        _bridges(result),
    ]
    title = f"kg report: {Path(graph).name}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n" + "\n".join(s for s in sections if s) + "\n</body>\n</html>\n"
    )


_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; } figcaption, .note { color: #666; font-size: .9em; }
table { border-collapse: collapse; } td, th { padding: .2em .6em; text-align: left; border-bottom: 1px solid #eee; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text))


def _summary(facts: Facts, result: Analysis, name: str, link: str | None) -> str:
    years = sorted(set(facts.years.values()))
    span = f"{years[0]}–{years[-1]}" if len(years) > 1 else (str(years[0]) if years else "unknown")
    rows = [
        ("papers", len(facts.papers)),
        ("concepts used as subjects", len(result.pagerank)),
        ("subject links", len(facts.subjects)),
        ("years", span),
        ("communities of two or more concepts", sum(1 for c in result.communities if len(c) > 1)),
    ]
    table = "".join(f"<tr><th>{_e(k)}</th><td class=\"n\">{_e(v)}</td></tr>" for k, v in rows)
    if link:
        where = f"<p>Explore the papers and concepts in the <a href=\"{_e(link)}\">interactive graph</a>.</p>"
    else:
        where = f"<p class=\"note\">No interactive graph beside {_e(name)}: run <code>kg render {_e(name)}</code> to draw one.</p>"
    return f"<section id=\"summary\">\n<table>{table}</table>\n{where}\n</section>"


def _chart_section(key: str, title: str, caption: str, svg: str | None) -> str:
    body = f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>" if svg else "<p class=\"note\">Not enough data for this chart.</p>"
    return f"<section id=\"{_e(key)}\">\n<h2>{_e(title)}</h2>\n{body}\n</section>"


def _areas(facts: Facts) -> list[tuple[str, int]]:
    counts: Counter[str] = Counter()
    for concepts in facts.concepts_of().values():
        counts.update({facts.area(c) for c in concepts})
    return [(facts.label(a), n) for a, n in sorted(counts.items(), key=lambda x: (-x[1], facts.label(x[0])))]


def _trends_section(facts: Facts, concepts: list[str]) -> str | None:
    years = sorted(set(facts.years.values()))
    if len(years) < 2:
        return None  # one year (or none) has no trend to show
    return _chart_section("trends", "Trends per year", "Papers per year (top) and the share of each year's papers about the most frequent concepts (bottom).",
                          _trend_svg(facts, concepts, years))


def _venues_section(facts: Facts) -> str | None:
    """The share of each venue's papers of a year about the top concepts, venues side by side (kg.views.venues)."""
    found = shares(facts)
    if len(found.groups) < 2:
        return None  # one venue (or none) has nothing to compare with
    head = "<tr><th>concept</th>" + "".join(
        f"<th class=\"n\">{_e(v)}{' ' + _e(y) if y else ''}<br><span class=\"note\">{found.papers[(v, y)]} papers</span></th>"
        for v, y in found.groups) + "</tr>"
    rows = "".join(
        f"<tr><td>{_e(facts.label(c))}</td>" + "".join(
            f"<td class=\"n\">{100 * found.share(c, g):.0f}% <span class=\"note\">({found.counts.get((c, g), 0)})</span></td>" for g in found.groups)
        + "</tr>" for c in found.concepts)
    caption = ("Share of each venue's papers of the year about each concept (papers about a narrower concept count for the "
               "broader one), for the venues and years with the most papers. All of them: kg query topics-by-venue.")
    return f"<section id=\"venues\">\n<h2>Venues side by side</h2>\n<p class=\"note\">{_e(caption)}</p>\n<table>{head}{rows}</table>\n</section>"


def _text(label: str, width: int = 40) -> str:
    """A label safe for matplotlib: shortened, with '$' escaped so it is not read as mathtext."""
    label = label if len(label) <= width else label[: width - 1] + "…"
    return label.replace("$", r"\$")


def _figure(width: float, height: float):  # -> matplotlib.figure.Figure
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Any, name: str) -> str:
    """The figure as an inline <svg> element: text as text, ids salted per chart, no timestamp."""
    import io

    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"kg-{name}"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "kg"})
    text = buffer.getvalue()
    start = text.index("<svg")
    return f"<div class=\"chart\" id=\"chart-{_e(name)}\">{text[start:].strip()}</div>"


def _bar_svg(name: str, items: list[tuple[str, int]], unit: str) -> str | None:
    if not items:
        return None
    fig = _figure(8, 0.8 + 0.28 * len(items))
    ax = fig.add_subplot()
    labels = [_text(label) for label, _ in items][::-1]
    values = [n for _, n in items][::-1]
    bars = ax.barh(range(len(items)), values, color=COLOR)
    ax.set_yticks(range(len(items)), labels)
    ax.bar_label(bars, padding=3, fontsize=8)
    ax.set_xlabel(unit)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, name)


def _trend_svg(facts: Facts, concepts: list[str], years: list[int]) -> str:
    per_year = Counter(facts.years[p] for p in facts.papers if p in facts.years)
    fig = _figure(8, 5.5)
    top_ax, ax = fig.subplots(2, 1, sharex=True, height_ratios=(1, 2))
    top_ax.bar(years, [per_year[y] for y in years], color=COLOR)
    top_ax.set_ylabel("papers")
    for concept in concepts:
        counts = Counter(facts.years[p] for p, c in facts.subjects if c == concept and p in facts.years)
        ax.plot(years, [100 * counts[y] / per_year[y] if per_year[y] else 0 for y in years], marker="o", markersize=3,
                label=_text(facts.concepts[concept]))
    ax.set_ylabel("% of the year's papers")
    ax.set_xlabel("year")
    ax.set_xticks(years if len(years) <= 12 else years[:: -(-len(years) // 12)])  # whole years, never 2023.75
    ax.xaxis.set_major_formatter("{x:.0f}")
    if concepts:
        ax.legend(fontsize=8, frameon=False)
    for a in (top_ax, ax):
        a.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "trends")


def _heat_svg(facts: Facts, concepts: list[str]) -> str | None:
    if len(concepts) < 2:
        return None
    import matplotlib
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    pairs = facts.pairs()
    size = len(concepts)
    matrix = np.zeros((size, size))
    for i, a in enumerate(concepts):
        for j, b in enumerate(concepts):
            matrix[i, j] = pairs.get((min(a, b), max(a, b)), 0) if i != j else np.nan  # the diagonal would drown the scale
    fig = _figure(8, 6.5)
    ax = fig.add_subplot()
    # pcolormesh draws vector cells (imshow would embed a PNG inside the SVG).
    cmap = matplotlib.colormaps["Blues"].with_extremes(bad="#f4f4f4")  # no shared paper: plain grey, not pale blue
    image = ax.pcolormesh(np.ma.masked_where(~(matrix > 0), matrix), cmap=cmap, vmin=0, edgecolors="white", linewidth=0.5)
    ax.invert_yaxis()
    ax.set_aspect("equal")
    labels = [_text(facts.concepts[c], 28) for c in concepts]
    ticks = [i + 0.5 for i in range(size)]
    ax.set_xticks(ticks, labels, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(ticks, labels, fontsize=8)
    peak = np.nanmax(matrix) if size else 0
    for i in range(size):
        for j in range(size):
            if i != j and matrix[i, j]:
                ax.text(j + 0.5, i + 0.5, str(int(matrix[i, j])), ha="center", va="center", fontsize=7,
                        color="white" if matrix[i, j] > peak / 2 else "#222")
    bar = fig.colorbar(image, ax=ax, label="shared papers", shrink=0.7)
    bar.ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of papers are whole numbers
    bar.solids.set_rasterized(False)  # keep the scale vector too: no PNG inside the page
    return _svg(fig, "heatmap")


def _communities(result: Analysis) -> str:
    facts = result.facts
    groups = [(n, m) for n, m in enumerate(result.communities, start=1) if len(m) > 1]
    alone = [m[0] for m in result.communities if len(m) == 1]
    items = "".join(
        f"<li id=\"community-{n}\"><strong>community {n}</strong> ({len(m)} concepts): "
        + ", ".join(_e(facts.concepts[c]) for c in m) + "</li>"
        for n, m in groups
    )
    body = f"<ol class=\"communities\">{items}</ol>" if groups else "<p class=\"note\">No two concepts share a paper yet.</p>"
    if alone:
        body += f"<p class=\"note\">Concepts in a community of their own: {', '.join(_e(facts.concepts[c]) for c in sorted(alone, key=lambda c: facts.concepts[c]))}.</p>"
    caption = "Louvain communities of the co-occurrence graph (fixed seed), members by PageRank."
    return f"<section id=\"communities\">\n<h2>Communities</h2>\n<p class=\"note\">{_e(caption)}</p>\n{body}\n</section>"


def _related(result: Analysis, concepts: list[str]) -> str:
    facts = result.facts
    best: dict[str, list[tuple[float, int, str]]] = {}
    for r in result.related:
        best.setdefault(r.a, []).append((r.jaccard, r.weight, r.b))
        best.setdefault(r.b, []).append((r.jaccard, r.weight, r.a))
    rows = []
    for c in concepts:
        if c in best:
            near = sorted(best[c], key=lambda x: (-x[0], -x[1], x[2]))[:5]
            rows.append(f"<tr><td>{_e(facts.concepts[c])}</td><td class=\"n\">{result.pagerank.get(c, 0):.3f}</td><td>"
                        + ", ".join(f"{_e(facts.concepts[o])} ({w})" for _, w, o in near) + "</td></tr>")
    if not rows:
        return ""
    head = "<tr><th>concept</th><th>PageRank</th><th>most related (shared papers)</th></tr>"
    return f"<section id=\"related\">\n<h2>Related concepts</h2>\n<table>{head}{''.join(rows)}</table>\n</section>"


def _bridges(result: Analysis) -> str:
    if not result.bridges:
        return ""
    facts = result.facts
    rows = "".join(
        f"<tr><td>{_e(facts.papers[b.paper])}</td><td class=\"n\">{b.betweenness:.4f}</td><td>"
        + ", ".join(_community_ref(result, n) for n in b.communities) + "</td></tr>"
        for b in result.bridges
    )
    head = "<tr><th>paper</th><th>betweenness</th><th>communities</th></tr>"
    return f"<section id=\"bridges\">\n<h2>Bridging papers</h2>\n<table>{head}{rows}</table>\n</section>"


def _community_ref(result: Analysis, number: int) -> str:
    members = result.communities[number - 1]
    if len(members) == 1:
        return _e(result.facts.concepts[members[0]])  # singletons are not listed, so name the concept
    return f"<a href=\"#community-{number}\">community {number}</a>"
