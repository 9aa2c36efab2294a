"""A build's annotations taken whole by the query index (kg.graph.annotations.Annotated) against the SQL that joins
any graph's annotation triples.

The query index has two ways to make its `mention`, `quote` and `scored` rows: staged triples joined by SQL when the
writer closes (any graph, any order), and, for a build's own annotations, the rows taken from each annotation's terms
as it is written. Both must give the same index: every table the same rows (`mention` and `quote` in any order, since
every query reading them sorts), the same term ids.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.graph import index_writer
from kg.graph.annotations import Annotated
from kg.graph.files import parse
from kg.graph.index_file import index_path
from kg.graph.stamp import stamp
from kg.graph.vocabulary import DCTERMS, KG, OA, XSD
from kg.pipeline import triples as triples_
from kg.pipeline.build import sample_inputs

UNORDERED = {"mention", "quote"}  # rowid tables whose rows come in join order: every reader sorts them


def _flat(items: list) -> list[ox.Triple]:
    return [t for x in items for t in (x.triples if type(x) is Annotated else (x,))]


def _index(graph: Path, items: list, name: str) -> Path:
    """The index of `items` (for `graph`), moved aside as NAME.sqlite."""
    made = index_writer.write(graph, items, stamp(graph))
    assert made is not None
    return made.rename(graph.with_name(f"{name}.sqlite"))


def _tables(index: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(index)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'fts%' AND name != 'meta'")]
        return {n: db.execute(f"SELECT * FROM {n}").fetchall() for n in names}
    finally:
        db.close()


def _same(a: Path, b: Path) -> None:
    ta, tb = _tables(a), _tables(b)
    assert ta.keys() == tb.keys()
    for name in ta:
        if name in UNORDERED:
            assert sorted(ta[name]) == sorted(tb[name]), name
        else:
            assert ta[name] == tb[name], name


def _graph(tmp: Path, triples: list) -> Path:
    graph = tmp / "g.nt"
    graph.write_bytes(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"")
    return graph


N, L, T = ox.NamedNode, ox.Literal, ox.Triple
EXACT = ["graph neural networks", "RL", "", "naïve \"quoted\" text", "a\nb", "offline RL"]
SCORES = ["0.5", "0.118", "0.1180", "1.000", "1"]  # 0.1180 and 0.118: one term as the engine stores them


@st.composite
def annotated(draw: st.DrawFn) -> list:
    """A paper's triples and annotations as a build writes them: concepts, papers, scores and spans shared among them."""
    t = triples_._terms()
    items: list = []
    for i in range(draw(st.integers(1, 4))):
        paper = N(f"https://x.org/paper/p{i}")
        items.append(T(paper, N(DCTERMS + "abstract"), L(" ".join(draw(st.lists(st.sampled_from(EXACT), max_size=3))))))
        for n in range(draw(st.integers(0, 6))):
            body = N(f"https://x.org/concept/c{draw(st.integers(0, 3))}")
            if draw(st.booleans()):
                items.append(T(paper, N(DCTERMS + "subject"), body))
            start = draw(st.integers(0, 40))
            score = L(draw(st.sampled_from(SCORES)), datatype=N(XSD + "decimal"))
            on = t["title"] if draw(st.booleans()) else None
            items.append(triples_._annotation(t, f"https://x.org/annotation/p{i}-{n + 1}", body, paper, start,
                                              start + draw(st.integers(0, 9)), draw(st.sampled_from(EXACT)), score, on))
    return items


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=annotated())
def test_annotations_taken_whole_give_the_index_their_triples_give(tmp_path: Path, items: list) -> None:
    flat = _flat(items)
    graph = _graph(tmp_path, flat)
    whole, by_sql = _index(graph, items, "whole"), _index(graph, flat, "sql")
    _same(by_sql, whole)
    assert len(_tables(whole)["mention"]) == sum(type(x) is Annotated for x in items)


def test_a_build_writes_the_index_the_sql_makes_from_its_file(tmp_path: Path) -> None:
    """The sample with titles, so title spans (kg:onProperty) and proposed methods' annotations are among the rows."""
    rows = tmp_path / "papers.jsonl"
    rows.write_text(
        '{"id": "a", "title": "Offline reinforcement learning with diffusion models", "abstract": "We propose QORA, an offline '
        'reinforcement learning method that uses diffusion models as policies. Federated learning and graph neural networks '
        'are discussed. Offline reinforcement learning benefits."}\n'
        '{"id": "b", "title": "Graph neural networks for molecules", "abstract": "Graph neural networks learn molecular '
        'representations; we study message passing and contrastive learning for drug discovery with graph neural networks."}\n',
        encoding="utf-8")
    built = kg.build([rows, *sample_inputs()], jobs=1)
    assert _flat(list(built.triples(annotated=True))) == list(built.triples())  # the same file either way
    graph = kg.write(built, tmp_path / "g.ttl")
    written = index_path(graph).rename(tmp_path / "whole.sqlite")
    triples = list(parse(graph))
    assert any(t.predicate.value == KG + "onProperty" for t in triples)
    assert sum(t.predicate.value == OA + "hasBody" for t in triples) > 100
    _same(_index(graph, triples, "sql"), written)
    assert len(_tables(written)["mention"]) > 100
