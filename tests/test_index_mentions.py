"""A build's annotations joined as they stream past (kg.graph.index_mentions) against the SQL that joins any graph's.

The query index has two ways to make its `mention`, `quote` and `scored` rows: staged triples joined by SQL when the
writer closes (any graph, any order), and, for a build's own triples, each annotation joined in Python as the next
begins. Both must give the same index: every table the same rows (`mention` and `quote` in any order, since every
query reading them sorts), the same term ids.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings

import kg
from kg.graph import index_writer
from kg.graph.files import parse
from kg.graph.index_file import index_path
from kg.graph.stamp import stamp
from kg.graph.vocabulary import KG, OA, XSD
from kg.pipeline.build import sample_inputs
from tests.test_qindex import graphs

UNORDERED = {"mention", "quote"}  # rowid tables whose rows come in join order: every reader sorts them


def _index(graph: Path, triples: list, build_order: bool, name: str) -> Path | None:
    """The index of `triples` (for `graph`), moved aside as NAME.sqlite; None when the writer wrote none."""
    made = index_writer.write(graph, triples, stamp(graph), build_order=build_order)
    if made is None:
        return None
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(triples=graphs())
def test_generated_graphs_give_the_same_index_either_way(tmp_path: Path, triples: list[ox.Triple]) -> None:
    graph = _graph(tmp_path, triples)
    by_sql, joined = _index(graph, triples, False, "sql"), _index(graph, triples, True, "joined")
    assert by_sql is not None and joined is not None
    _same(by_sql, joined)


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
    graph = kg.write(built, tmp_path / "g.ttl")
    written = index_path(graph).rename(tmp_path / "joined.sqlite")
    triples = list(parse(graph))
    assert any(t.predicate.value == KG + "onProperty" for t in triples)
    assert sum(t.predicate.value == OA + "hasBody" for t in triples) > 100
    by_sql = _index(graph, triples, False, "sql")
    assert by_sql is not None
    _same(by_sql, written)
    assert len(_tables(written)["mention"]) > 100


def test_triples_out_of_a_builds_order_leave_no_index(tmp_path: Path) -> None:
    """A triple about an annotation that was already joined cannot be joined right: no index, the next query makes one."""
    built = kg.build(jobs=1)
    triples = list(built.triples())
    graph = _graph(tmp_path, triples)
    shuffled = triples[:]
    random.Random(7).shuffle(shuffled)
    assert _index(graph, shuffled, True, "joined") is None
    assert _index(graph, shuffled, False, "sql") is not None  # the SQL reads any order


@pytest.mark.parametrize("extra", ["two bodies", "two scores", "two quotes", "no score", "no position"])
def test_annotations_of_other_shapes_are_joined_as_the_sql_joins_them(tmp_path: Path, extra: str) -> None:
    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    paper, ann, target, pos, quote = (N(f"https://x.org/{k}") for k in ("paper", "ann", "target", "pos", "quote"))
    number = N(XSD + "nonNegativeInteger")
    triples = [T(ann, N(OA + "hasBody"), N("https://x.org/c1"))]
    if extra == "two bodies":
        triples.append(T(ann, N(OA + "hasBody"), N("https://x.org/c2")))
    triples.append(T(ann, N(OA + "hasTarget"), target))
    if extra != "no score":
        triples.append(T(ann, N(KG + "score"), L("0.5", datatype=N(XSD + "decimal"))))
    if extra == "two scores":
        triples.append(T(ann, N(KG + "score"), L("0.7", datatype=N(XSD + "decimal"))))
    triples += [T(target, N(OA + "hasSource"), paper), T(target, N(OA + "hasSelector"), quote), T(quote, N(OA + "exact"), L("x"))]
    if extra != "no position":
        triples += [T(target, N(OA + "hasSelector"), pos), T(pos, N(OA + "start"), L("1", datatype=number)),
                    T(pos, N(OA + "end"), L("2", datatype=number))]
    if extra == "two quotes":
        triples += [T(target, N(OA + "hasSelector"), N("https://x.org/q2")), T(N("https://x.org/q2"), N(OA + "exact"), L("y"))]
    triples.append(T(N("https://x.org/ann2"), N(OA + "hasBody"), N("https://x.org/c1")))  # the next annotation closes it
    graph = _graph(tmp_path, triples)
    by_sql, joined = _index(graph, triples, False, "sql"), _index(graph, triples, True, "joined")
    assert by_sql is not None and joined is not None
    _same(by_sql, joined)
