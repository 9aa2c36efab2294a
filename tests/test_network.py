"""Graph views: the paper–concept graph and the concept co-occurrence graph."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

import kg
from kg.graph.facts import read_facts

EX = "https://example.org/concept/"
AREA = {"astronomy": ("quasar-lensing", "pulsar-timing", "nebula-mapping"), "biology": ("protein-folding", "gene-editing", "cell-imaging")}


def _subjects(path) -> list[tuple[str, str]]:
    """dcterms:subject links read straight from the file, independently of kg.views.network."""
    import pyoxigraph as ox

    store = ox.Store()
    store.bulk_load(path=str(path), format=ox.RdfFormat.TURTLE)
    rows = store.query("SELECT ?p ?c WHERE { ?p <http://purl.org/dc/terms/subject> ?c }")
    return [(r["p"].value, r["c"].value) for r in rows]


def test_concept_view_weights_match_the_construction(two_topics_ttl) -> None:
    g = kg.to_networkx(two_topics_ttl, view="concepts")
    assert set(g.nodes) == {EX + c for cs in AREA.values() for c in cs}
    for concepts in AREA.values():
        for a, b in combinations(concepts, 2):
            assert g.edges[EX + a, EX + b]["weight"] == 4  # a1–a4 (or b1–b4) are about all three
    assert g.edges[EX + "quasar-lensing", EX + "protein-folding"]["weight"] == 1  # only the bridge paper
    assert not g.has_edge(EX + "pulsar-timing", EX + "gene-editing")
    assert g.nodes[EX + "quasar-lensing"]["area"] == "astronomy"
    assert g.nodes[EX + "gene-editing"]["label"] == "gene editing"


def test_concept_view_association_measures(two_topics_ttl) -> None:
    import math

    g = kg.to_networkx(two_topics_ttl, view="concepts")
    n = g.graph["papers"]
    assert n == 10
    edge = g.edges[EX + "quasar-lensing", EX + "protein-folding"]
    # each is about 5 papers, 1 shared: Jaccard 1/9, PMI log2(1·10 / (5·5))
    assert edge["jaccard"] == pytest.approx(1 / 9, abs=1e-4)
    assert edge["pmi"] == pytest.approx(math.log2(10 / 25), abs=1e-4)
    inside = g.edges[EX + "pulsar-timing", EX + "nebula-mapping"]
    assert inside["pmi"] > 0 > edge["pmi"]  # inside an area above chance, across areas below


def test_cooccurrence_total_equals_pairs_per_paper(sample_ttl) -> None:
    g = kg.to_networkx(sample_ttl, view="concepts")
    per_paper = Counter(p for p, _ in _subjects(sample_ttl))
    assert sum(w for _, _, w in g.edges(data="weight")) == sum(k * (k - 1) // 2 for k in per_paper.values())


def test_papers_view_is_the_subject_graph(sample_ttl) -> None:
    g = kg.to_networkx(sample_ttl, view="papers")
    links = _subjects(sample_ttl)
    papers = [n for n, kind in g.nodes(data="kind") if kind == "paper"]
    concepts = [n for n, kind in g.nodes(data="kind") if kind == "concept"]
    assert len(papers) == 38  # the bundled sample: 38 abstracts, kept even when about no concept
    assert set(concepts) == {c for _, c in links}
    assert {tuple(sorted(e)) for e in g.edges} == {tuple(sorted(link)) for link in links}
    for _, _, data in g.edges(data=True):
        assert 0 < data["score"] <= 1 and data["mentions"] >= 1


def test_views_accept_a_built_graph_and_triples(sample_built, sample_ttl) -> None:
    from kg.graph.files import read_triples

    from_file = kg.to_networkx(sample_ttl, view="concepts")
    for source in (sample_built, read_triples(sample_ttl)):
        g = kg.to_networkx(source, view="concepts")
        assert sorted(g.edges(data=True)) == sorted(from_file.edges(data=True))


def test_unknown_view_names_the_choices(sample_ttl) -> None:
    with pytest.raises(kg.UsageError, match=r"unknown graph view 'people' \(available: papers, concepts\)"):
        kg.to_networkx(sample_ttl, view="people")


def test_roots_follow_broader_chains(sample_ttl) -> None:
    facts = read_facts(sample_ttl)
    llm = "https://w3id.org/kg/concept/large-language-model"
    for root in facts.roots(llm):
        assert not facts.broader.get(root)  # a root has no broader concept
    assert facts.area(llm) in facts.roots(llm)
