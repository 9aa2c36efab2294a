"""Venues side by side: the named query topics-by-venue, the report's section and the concept map's venue filter
agree on the shares of each venue's papers about each concept."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import kg

from .conftest import FIXTURES

PAPERS = [
    ("i1", "We study reinforcement learning for robot control.", "ICML"),
    ("i2", "Reinforcement learning agents explore with curiosity.", "ICML"),
    ("i3", "A large language model writes code.", "ICML"),
    ("n1", "We study offline reinforcement learning from logged data.", "NeurIPS"),
    ("n2", "A diffusion model draws images.", "NeurIPS"),
]


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("venues")
    source = folder / "two-venues.jsonl"
    source.write_text("".join(json.dumps({"id": i, "abstract": a, "venue": v, "year": 2024}) + "\n" for i, a, v in PAPERS))
    built = kg.build([source], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)
    return kg.write(built, folder / "two-venues.ttl")


def test_topics_by_venue_gives_each_venues_share_with_narrower_concepts_rolled_up(graph: Path) -> None:
    rows = kg.query("topics-by-venue", {"concept": "reinforcement learning"}, graph=graph)
    got = {(r["venueLabel"], int(r["year"])): (int(r["papers"]), int(r["venuePapers"]), float(r["share"])) for r in rows}
    assert got == {("ICML", 2024): (2, 3, 0.6667), ("NeurIPS", 2024): (1, 2, 0.5)}  # offline RL counts as RL


def test_the_report_puts_venues_side_by_side_with_the_querys_shares(graph: Path, tmp_path: Path) -> None:
    page = kg.report(graph, tmp_path / "report.html").read_text(encoding="utf-8")
    section = re.search(r'<section id="venues">(.*?)</section>', page, re.S)
    assert section, "no venues section"
    heads = re.findall(r"<th class=\"n\">([^<]+)<br>", section.group(1))
    assert heads == ["ICML 2024", "NeurIPS 2024"]
    cells = {}
    for row in re.findall(r"<tr><td>([^<]+)</td>(.*?)</tr>", section.group(1)):
        cells[row[0]] = re.findall(r"(\d+)% <span", row[1])
    rows = kg.query("topics-by-venue", graph=graph)
    for r in rows:
        label, column = r["label"], heads.index(f"{r['venueLabel']} {r['year']}")
        if label in cells:
            assert int(cells[label][column]) == round(100 * float(r["share"])), (label, r)
    assert cells["reinforcement learning"] == ["67", "50"]


def test_one_venue_has_no_venues_section(tmp_path: Path) -> None:
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps({"id": "a", "abstract": PAPERS[0][1], "venue": "ICML", "year": 2024}) + "\n")
    out = kg.write(kg.build([source], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False), tmp_path / "one.ttl")
    assert 'id="venues"' not in kg.report(out, tmp_path / "r.html").read_text(encoding="utf-8")


def test_the_index_answers_topics_by_venue_as_the_engine_does_row_for_row(tmp_path: Path) -> None:
    """The SQL fast path (queries/topics-by-venue.sql) against the .rq on the engine, on a slice of real papers at
    several venues and years, with and without a concept: the same rows in the same order."""
    import pyoxigraph as ox

    from kg.graph.files import parse
    from kg.graph.handle import GraphFile
    from kg.sparql.backends import Engine, Index
    from kg.sparql.catalog import resolve
    from kg.sparql.run import run_on

    from .conftest import CORPUS

    if not CORPUS.is_file():
        pytest.skip("the shared corpus is absent")
    source = tmp_path / "slice.jsonl"
    with CORPUS.open(encoding="utf-8") as stream:
        source.write_text("".join(line for i, line in enumerate(stream) if i % 40 == 0), encoding="utf-8")
    graph = kg.write(kg.build([source]), tmp_path / "slice.ttl")
    store = ox.Store()
    store.extend(ox.Quad(t.subject, t.predicate, t.object) for t in parse(graph))
    index = GraphFile(graph).index()
    assert index is not None
    q = resolve("topics-by-venue")
    for params in ({}, {"concept": "https://w3id.org/kg/concept/reinforcement-learning"}):
        want, got = run_on(Engine(store), q, params), run_on(Index(index), q, params)
        assert len(want.rows) > (100 if not params else 10)
        assert got.rows == want.rows, params
