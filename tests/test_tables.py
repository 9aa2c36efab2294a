"""The CSV tables take their DOIs, scores and evidence spans from the one reader of a graph (kg.graph.facts), on a
graph file and on a shard folder whose papers and annotations lie in different shards; SPARQL holds the reader."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyoxigraph as ox
import pytest

import kg
from kg.graph import shards
from kg.graph.facts import read_facts
from kg.views.tables import write_table

from .conftest import FIXTURES

DOIS = "PREFIX bibo: <http://purl.org/ontology/bibo/> SELECT ?paper ?doi { ?paper a <http://purl.org/spar/fabio/ResearchPaper> ; bibo:doi ?doi }"
SPANS = """PREFIX oa: <http://www.w3.org/ns/oa#>
SELECT ?paper ?concept ?start ?end { ?a oa:hasBody ?concept ; oa:hasTarget ?t . ?t oa:hasSource ?paper ; oa:hasSelector ?s .
  ?s oa:start ?start ; oa:end ?end }"""


@pytest.fixture(scope="module")
def doi_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six papers from BibTeX, CSL-JSON, OpenAlex and arXiv records, most with a DOI."""
    inputs = FIXTURES / "inputs"
    built = kg.build([inputs / "zotero.bib", inputs / "openalex.json", inputs / "arxiv.atom", inputs / "zotero-csl.json"])
    return kg.write(built, tmp_path_factory.mktemp("doi") / "doi.ttl")


def shard_folder(graph: Path, folder: Path) -> Path:
    """The graph as a shard folder of two N-Triples files: the papers' own triples in one, everything else (their
    annotations, selectors, the scheme) in the other, listed in that order."""
    triples = list(ox.parse(path=str(graph), format=ox.RdfFormat.TURTLE))
    papers = {t.subject for t in triples if t.object == ox.NamedNode("http://purl.org/spar/fabio/ResearchPaper")}
    folder.mkdir()
    parts = ([t for t in triples if t.subject in papers], [t for t in triples if t.subject not in papers])
    listed = []
    for i, part in enumerate(parts):
        name = f"part-test-{i:05d}.nt"
        ox.serialize(part, str(folder / name), format=ox.RdfFormat.N_TRIPLES)
        listed.append(shards.Shard(name, len(papers) if i == 0 else 0, len(part), (folder / name).stat().st_size, "urn:x:build"))
    shards.write(folder, shards.Manifest(tuple(listed), (), (), (), "https://w3id.org/kg/", "0"))
    return folder


def table(graph: Path, name: str) -> list[dict[str, str]]:
    out = io.BytesIO()
    write_table(graph, out, name)
    return list(csv.DictReader(io.StringIO(out.getvalue().decode("utf-8"))))


def sparql(graph: Path, text: str) -> list[dict[str, str]]:
    store = ox.Store()
    store.bulk_extend(ox.parse(path=str(graph), format=ox.RdfFormat.TURTLE))
    solutions = store.query(text)
    names = solutions.variables  # type: ignore[union-attr]
    return [{v.value: row[v].value for v in names if row[v] is not None} for row in solutions]  # type: ignore[union-attr]


@pytest.mark.parametrize("which", ["sample", "doi", "doi-shards"])
def test_table_dois_scores_and_evidence_are_the_readers(which: str, sample_ttl: Path, doi_ttl: Path, tmp_path: Path) -> None:
    ttl = sample_ttl if which == "sample" else doi_ttl
    graph = shard_folder(ttl, tmp_path / "shards") if which.endswith("shards") else ttl
    facts = read_facts(graph, evidence=True)
    papers = table(graph, "papers")
    assert {r["paper"]: r["doi"] for r in papers} == {p: facts.dois.get(p, "") for p in facts.papers}
    assert {p: d for p, d in facts.dois.items()} == {r["paper"]: r["doi"] for r in sparql(ttl, DOIS)}
    if which != "sample":
        assert sum(1 for r in papers if r["doi"]) >= 3
    links = table(graph, "links")
    concept = "http://www.w3.org/2004/02/skos/core#Concept"  # the links of concepts; a proposed method's are not a table's
    assert len(links) == sum(1 for _, c in facts.evidence if concept in facts.types.get(c, ())) > 10
    for row in links:
        e = facts.evidence[row["paper"], row["concept"]]
        assert row["score"] == e.score and int(row["mentions"]) == len(e.spans)
        assert row["evidence"] == " | ".join(f"{where}[{a}:{b}] {exact}" for where, a, b, exact in e.spans)
    spans: dict[tuple[str, str], set[tuple[int, int]]] = {}
    for r in sparql(ttl, SPANS):
        spans.setdefault((r["paper"], r["concept"]), set()).add((int(r["start"]), int(r["end"])))
    assert {k: {(a, b) for _, a, b, _ in e.spans} for k, e in facts.evidence.items()} == spans


def test_facts_keep_the_spans_only_when_asked(sample_ttl: Path) -> None:
    assert read_facts(sample_ttl).evidence == {}
    assert read_facts(sample_ttl).mentions == {k: len(e.spans) for k, e in read_facts(sample_ttl, evidence=True).evidence.items()}
