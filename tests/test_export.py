"""`kg export` to JSON-LD (streamed) and to CSV tables, each read back and held to the graph."""

from __future__ import annotations

import csv
import importlib
import io
import json
from pathlib import Path
from typing import Any, Iterator

import pyoxigraph as ox
import pytest
from click.testing import CliRunner
from rdflib import Graph
from rdflib.compare import isomorphic

import kg
from kg.cli import cli
from kg.graph import files

export_ = importlib.import_module("kg.views.export")  # the module (kg.export is also the function)

PREFIXES = """PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX fabio: <http://purl.org/spar/fabio/>
PREFIX kg: <https://w3id.org/kg/ontology#>
PREFIX oa: <http://www.w3.org/ns/oa#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
"""


def store_of(graph: Path) -> ox.Store:
    store = ox.Store()
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object) for t in files.read_triples(graph))
    return store


def select(store: ox.Store, text: str) -> list[dict[str, str]]:
    found = store.query(PREFIXES + text)
    names = [v.value for v in found.variables]
    return [{n: row[n].value for n in names if row[n] is not None} for row in found]


# JSON-LD


def test_jsonld_reads_back_as_the_same_graph_with_rdflib(sample_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "sample.jsonld"
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-o", str(out)])
    assert result.exit_code == 0, result.output
    turtle = Graph().parse(sample_ttl, format="turtle")
    assert result.output == f"wrote {out} ({len(turtle):,} triples)\n"
    assert isomorphic(Graph().parse(out, format="json-ld"), turtle)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["@context"]["kgc"] == "https://w3id.org/kg/concept/"
    papers = [n for n in doc["@graph"] if "fabio:ResearchPaper" in n.get("@type", [])]
    assert len(papers) == 38 and all(n["@id"].startswith("paper:") for n in papers)
    assert all(isinstance(t, str) for n in papers for t in n["dcterms:abstract"])


def test_jsonld_is_written_while_the_graph_is_still_being_read(sample_ttl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    total = len(files.read_triples(sample_ttl))
    stream = io.BytesIO()
    seen: dict[str, int] = {}
    parse = files.parse

    def watched(path: Any) -> Iterator:
        for i, t in enumerate(parse(path)):
            if i == total // 2:
                seen["written at half"] = stream.tell()
            yield t

    monkeypatch.setattr(files, "parse", watched)
    assert export_.export_to(sample_ttl, stream, "jsonld") == total
    # Half the graph read, most of that half already written: nothing waits for the whole graph in memory.
    assert seen["written at half"] > stream.tell() // 4


ODD = """@prefix ex: <http://example.org/> .
@prefix kgc: <https://w3id.org/kg/concept/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a a ex:Thing, _:klass ; ex:p "plain", "chat"@fr, "3"^^xsd:integer, "x:y" ; ex:q _:b ; ex:r kgc:c .
_:b ex:p "in a blank node" ; <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "a literal type" .
kgc:c ex:p <https://w3id.org/kg/concept/a/b> , <https://w3id.org/kg/paper/> , <urn:x:y> .
"""


def test_jsonld_keeps_blank_nodes_languages_datatypes_and_a_subject_that_comes_back(tmp_path: Path) -> None:
    graph = tmp_path / "odd.nt"
    triples = list(ox.parse(ODD.encode(), format=ox.RdfFormat.TURTLE))
    with graph.open("wb") as stream:
        # ex:a twice, apart: two node objects with the same @id, merged back by the reader.
        ox.serialize([*triples[1:], triples[0]], stream, format=ox.RdfFormat.N_TRIPLES)
    out = kg.export(graph, tmp_path / "odd.jsonld")
    want = Graph().parse(graph, format="nt")
    assert isomorphic(Graph().parse(out, format="json-ld"), want)
    back = list(ox.parse(out.read_bytes(), format=ox.RdfFormat.JSON_LD))
    assert len(back) == len(want) == len(triples)


def test_jsonld_of_an_empty_graph_is_an_empty_document(tmp_path: Path) -> None:
    graph = tmp_path / "empty.nt"
    graph.write_bytes(b"")
    doc = json.loads(kg.export(graph, tmp_path / "e.jsonld").read_text(encoding="utf-8"))
    assert doc["@graph"] == [] and "@context" in doc


def test_a_broken_graph_leaves_no_half_written_jsonld(tmp_path: Path) -> None:
    graph = tmp_path / "broken.nt"
    graph.write_text("<http://a> <http://b> <http://c> .\n" * 5000 + "<http://a> <http://b> broken .\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["export", str(graph), "-o", str(tmp_path / "out.jsonld")])
    assert result.exit_code == 1 and result.output.startswith(f"Error: {graph}: not valid RDF")
    assert not (tmp_path / "out.jsonld").exists() and list(tmp_path.iterdir()) == [graph]


# CSV

LINKS = """SELECT ?paper ?concept ?score ?field ?start ?end ?exact WHERE {
  ?annotation oa:hasBody ?concept ; kg:score ?score ; oa:hasTarget ?target .
  ?concept a skos:Concept .
  ?target oa:hasSource ?paper ; oa:hasSelector ?position, ?quote .
  ?paper a fabio:ResearchPaper .
  ?position oa:start ?start ; oa:end ?end . ?quote oa:exact ?exact .
  OPTIONAL { ?target kg:onProperty ?on }
  BIND(IF(BOUND(?on), "title", "abstract") AS ?field)
}"""


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def test_links_csv_from_the_suffix_holds_every_link_of_the_graph(sample_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "links.csv"
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_csv(out)
    assert result.output == f"wrote {out} ({len(rows):,} rows)\n"
    assert list(rows[0]) == ["paper_id", "paper", "title", "year", "venue", "concept", "label", "score", "subject", "mentions", "evidence"]
    store = store_of(sample_ttl)
    spans: dict[tuple[str, str], set[str]] = {}
    scores: dict[tuple[str, str], str] = {}
    for r in select(store, LINKS):
        key = (r["paper"], r["concept"])
        spans.setdefault(key, set()).add(f"{r['field']}[{r['start']}:{r['end']}] {r['exact']}")
        scores[key] = r["score"]
    got = {(r["paper"], r["concept"]): r for r in rows}
    assert len(got) == len(rows) == len(spans) > 100
    for key, row in got.items():
        assert set(row["evidence"].split(" | ")) == spans[key] and int(row["mentions"]) == len(spans[key])
        assert float(row["score"]) == float(scores[key])
    subjects = {(r["paper"], r["concept"]) for r in select(store, "SELECT ?paper ?concept { ?paper dcterms:subject ?concept . ?concept a skos:Concept }")}
    assert {k for k, r in got.items() if r["subject"] == "1"} == subjects
    meta = select(store, "SELECT ?paper ?id ?label ?pref { ?paper dcterms:identifier ?id ; rdfs:label ?label ; dcterms:subject ?c . "
                         "?c skos:prefLabel ?pref } LIMIT 1")[0]
    row = next(r for r in rows if r["paper"] == meta["paper"])
    assert (row["paper_id"], row["title"]) == (meta["id"], meta["label"])


def test_links_csv_has_title_year_and_venue_and_opens_in_pandas(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    from .conftest import FIXTURES

    runner = CliRunner()
    graph = tmp_path / "tiny.ttl"
    built = runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", str(graph), "--no-render",
                                "--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme"])
    assert built.exit_code == 0, built.output
    result = runner.invoke(cli, ["export", str(graph), "-f", "csv"])
    assert result.exit_code == 0, result.output
    frame = pandas.read_csv(io.StringIO(result.output))
    store = store_of(graph)
    expected = select(store, "SELECT ?paper ?title ?year ?venue { ?paper dcterms:title ?title ; fabio:hasPublicationYear ?year ; "
                             "dcterms:isPartOf/rdfs:label ?venue }")
    assert expected
    for e in expected:
        rows = frame[frame["paper"] == e["paper"]]
        assert len(rows) > 0
        assert set(rows["title"]) == {e["title"]} and set(rows["year"]) == {int(e["year"])} and set(rows["venue"]) == {e["venue"]}
    assert frame["score"].between(0, 1).all()


def test_concepts_csv_counts_papers_as_sparql_does(sample_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "concepts.csv"
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-o", str(out), "--table", "concepts"])
    assert result.exit_code == 0, result.output
    rows = {r["concept"]: r for r in read_csv(out)}
    store = store_of(sample_ttl)
    concepts = select(store, "SELECT ?c ?label { ?c a skos:Concept ; skos:prefLabel ?label }")
    assert len(rows) == len(concepts) and all(rows[c["c"]]["label"] == c["label"] for c in concepts)
    counts = select(store, "SELECT ?c (COUNT(?p) AS ?n) { ?p dcterms:subject ?c . ?c a skos:Concept } GROUP BY ?c")
    assert counts and {c["c"]: int(c["n"]) for c in counts} == {c: int(r["papers"]) for c, r in rows.items() if r["papers"] != "0"}
    mentions = {(r["paper"], r["concept"]) for r in select(store, LINKS)}
    assert sum(int(r["mentioned_in"]) for r in rows.values()) == len(mentions)
    broader = select(store, "SELECT ?c ?b { ?c a skos:Concept ; skos:broader ?b }")
    assert all(b["b"] in rows[b["c"]]["broader"].split() for b in broader)
    first = next(iter(rows.values()))
    assert int(first["papers"]) == max(int(r["papers"]) for r in rows.values())


def test_papers_csv_has_one_row_per_paper_as_sparql_counts(sample_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "papers.csv"
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-o", str(out), "--table", "papers"])
    assert result.exit_code == 0, result.output
    rows = {r["paper"]: r for r in read_csv(out)}
    store = store_of(sample_ttl)
    papers = select(store, "SELECT ?p ?id ?abstract ?venue ?year { ?p a fabio:ResearchPaper ; dcterms:identifier ?id ; dcterms:abstract ?abstract ; "
                           "dcterms:isPartOf/rdfs:label ?venue ; fabio:hasPublicationYear ?year }")
    assert papers and len(rows) == len(papers)
    for p in papers:
        row = rows[p["p"]]
        assert (row["paper_id"], row["abstract"], row["venue"], row["year"]) == (p["id"], p["abstract"], p["venue"], p["year"])
    subjects = select(store, "SELECT ?p (COUNT(?c) AS ?n) { ?p dcterms:subject ?c } GROUP BY ?p")
    assert all(len(rows[s["p"]]["subjects"].split("; ")) == int(s["n"]) for s in subjects)


def test_csv_labels_are_the_labels_every_other_reader_gives(tmp_path: Path) -> None:
    """One label rule: the CSV tables name a concept as kg.graph.facts does (the least English prefLabel, else
    its rdfs:label, else the IRI's last segment), whatever order or languages the graph gives its labels in."""
    from kg.graph.facts import read_facts

    graph = tmp_path / "labels.ttl"
    graph.write_text(
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix fabio: <http://purl.org/spar/fabio/> . @prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "<https://example.org/c/many> a skos:Concept ; skos:prefLabel \"zeta\"@en , \"alpha\"@en , \"Deutsch\"@de .\n"
        "<https://example.org/c/plain> a skos:Concept ; rdfs:label \"plain label\" .\n"
        "<https://example.org/c/bare> a skos:Concept .\n"
        "<https://example.org/p/1> a fabio:ResearchPaper ; dcterms:identifier \"p1\" ; dcterms:title \"A paper\" ;\n"
        "  dcterms:subject <https://example.org/c/many> , <https://example.org/c/plain> , <https://example.org/c/bare> .\n",
        encoding="utf-8")
    facts = read_facts(graph)
    concepts = tmp_path / "concepts.csv"
    assert CliRunner().invoke(cli, ["export", str(graph), "-o", str(concepts), "--table", "concepts"]).exit_code == 0
    assert {r["concept"]: r["label"] for r in read_csv(concepts)} == facts.concepts
    papers = tmp_path / "papers.csv"
    assert CliRunner().invoke(cli, ["export", str(graph), "-o", str(papers), "--table", "papers"]).exit_code == 0
    assert read_csv(papers)[0]["subjects"].split("; ") == sorted(facts.concepts.values())


def test_a_graph_written_as_json_ld_is_what_kg_export_writes(sample_built: Any, tmp_path: Path) -> None:
    """One JSON-LD writer (kg.graph.jsonld): `kg build -o x.jsonld` and `kg.write` wrote pyoxigraph's JSON-LD, with no
    @context, where `kg export` wrote kg's compact form."""
    written = kg.write(sample_built, tmp_path / "g.jsonld")
    exported = kg.export(kg.write(sample_built, tmp_path / "g.nt"), tmp_path / "e.jsonld")
    assert written.read_bytes() == exported.read_bytes()
    assert json.loads(written.read_bytes())["@context"]["paper"] == "https://w3id.org/kg/paper/"
