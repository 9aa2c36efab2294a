"""kg.graph.facts: the one reader of a graph gives the counts and the hierarchy the named queries define."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

import kg
from kg.graph.facts import closure, pair_counts, read_facts
from kg.graph.files import read_triples
from kg.graph.vocabulary import SKOS


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
    from kg.graph.stamp import scan

    facts = read_facts(sample_ttl)
    index = scan(sample_ttl)
    assert set(index.digests) == set(facts.abstracts) and len(index.ids) == len(facts.papers) == 38
    assert facts.subjects and all(p in facts.papers for p, _ in facts.subjects)


def test_umbrella_concepts_are_read_from_the_graph(sample_ttl: Path) -> None:
    """kg:Umbrella is typed in the scheme copied into every graph; the expert rule judges those concepts apart."""
    umbrellas = read_facts(sample_ttl).umbrellas
    assert {iri.rsplit("/", 1)[-1] for iri in umbrellas} == {"machine-learning", "deep-learning", "neural-network", "artificial-intelligence"}


def _scheme(turtle: str) -> list:
    prefixes = "@prefix skos: <http://www.w3.org/2004/02/skos/core#> . @prefix : <https://example.org/> .\n"
    return list(ox.parse(prefixes + turtle, format=ox.RdfFormat.TURTLE))


def test_the_area_of_a_concept_is_its_nearest_declared_top_else_its_root() -> None:
    tops = read_facts(_scheme("""
        :ml a skos:Concept ; skos:prefLabel "machine learning" ; skos:topConceptOf :s .
        :rl a skos:Concept ; skos:prefLabel "reinforcement learning" ; skos:broader :ml ; skos:topConceptOf :s .
        :dl a skos:Concept ; skos:prefLabel "deep learning" ; skos:broader :ml ; skos:topConceptOf :s .
        :drl a skos:Concept ; skos:prefLabel "deep RL" ; skos:broader :rl, :dl .
        :dt a skos:Concept ; skos:prefLabel "decision transformer" ; skos:broader :drl .
        :x a skos:Concept ; skos:prefLabel "below ml" ; skos:broader :ml ."""))
    ex = "https://example.org/"
    # The nearest level holding a top concept, the first of it by label; not the root above both.
    assert tops.area(ex + "dt") == ex + "dl" and tops.area(ex + "rl") == ex + "rl" and tops.area(ex + "x") == ex + "ml"
    roots = read_facts(_scheme("""
        :a a skos:Concept ; skos:prefLabel "b area" . :b a skos:Concept ; skos:prefLabel "a area" .
        :c a skos:Concept ; skos:prefLabel "c" ; skos:broader :a, :b ."""))
    assert roots.area(ex + "c") == ex + "b" == roots.areas[ex + "c"]
    single = read_facts(_scheme("""
        :root a skos:Concept ; skos:prefLabel "everything" .
        :k a skos:Concept ; skos:prefLabel "kid" ; skos:broader :root .
        :g a skos:Concept ; skos:prefLabel "grandkid" ; skos:broader :k ."""))
    assert single.area(ex + "g") == ex + "k" and single.area(ex + "root") == ex + "root"


def test_the_facts_of_annotations_hold_no_copy_of_every_node_iri(tmp_path: Path) -> None:
    """Issue #38: reading a graph's facts kept every annotation, target and selector IRI and a fresh copy of every
    repeated value (concept, paper, score, offset) as strings: 1.8 KB an annotation, most of `kg render`'s 1.7 GB at
    21k papers. The nodes are now keyed by hashes of their IRIs and the repeated values held once: under 1.3 KB,
    with the same facts."""
    import tracemalloc

    oa, kg_ = "http://www.w3.org/ns/oa#", "https://w3id.org/kg/ontology#"
    xsd = "http://www.w3.org/2001/XMLSchema#"
    graph, n = tmp_path / "g.nt", 20_000
    with graph.open("w", encoding="utf-8") as stream:
        for i in range(n):
            a = f"https://w3id.org/kg/annotation/paper-{i // 10}-{i % 10}"
            stream.write(f"<{a}> <{oa}hasBody> <https://w3id.org/kg/concept/c{i % 50}> .\n<{a}> <{oa}hasTarget> <{a}-target> .\n"
                         f'<{a}> <{kg_}score> "0.5{i % 7}"^^<{xsd}decimal> .\n'
                         f"<{a}-target> <{oa}hasSource> <https://w3id.org/kg/paper/p{i // 10}> .\n"
                         f"<{a}-target> <{oa}hasSelector> <{a}-position> .\n<{a}-target> <{oa}hasSelector> <{a}-quote> .\n"
                         f'<{a}-position> <{oa}start> "{i % 500}"^^<{xsd}nonNegativeInteger> .\n<{a}-quote> <{oa}exact> "word {i}" .\n')
    tracemalloc.start()
    try:
        facts = read_facts(graph)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n < 1300, f"{peak / n:.0f} bytes an annotation"
    key = ("https://w3id.org/kg/paper/p3", "https://w3id.org/kg/concept/c31")  # annotation 31: paper 3, concept 31
    assert len(facts.mentions) == n and facts.mentions[key] == 1
    assert facts.scores[key] == 0.53 and facts.first_mentions[key] == (31, "word 31", "")
