"""The annotations folded as kg writes them (kg.graph.annotations.Groups) against all of them folded at once.

The one reader (kg.graph.facts) reads a graph file in build order, folding a thousand annotations at a time, and
reads it again with every annotation held when a triple is out of that order. Both must give the same Facts, field
for field and in the same order.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings

import kg
from kg.graph import annotations
from kg.graph.facts import Facts, of_triples, read_facts
from kg.graph.vocabulary import OA
from tests.test_qindex import graphs


def _same(a: Facts, b: Facts) -> None:
    for f in dataclasses.fields(Facts):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert x == y, f.name
        if isinstance(x, dict):
            assert list(x) == list(y), f"{f.name}: another order"


@pytest.fixture(params=[1, 3, 1000], ids=["fold each", "fold by 3", "fold by 1000"])
def size(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(annotations.Groups, "size", request.param)
    return request.param


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(triples=graphs())
def test_generated_graphs_fold_the_same_in_build_order(size: int, triples: list[ox.Triple]) -> None:
    for evidence in (False, True):
        _same(of_triples(triples, evidence=evidence, build_order=True), of_triples(triples, evidence=evidence))


def test_a_built_graph_is_read_in_build_order_with_the_same_facts(tmp_path: Path, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = kg.write(kg.build(jobs=1), tmp_path / "g.ttl")
    folds: list[int] = []
    fold = annotations.Links.fold
    monkeypatch.setattr(annotations.Links, "fold", lambda self, ann, sel: (folds.append(len(ann[OA + "hasBody"])), fold(self, ann, sel))[1])
    for evidence in (False, True):
        folds.clear()
        got = read_facts(graph, evidence=evidence)
        bodies = sum(t.predicate.value == OA + "hasBody" for t in ox.parse(path=str(graph)))
        assert sum(folds) == bodies > size * (len(folds) - 1) and max(folds) <= size  # folded in pieces of `size`
        _same(got, of_triples(ox.parse(path=str(graph)), evidence=evidence))
        assert got.first_mentions and (got.evidence or not evidence)


@pytest.mark.parametrize("how", ["shuffled", "selectors first", "an annotation's last triple at the end",
                                 "an annotation's body given again at the end"])
def test_a_graph_out_of_build_order_is_read_again_with_the_same_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    monkeypatch.setattr(annotations.Groups, "size", 1)
    triples = list(kg.build(jobs=1).triples())
    if how == "shuffled":
        random.Random(3).shuffle(triples)
    elif how == "selectors first":
        triples.sort(key=lambda t: t.predicate.value != OA + "hasSelector")
    elif how == "an annotation's last triple at the end":
        last = next(i for i, t in enumerate(triples) if t.predicate.value == OA + "exact")
        triples.append(triples.pop(last))
    else:  # the last value read wins: the first annotation is about another concept
        bodies = [t for t in triples if t.predicate.value == OA + "hasBody"]
        triples.append(ox.Triple(bodies[0].subject, bodies[0].predicate, bodies[-1].object))
    with pytest.raises(annotations.OutOfOrder):
        of_triples(triples, build_order=True)
    graph = tmp_path / "g.nt"
    graph.write_bytes(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"")
    _same(read_facts(graph, evidence=True), of_triples(triples, evidence=True))
