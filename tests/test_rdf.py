"""The RDF stage: golden Turtle for a tiny fixture, round trips through every format, the data model."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic, to_canonical_graph
from rdflib.namespace import DCTERMS, RDF, SKOS

import kg
from kg.graph import files
from kg.graph.vocabulary import slug

from .conftest import FIXTURES

OA = Namespace("http://www.w3.org/ns/oa#")
KG = Namespace("https://w3id.org/kg/ontology#")
GOLDEN = FIXTURES / "tiny.golden.ttl"


@pytest.fixture(scope="module")
def tiny():
    return kg.build([FIXTURES / "tiny.jsonl"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)


def _turtle(built) -> bytes:
    buffer = io.BytesIO()
    files.write(built.triples(), buffer, "ttl", ns=built.ns)
    return buffer.getvalue()


def test_tiny_fixture_matches_golden_turtle(tiny) -> None:
    """Compared after canonical serialization; KG_UPDATE_GOLDEN=1 rewrites the golden file after a deliberate change."""
    data = _turtle(tiny)
    if os.environ.get("KG_UPDATE_GOLDEN"):
        GOLDEN.write_bytes(data)
    got = to_canonical_graph(Graph().parse(data=data, format="turtle"))
    want = to_canonical_graph(Graph().parse(GOLDEN, format="turtle"))
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    assert not missing and not extra, (
        f"missing {missing[:5]}, extra {extra[:5]} (if the change is deliberate, rerun with KG_UPDATE_GOLDEN=1 and review the diff)"
    )


@pytest.mark.parametrize("fmt", sorted(files.FORMATS))
def test_every_format_round_trips_isomorphic(tiny, fmt: str) -> None:
    buffer = io.BytesIO()
    files.write(tiny.triples(), buffer, fmt, ns=tiny.ns)
    parser = {"ttl": "turtle", "nt": "nt", "nq": "nquads", "trig": "trig", "jsonld": "json-ld", "xml": "xml"}[fmt]
    if fmt in ("nq", "trig"):
        from rdflib import Dataset

        ds = Dataset()
        ds.parse(data=buffer.getvalue(), format=parser)
        parsed = Graph()
        for s, p, o, _ in ds.quads():
            parsed.add((s, p, o))
    else:
        parsed = Graph().parse(data=buffer.getvalue(), format=parser)
    reference = Graph().parse(data=_turtle(tiny), format="turtle")
    assert len(parsed) == len(reference) > 100
    assert isomorphic(parsed, reference)


def test_data_model_of_a_paper(tiny) -> None:
    g = Graph().parse(data=_turtle(tiny), format="turtle")
    p1 = URIRef("https://w3id.org/kg/paper/p1")
    assert (p1, RDF.type, URIRef("http://purl.org/spar/fabio/ResearchPaper")) in g
    assert g.value(p1, DCTERMS.identifier) == Literal("p1")
    assert str(g.value(p1, DCTERMS.title)) == "Offline Reinforcement Learning with Large Language Models"
    assert {str(g.value(a, URIRef("http://xmlns.com/foaf/0.1/name"))) for a in g.objects(p1, DCTERMS.creator)} == {
        "Ada Lovelace",
        "Alan Turing",
    }
    assert str(g.value(g.value(p1, DCTERMS.isPartOf), URIRef("http://www.w3.org/2000/01/rdf-schema#label"))) == "ICML"
    assert str(g.value(p1, URIRef("http://purl.org/spar/fabio/hasPublicationYear"))) == "2024"
    subjects = {str(g.value(c, SKOS.prefLabel)) for c in g.objects(p1, DCTERMS.subject)}
    assert "offline reinforcement learning" in subjects
    # The scheme travels with the graph: one file stands alone.
    assert (URIRef("https://example.org/concept/offline-rl"), SKOS.broader, URIRef("https://example.org/concept/rl")) in g


def test_untitled_paper_gets_a_label_but_no_title(tiny) -> None:
    g = Graph().parse(data=_turtle(tiny), format="turtle")
    p3 = URIRef("https://w3id.org/kg/paper/p3")
    assert g.value(p3, DCTERMS.title) is None
    label = str(g.value(p3, URIRef("http://www.w3.org/2000/01/rdf-schema#label")))
    assert label and len(label) <= 80 and label.split()[0] == "We"


def test_annotations_point_into_the_stored_abstract(tiny) -> None:
    g = Graph().parse(data=_turtle(tiny), format="turtle")
    checked = 0
    for ann in g.subjects(RDF.type, OA.Annotation):
        target = g.value(ann, OA.hasTarget)
        on = g.value(target, KG.onProperty)  # a span of the title names its property; others index the abstract
        assert on in (None, DCTERMS.title)
        abstract = str(g.value(g.value(target, OA.hasSource), on or DCTERMS.abstract))
        selectors = list(g.objects(target, OA.hasSelector))
        pos = next(s for s in selectors if (s, RDF.type, OA.TextPositionSelector) in g)
        quote = next(s for s in selectors if (s, RDF.type, OA.TextQuoteSelector) in g)
        start, end = int(g.value(pos, OA.start)), int(g.value(pos, OA.end))
        assert abstract[start:end] == str(g.value(quote, OA.exact))
        assert g.value(ann, OA.hasBody) is not None and g.value(ann, KG.score) is not None
        checked += 1
    assert checked >= 5


def test_no_blank_nodes_and_whitespace_folded(tiny) -> None:
    g = Graph().parse(data=_turtle(tiny), format="turtle")
    assert not any(isinstance(term, BNode) for triple in g for term in triple)
    p3 = URIRef("https://w3id.org/kg/paper/p3")
    assert "study sample complexity of policy" in str(g.value(p3, DCTERMS.abstract))


def test_base_iri_is_configurable_and_validated() -> None:
    built = kg.build(
        [FIXTURES / "tiny.jsonl"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False, base="http://lab.example/kg/"
    )
    g = Graph().parse(data=_turtle(built), format="turtle")
    assert (URIRef("http://lab.example/kg/paper/p1"), DCTERMS.identifier, Literal("p1")) in g
    with pytest.raises(kg.UsageError, match="base IRI"):
        kg.build([FIXTURES / "tiny.jsonl"], base="not an iri")


def test_same_input_same_bytes_and_build_time_from_source_date_epoch(tiny, monkeypatch) -> None:
    first = _turtle(tiny)
    assert _turtle(tiny) == first
    assert b'"2023-11-14T22:13:20+00:00"^^xsd:dateTime' in first
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert b'"1970-01-01T00:00:00+00:00"^^xsd:dateTime' in _turtle(tiny)


def test_slug_makes_valid_iri_segments() -> None:
    assert slug("Alan Turing") == "alan-turing"
    assert slug("a/b#c?d") == "a-b-c-d"
    assert slug("Müller <x>") == "m%C3%BCller-%3Cx%3E"


def test_load_gives_an_rdflib_graph_over_oxigraph(tiny, tmp_path: Path) -> None:
    path = kg.write(tiny, tmp_path / "tiny.ttl")
    graph = kg.load(path)
    reference = Graph().parse(path, format="turtle")
    assert len(graph) == len(reference) > 100
    assert graph.store.__class__.__name__ == "OxigraphStore"
    rows = graph.query("SELECT ?p WHERE { ?p dcterms:subject ?c } ORDER BY ?p")  # kg.load binds the prefixes
    assert {str(r[0]) for r in rows} == {str(p) for p in reference.subjects(DCTERMS.subject)}
