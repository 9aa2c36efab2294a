"""The concept map, the default page of a large graph: clusters, weighted links, the cap, the drill-down data, colours."""

from __future__ import annotations

from pathlib import Path

from kg.core.defaults import MAP_THRESHOLD
from kg.views.conceptmap import PAPERS_PER_CONCEPT
from kg.views.render import area_colour, build_view, render

from .conftest import synthetic_triples
from .test_render import page_data, sparql


def test_the_map_lists_each_concepts_papers_with_their_evidence(sample_ttl: Path) -> None:
    view = build_view(sample_ttl, view="map")
    m = view.extra["map"]
    counts = {c: int(n) for c, n in sparql(sample_ttl, "SELECT ?c (COUNT(?p) AS ?n) WHERE { ?p dcterms:subject ?c } GROUP BY ?c")}
    assert {n.id for n in view.nodes} == set(counts), "the sample is small: every concept is drawn"
    abstracts = dict(sparql(sample_ttl, "SELECT ?p ?a WHERE { ?p dcterms:abstract ?a }"))
    scores = {(p, c): float(s) for p, c, s in sparql(sample_ttl, """SELECT ?p ?c (MAX(?s) AS ?best) WHERE {
        ?p dcterms:subject ?c . ?a oa:hasBody ?c ; kg:score ?s ; oa:hasTarget/oa:hasSource ?p } GROUP BY ?p ?c""")}
    with_evidence = 0
    for concept, rows in m["listed"].items():
        assert len(rows) == min(counts[concept], PAPERS_PER_CONCEPT)
        assert sum(m["conceptYears"][concept].values()) == counts[concept]
        listed_scores = [r[1] for r in rows]
        assert listed_scores == sorted(listed_scores, reverse=True), "best papers first"
        for number, score, evidence in rows:
            paper = m["papers"][number][3]
            assert score == round(scores[(paper, concept)], 3)
            if evidence:
                with_evidence += 1
                assert (evidence[0] + evidence[1] + evidence[2]).strip("…") in abstracts[paper]
    assert with_evidence >= 50


def test_the_cap_keeps_concepts_with_their_links() -> None:
    triples = synthetic_triples(600)
    view = build_view(triples, view="map", max_nodes=12)
    assert len(view.nodes) == 12 and view.total > 12 and "--max-nodes 0" in view.note
    drawn = {n.id for n in view.nodes}
    ends = {e.source for e in view.edges} | {e.target for e in view.edges}
    assert ends == drawn, "every drawn concept keeps links, and links join drawn concepts only"
    shared = {}
    for t in triples:
        if t.predicate.value.endswith("/subject"):
            shared.setdefault(t.subject.value, set()).add(t.object.value)
    for e in view.edges:
        assert e.weight == sum(1 for cs in shared.values() if {e.source, e.target} <= cs)
    clusters = view.extra["map"]["clusters"]
    assert sum(c[3] for c in clusters) == 12 and {c[0] for c in clusters} == {n.area for n in view.nodes}


def test_large_graphs_open_on_the_map_and_small_ones_on_papers(sample_ttl: Path) -> None:
    assert "map" not in page_data(render(sample_ttl).html)
    big = synthetic_triples(MAP_THRESHOLD)
    assert "map" in page_data(render(big).html)
    assert "map" not in page_data(render(big, view="concepts").html)


def test_an_area_keeps_its_colour_in_every_view_of_every_graph(sample_ttl: Path, hostile_ttl: Path) -> None:
    seen: dict[str, str] = {}
    for graph in (sample_ttl, hostile_ttl):
        for view in ("papers", "concepts", "map"):
            for n in page_data(render(graph, view=view).html)["nodes"]:
                if n["kind"] == "concept":
                    assert seen.setdefault(n["area"], n["color"]) == n["color"] == area_colour(n["area"])
    assert area_colour("reinforcement learning") != area_colour("deep learning")
    assert area_colour("an area of my own scheme") == area_colour("an area of my own scheme")
