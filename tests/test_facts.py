"""kg.facts: the one reader of a graph gives the counts and the hierarchy the named queries define."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

import kg
from kg.facts import closure, pair_counts, read_facts
from kg.graphio import read_triples
from kg.vocabulary import SKOS


def test_pair_counts_are_the_co_occurrence_query(sample_ttl: Path) -> None:
    facts = read_facts(sample_ttl)
    rows = kg.query("co-occurrence", {"nested": "1"}, graph=sample_ttl)  # every pair, a concept with its ancestors too
    from_query = {(r["a"], r["b"]): r["papers"] for r in rows}
    assert len(from_query) > 50
    assert dict(facts.pairs()) == from_query


def test_the_closure_is_broader_star_of_the_engine(sample_ttl: Path) -> None:
    facts = read_facts(sample_ttl)
    store = ox.Store()
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object) for t in read_triples(sample_ttl))
    up = closure(facts.broader)
    checked = 0
    for concept in sorted(facts.concepts)[:60]:
        answer = store.query(f"SELECT ?x WHERE {{ <{concept}> <{SKOS}broader>* ?x }}")
        assert {s[0].value for s in answer} == up(concept), concept
        checked += 1
    assert checked == 60


def test_a_cycle_ends_and_pairs_follow_the_key() -> None:
    up = closure({"a": ["b"], "b": ["a", "c"]})
    assert up("a") == {"a", "b", "c"} and up("c") == {"c"}
    pairs = pair_counts([["y", "x", "x"], ["x", "y", "z"]], key=lambda s: s)
    assert pairs == {("x", "y"): 2, ("x", "z"): 1, ("y", "z"): 1}


def test_one_reading_serves_the_update_and_the_analytics(sample_ttl: Path) -> None:
    from kg.index import scan

    facts = read_facts(sample_ttl)
    index = scan(sample_ttl)
    assert set(index.digests) == set(facts.abstracts) and len(index.ids) == len(facts.papers) == 38
    assert facts.subjects and all(p in facts.papers for p, _ in facts.subjects)


def test_umbrella_concepts_are_read_from_the_graph(sample_ttl: Path) -> None:
    """kg:Umbrella is typed in the scheme copied into every graph; the expert rule judges those concepts apart."""
    umbrellas = read_facts(sample_ttl).umbrellas
    assert {iri.rsplit("/", 1)[-1] for iri in umbrellas} == {"machine-learning", "deep-learning", "neural-network", "artificial-intelligence"}
