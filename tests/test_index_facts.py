"""The facts read from a graph's query index are the parse's (kg.graph.index_facts, decisions 0059 and 0075).

`page_facts` is a second reader of a graph: every field it fills is held here to `read_facts` of the file, on
graphs kg built (the sample, a corpus slice, BibTeX/OpenAlex/JSONL inputs with authors, venues, years and DOIs, an
analysed graph) and on a hand-written one whose index comes from a parse (languages, blank nodes, top concepts).
The page drawn from the index is the page drawn from a parse, byte for byte.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.graph.facts import Facts, read_facts
from kg.graph.handle import GraphFile
from kg.graph.index_facts import indexed, page_facts
from kg.views.render import render

FIXTURES = Path(__file__).parent / "fixtures"
UNREAD = {"abstracts", "evidence"}  # what page_facts leaves to the file (kg report, the CSV tables)

HAND_WRITTEN = """\
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix fabio: <http://purl.org/spar/fabio/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ex: <http://example.org/> .

ex:scheme a skos:ConceptScheme ; skos:prefLabel "Scheme"@en ; skos:hasTopConcept ex:ml .
ex:ml a skos:Concept ; skos:prefLabel "machine learning"@en , "apprentissage automatique"@fr ; skos:topConceptOf ex:scheme .
ex:rl a skos:Concept ; skos:prefLabel "reinforcement learning" ; skos:altLabel "RL"@en , "bestärkendes Lernen"@de ;
    skos:broader ex:ml ; skos:definition "Learning from rewards."@en , "Lernen aus Belohnungen."@de .
ex:p1 a fabio:ResearchPaper , ex:Preprint ; dcterms:title "Offline RL"@en ; dcterms:title "RL hors ligne"@fr ;
    rdfs:label "Offline RL" ; dcterms:abstract "We study offline RL." ; dcterms:subject ex:rl ;
    fabio:hasPublicationYear "2024"^^xsd:gYear ; dcterms:isPartOf _:venue ; dcterms:creator [ foaf:name "Ada" ] ;
    dcterms:identifier "p1" .
_:venue a fabio:ConferenceProceedings ; rdfs:label "ICML 2024" .
ex:p2 a fabio:ResearchPaper ; dcterms:title "Untitled year" ; fabio:hasPublicationYear "soon" ; dcterms:subject ex:ml .
"""


def fields(facts: Facts) -> dict:
    return {f.name: getattr(facts, f.name) for f in dataclasses.fields(facts) if f.name not in UNREAD}


def relabelled(facts: Facts) -> Facts:
    """The facts with blank nodes named in the order the values meet them: each parse names them anew."""
    names: dict[str, str] = {}

    def name(x: Any) -> Any:
        if isinstance(x, str):
            return names.setdefault(x, f"_:b{len(names)}") if x.startswith("_:") else x
        if isinstance(x, dict):
            return {name(k): name(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(name(v) for v in x)
        if isinstance(x, (set, frozenset)):
            return type(x)(name(v) for v in sorted(x))
        return x

    for node, shown in facts.values.items():  # in graph order: the first names
        name([*shown.values(), node])
    return Facts(**{f.name: name(getattr(facts, f.name)) for f in dataclasses.fields(facts)})


def assert_same(path: Path) -> Facts:
    parsed, read = relabelled(read_facts(path)), indexed(path, page_facts)
    assert read is not None, f"{path} has no fresh query index"
    read = relabelled(read)
    for name, value in fields(parsed).items():
        assert fields(read)[name] == value, name
    # and in the same order, where order is kept: graph order of papers and values (the first of several wins)
    assert list(read.papers) == list(parsed.papers)
    assert {n: {p: list(v) for p, v in vs.items()} for n, vs in read.values.items()} == \
        {n: {p: list(v) for p, v in vs.items()} for n, vs in parsed.values.items()}
    return parsed


@pytest.fixture(scope="module")
def inputs_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Papers with authors, venues, years and DOIs from three formats, built and written with their index."""
    inputs = [FIXTURES / "inputs" / "zotero.bib", FIXTURES / "inputs" / "openalex.json", FIXTURES / "tiny.jsonl"]
    return kg.write(kg.build(inputs), tmp_path_factory.mktemp("inputs") / "inputs.ttl")


