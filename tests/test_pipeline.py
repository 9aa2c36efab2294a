"""End to end: the bundled sample and every input format through ingest → extract → rdf."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import BNode, Graph, URIRef
from rdflib.namespace import DCTERMS, RDF, SKOS

import kg

from .conftest import FIXTURES

FABIO_PAPER = URIRef("http://purl.org/spar/fabio/ResearchPaper")
OA = "http://www.w3.org/ns/oa#"


@pytest.fixture(scope="module")
def sample_graph(sample_ttl: Path) -> Graph:
    return Graph().parse(sample_ttl, format="turtle")


def test_sample_has_38_papers_each_identified_with_abstract_and_subject(sample_graph: Graph) -> None:
    papers = set(sample_graph.subjects(RDF.type, FABIO_PAPER))
    assert len(papers) == 38
    for paper in papers:
        assert sample_graph.value(paper, DCTERMS.identifier) is not None
        assert len(str(sample_graph.value(paper, DCTERMS.abstract))) > 200
        subjects = list(sample_graph.objects(paper, DCTERMS.subject))
        assert subjects, f"{paper} has no dcterms:subject"
        for concept in subjects:
            assert (concept, RDF.type, SKOS.Concept) in sample_graph
            assert sample_graph.value(concept, SKOS.prefLabel) is not None


def test_sample_annotations_quote_the_abstract_exactly(sample_graph: Graph) -> None:
    rows = sample_graph.query(
        """SELECT ?abstract ?start ?end ?exact WHERE {
             ?a a oa:Annotation ; oa:hasTarget ?t . ?t oa:hasSource ?p ; oa:hasSelector ?pos, ?q .
             ?p dcterms:abstract ?abstract . ?pos oa:start ?start ; oa:end ?end . ?q oa:exact ?exact
             FILTER NOT EXISTS { ?t <https://w3id.org/kg/ontology#onProperty> ?title } }""",
        initNs={"oa": OA, "dcterms": DCTERMS},
    )
    rows = list(rows)
    assert len(rows) >= 38
    for abstract, start, end, exact in rows:
        assert str(abstract)[int(start) : int(end)] == str(exact)


def test_sample_has_no_blank_nodes_and_records_provenance(sample_graph: Graph) -> None:
    assert not any(isinstance(term, BNode) for triple in sample_graph for term in triple)
    activity = sample_graph.value(predicate=RDF.type, object=URIRef("http://www.w3.org/ns/prov#Activity"), any=False)
    assert activity is not None
    assert sample_graph.value(activity, URIRef("https://w3id.org/kg/ontology#schemeVersion")) is not None
    agent = sample_graph.value(activity, URIRef("http://www.w3.org/ns/prov#wasAssociatedWith"))
    assert str(sample_graph.value(agent, URIRef("https://w3id.org/kg/ontology#softwareVersion"))) == kg.__version__


def test_sample_venue_and_year_from_the_header(sample_built) -> None:
    assert {(p.venue, p.year) for p in sample_built.papers} == {("ICML", 2024)}
    assert len({p.id for p in sample_built.papers}) == 38


@pytest.mark.parametrize("name", ["tiny.jsonl", "tiny.json", "tiny.csv"])
def test_every_record_format_gives_the_same_papers(name: str) -> None:
    got = kg.build([FIXTURES / name], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)
    assert [p.id for p in got.papers] == ["p1", "p2", "p3"]
    p1, p2, p3 = got.papers
    assert p1.authors == ("Ada Lovelace", "Alan Turing") and p2.authors == ("Grace Hopper", "Alan Turing")
    assert (p1.venue, p1.year, p3.title) == ("ICML", 2024, None)
    assert "study sample complexity of policy" in p3.abstract
    reference = kg.build([FIXTURES / "tiny.jsonl"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)
    assert got.extractions == reference.extractions


def test_seed_text_format_joins_lines_and_hashes_ids() -> None:
    got = kg.build([FIXTURES / "tiny-seed.txt"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)
    assert len(got.papers) == 2
    first, second = got.papers
    assert first.abstract.startswith("Offline reinforcement learning (RL)") and first.title is None
    assert second.abstract == (
        "Diffusion models generate trajectories for planning. "
        "Unlike large language models, diffusion models denoise the whole plan at once."
    )
    assert len(first.id) == 16 and first.id != second.id
    assert (first.venue, first.year) == ("ICML", 2024)


def test_several_inputs_go_into_one_graph() -> None:
    got = kg.build(
        [FIXTURES / "tiny.jsonl", FIXTURES / "tiny-seed.txt"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False, keep_duplicates=True
    )
    assert len(got.papers) == 5
    assert got.inputs == ("tiny.jsonl", "tiny-seed.txt")
    # The seed file's two abstracts are those of p1 (ICML 2024 both) and p2 (NeurIPS 2023, the seed says ICML 2024): by
    # default the first is kept once with both ids; the second, at another venue, is another publication.
    once = kg.build([FIXTURES / "tiny.jsonl", FIXTURES / "tiny-seed.txt"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)
    assert [(p.id, len(p.aliases)) for p in once.papers][:3] == [("p1", 1), ("p2", 0), ("p3", 0)] and len(once.papers) == 4
    assert sum("the same paper as" in problem for problem in once.problems) == 1


def test_ids_keep_only_the_papers_asked_for() -> None:
    """`kg eval --expert --papers` builds the few papers an expert file lists out of a larger file."""
    got = kg.build([FIXTURES / "tiny.jsonl"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False, ids={"p3", "p1", "elsewhere"})
    assert [p.id for p in got.papers] == ["p1", "p3"]
    with pytest.raises(kg.InputError, match=r"none of the 3 papers of tiny.jsonl has one of the 1 ids asked for"):
        kg.build([FIXTURES / "tiny.jsonl"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False, ids={"elsewhere"})
