"""`kg render`, `kg report` and `kg export` give every concept the same figures: its papers and its area.

Each command is run through the CLI and its output read back (the page's JSON data, the report's SVG text, the
GraphML parsed by networkx), on the bundled sample and on a 2,000-paper slice of the corpus.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from kg.cli import cli


def _run(*args: str) -> None:
    got = CliRunner().invoke(cli, list(args))
    assert got.exit_code == 0, got.output


def _rendered(graph: Path, out: Path) -> tuple[dict[str, tuple[str, int]], dict[str, set[str]]]:
    """Concept IRI -> (area, papers) as the concepts page draws it; paper IRI -> its concepts from the papers page."""
    concepts = out / "concepts.html"
    _run("render", str(graph), "-o", str(concepts), "--view", "concepts", "--max-nodes", "0")
    data = _page_data(concepts.read_text(encoding="utf-8"))
    drawn = {n["id"]: (n["area"], n["info"]["papers"]) for n in data["nodes"] if n["kind"] == "concept"}
    for n in data["nodes"]:
        if n["kind"] == "concept":
            assert n["area"] == n["info"]["area"] and n["info"]["papers"] >= 1
    papers = out / "papers.html"
    _run("render", str(graph), "-o", str(papers), "--view", "papers", "--max-nodes", "0")
    data = _page_data(papers.read_text(encoding="utf-8"))
    kinds = {n["id"]: n["kind"] for n in data["nodes"]}
    about: dict[str, set[str]] = {}
    for e in data["edges"]:
        assert kinds[e["from"]] == "paper" and kinds[e["to"]] == "concept"
        about.setdefault(e["from"], set()).add(e["to"])
    return drawn, about


def _page_data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="kg-data">(.*?)</script>', page, re.S)
    assert found
    return json.loads(found.group(1))


def _exported(graph: Path, out: Path) -> tuple[dict[str, tuple[str, int]], dict[str, str]]:
    """Concept IRI -> (area, papers) in the GraphML export, and each concept's label there."""
    import networkx as nx

    path = out / "concepts.graphml"
    _run("export", str(graph), "-o", str(path), "--view", "concepts")
    g = nx.read_graphml(path)
    return {n: (a["area"], a["papers"]) for n, a in g.nodes(data=True)}, {n: a["label"] for n, a in g.nodes(data=True)}


def _chart(page: str, name: str) -> list[tuple[str, int]]:
    """The (label, number) bars of one of the report's bar charts, from its SVG text, longest bar first."""
    svg = page.split(f'id="chart-{name}"')[1].split("</svg>")[0]
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    bars = texts[texts.index("papers") + 1:]
    half = len(bars) // 2
    assert half and len(bars) == 2 * half
    return [(_unescape(label), int(n)) for label, n in zip(bars[:half][::-1], bars[half:][::-1])]


def _unescape(text: str) -> str:
    import html

    return html.unescape(text)


def _short(label: str, width: int = 40) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _check(graph: Path, out: Path) -> int:
    drawn, about = _rendered(graph, out)
    exported, labels = _exported(graph, out)
    assert exported == drawn, sorted((c, drawn.get(c), exported.get(c)) for c in set(drawn) | set(exported) if drawn.get(c) != exported.get(c))[:10]
    report = out / "report.html"
    _run("report", str(graph), "-o", str(report))
    page = report.read_text(encoding="utf-8")
    # Papers per area: a paper counts once in each area its concepts are drawn in.
    per_area = Counter(area for concepts in about.values() for area in {drawn[c][0] for c in concepts})
    want = sorted(per_area.items(), key=lambda x: (-x[1], x[0]))
    assert _chart(page, "areas") == [(_short(a), n) for a, n in want]
    # The top concepts: the same paper counts as on the page and in the export.
    top = _chart(page, "top-concepts")
    counts_by_label = {_short(labels[iri]): n for iri, (_, n) in drawn.items()}
    assert len(top) >= 10
    assert [(label, counts_by_label[label]) for label, _ in top] == top
    return len(drawn)


def test_the_sample_gets_the_same_figures_everywhere(sample_ttl: Path, tmp_path: Path) -> None:
    assert _check(sample_ttl, tmp_path) >= 80


def test_a_corpus_slice_gets_the_same_figures_everywhere(corpus_slice_analyzed: Path, tmp_path: Path) -> None:
    assert _check(corpus_slice_analyzed, tmp_path) >= 300