@pytest.fixture(scope="module")
def updated_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny.jsonl built, then updated in place with one paper new and one whose abstract changed."""
    import json

    folder = tmp_path_factory.mktemp("updated")
    graph = kg.write(kg.build([FIXTURES / "tiny.jsonl"]), folder / "tiny.ttl")
    first = json.loads((FIXTURES / "tiny.jsonl").read_text(encoding="utf-8").splitlines()[0])
    changed = {**first, "abstract": first["abstract"] + " We also study federated learning."}
    new = {"id": "new-1", "title": "Diffusion models for planning", "abstract": "We use diffusion models to plan.", "year": 2025}
    source = folder / "more.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in (changed, new)), encoding="utf-8")
    result = kg.update(graph, [source])
    assert (result.added, result.replaced) == (1, 1) and GraphFile(graph).fresh_index() is not None
    return graph


@pytest.mark.parametrize("graph", ["sample_ttl", "inputs_ttl", "sample_analyzed_ttl", "hostile_ttl", "updated_ttl", "corpus_slice_ttl"])
def test_the_index_holds_every_fact_a_parse_reads_of_a_built_graph(graph: str, request: pytest.FixtureRequest) -> None:
    parsed = assert_same(request.getfixturevalue(graph))
    assert parsed.papers and parsed.scores and parsed.first_mentions and parsed.types and parsed.values
    if graph == "inputs_ttl":
        assert parsed.authors and parsed.venues and parsed.dois and parsed.years


def test_an_index_made_from_a_parse_holds_languages_blank_nodes_and_top_concepts(tmp_path: Path) -> None:
    path = tmp_path / "hand.ttl"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    assert GraphFile(path).index() is not None  # made from a parse, as a named query would make it
    parsed = assert_same(path)
    rl, p1 = "http://example.org/rl", "http://example.org/p1"
    assert parsed.tops == {"http://example.org/ml"}
    assert parsed.labels[rl] == {"reinforcement learning", "RL", "bestärkendes Lernen"}
    assert parsed.values[rl]["http://www.w3.org/2004/02/skos/core#definition"] == ["Learning from rewards."]
    assert parsed.values[p1]["http://purl.org/dc/terms/title"] == ["Offline RL"]
    assert parsed.types[p1] == {"http://purl.org/spar/fabio/ResearchPaper", "http://example.org/Preprint"}
    assert parsed.years == {p1: 2024} and len(parsed.venues) == 1


def test_a_stale_index_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "hand.ttl"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    GraphFile(path).index()
    path.write_text(HAND_WRITTEN.replace("Offline RL", "Online RL"), encoding="utf-8")
    assert indexed(path, page_facts) is None


def test_the_page_from_the_index_is_the_page_from_a_parse(sample_ttl: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bare" / sample_ttl.name
    bare.parent.mkdir()
    shutil.copy(sample_ttl, bare)  # no index beside it: the page parses the file
    assert GraphFile(bare).fresh_index() is None
    from_parse = render(bare, tmp_path / "parsed.html").html

    import kg.graph.facts

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the graph was parsed although its query index is fresh")

    monkeypatch.setattr(kg.graph.facts, "of_triples", no_parse)
    from_index = render(sample_ttl, tmp_path / "indexed.html").html
    assert from_index == from_parse and "reinforcement learning" in from_index


@pytest.mark.parametrize("what", ["page", "report", "gexf", "graphml"])
def test_pages_reports_and_exports_from_the_index_are_those_from_a_parse(what: str, sample_analyzed_ttl: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command that reads what a graph shows gives the same bytes from the index as from a parse, and does not
    parse the file when its index is fresh."""
    import kg.graph.facts
    from kg.views.export import export
    from kg.views.report import report_html

    graph = tmp_path / sample_analyzed_ttl.name
    shutil.copy(sample_analyzed_ttl, graph)

    def made() -> bytes:
        if what == "page":
            return render(graph, tmp_path / "page.html").html.encode()
        if what == "report":
            return report_html(graph, tmp_path).encode()
        return export(graph, tmp_path / f"out.{what}", view="concepts").read_bytes()

    assert GraphFile(graph).fresh_index() is None
    from_parse = made()
    assert GraphFile(graph).index() is not None

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the graph was parsed although its query index is fresh")

    monkeypatch.setattr(kg.graph.facts, "of_triples", no_parse)
    assert made() == from_parse and len(from_parse) > 1000
