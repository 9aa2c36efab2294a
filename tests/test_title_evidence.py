"""Every subject link carries evidence: a concept only the title names is evidenced by its span of dcterms:title."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kg
import kg.graph.files

from .test_scheme import _validate_papers

FIXTURES = Path(__file__).parent / "fixtures"
NO_EVIDENCE = """PREFIX dcterms: <http://purl.org/dc/terms/> PREFIX oa: <http://www.w3.org/ns/oa#>
SELECT ?p ?c WHERE { ?p dcterms:subject ?c .
  FILTER NOT EXISTS { ?a oa:hasBody ?c ; oa:hasTarget/oa:hasSource ?p } }"""


@pytest.fixture(scope="module")
def titled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Papers whose titles name concepts their abstracts never mention (the 'posterior sampling' case)."""
    folder = tmp_path_factory.mktemp("titled")
    records = [
        {"id": "t1", "title": "Posterior Sampling for Inverse Problems with Diffusion Models",
         "abstract": "We recover images from noisy linear measurements with a learned generative prior and a new sampler."},
        {"id": "t2", "title": "Federated learning under label shift",
         "abstract": "Clients hold data whose label distributions differ; we correct the aggregation weights."},
    ]
    source = folder / "titled.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = kg.write(kg.build([source, FIXTURES / "tiny.jsonl"]), folder / "titled.ttl")
    return Path(out)


def test_every_subject_link_has_evidence(titled: Path) -> None:
    import pyoxigraph as ox

    store = ox.Store()
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object) for t in kg.graph.files.read_triples(titled))
    assert list(store.query(NO_EVIDENCE)) == []
    subjects = {(s["p"].value, s["c"].value) for s in store.query(
        "PREFIX dcterms: <http://purl.org/dc/terms/> SELECT ?p ?c WHERE { ?p dcterms:subject ?c }")}
    assert ("https://w3id.org/kg/paper/t2", "https://w3id.org/kg/concept/federated-learning") in subjects, "a title-only subject"


def test_title_spans_quote_the_title_and_the_evidence_query_returns_them(titled: Path) -> None:
    rows = list(kg.query("evidence", {"paper": "t2", "concept": "federated learning"}, graph=titled))
    # A narrower concept that the abstract only describes brings its sentence too (rows of concepts below it)
    assert [(r["field"], r["start"], r["end"], r["exact"]) for r in rows if r["label"] == "federated learning"] == [("title", 0, 18, "Federated learning")]
    triples = kg.graph.files.read_triples(titled)
    titles = {t.subject.value: t.object.value for t in triples if t.predicate.value == "http://purl.org/dc/terms/title"}
    for paper in ("t1", "t2", "p1", "p2"):
        for r in kg.query("concepts-of-paper", {"paper": paper}, graph=titled):
            for e in kg.query("evidence", {"paper": paper, "concept": r["concept"]}, graph=titled):
                if e["field"] == "title":
                    assert titles[e["paper"]][e["start"] : e["end"]] == e["exact"]


def test_a_graph_with_title_spans_passes_the_shapes_and_a_wrong_one_fails(titled: Path) -> None:
    import rdflib

    graph = rdflib.Graph().parse(titled)
    conforms, report = _validate_papers(graph)
    assert conforms, report
    on = rdflib.URIRef("https://w3id.org/kg/ontology#onProperty")
    target = next(graph.subjects(on, rdflib.URIRef("http://purl.org/dc/terms/title")))
    quote = next(q for q in graph.objects(target, rdflib.URIRef("http://www.w3.org/ns/oa#hasSelector"))
                 if (q, rdflib.URIRef("http://www.w3.org/ns/oa#exact"), None) in graph)
    graph.set((quote, rdflib.URIRef("http://www.w3.org/ns/oa#exact"), rdflib.Literal("not in the title")))
    conforms, report = _validate_papers(graph)
    assert not conforms and "dcterms:title" in report


def test_the_page_shows_title_evidence(titled: Path) -> None:
    from kg.views.render import build_view

    view = build_view(titled, view="map")
    rows = view.extra["map"]["listed"]["https://w3id.org/kg/concept/federated-learning"]
    papers = view.extra["map"]["papers"]
    (row,) = [r for r in rows if papers[r[0]][3].endswith("/t2")]
    assert row[2] == ["", "Federated learning", " under label shift"]
