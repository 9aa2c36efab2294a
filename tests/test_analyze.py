"""`kg analyze`: centrality, communities, related concepts, bridging and similar papers, as RDF."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
import kg.graph.handle
from kg.cli import cli
from kg.graph.resources import data_path

EX = "https://example.org/concept/"
KG = "https://w3id.org/kg/ontology#"
ASTRONOMY = {EX + c for c in ("quasar-lensing", "pulsar-timing", "nebula-mapping")}
BIOLOGY = {EX + c for c in ("protein-folding", "gene-editing", "cell-imaging")}


def _store(path: Path):
    import pyoxigraph as ox

    store = ox.Store()
    store.bulk_load(path=str(path), format=ox.RdfFormat.TURTLE)
    return store


def _run(graph: Path, name: str, **params) -> list[dict]:
    """Run a named query through kg.query, which binds the parameters as RDF terms."""
    return list(kg.query(name, params, graph=graph))


@pytest.fixture(scope="module")
def sample_analyzed(sample_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample, analysed by the CLI in place (at the tests' build time: a module fixture runs before the autouse one)."""
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    path = tmp_path_factory.mktemp("analyzed") / "icml2024.ttl"
    shutil.copy(sample_ttl, path)
    result = CliRunner().invoke(cli, ["analyze", str(path)])
    assert result.exit_code == 0, result.output
    assert f"wrote {path}" in result.output
    return path


def test_two_topics_analysis_recovers_the_construction(two_topics_ttl: Path) -> None:
    result = kg.analyze(two_topics_ttl)
    assert {frozenset(c) for c in result.communities} == {frozenset(ASTRONOMY), frozenset(BIOLOGY)}
    assert [b.paper.rsplit("/", 1)[-1] for b in result.bridges] == ["bridge"]
    assert result.bridges[0].communities == (1, 2)
    assert result.bridges[0].betweenness == 1.0  # every path from one area to the other goes through it
    assert sum(result.pagerank.values()) == pytest.approx(1, abs=1e-4)
    # the two concepts linked across areas have one more neighbour than the rest of their area
    for area in (ASTRONOMY, BIOLOGY):
        assert max(area, key=result.pagerank.get) in {EX + "quasar-lensing", EX + "protein-folding"}
    best: dict[str, tuple[float, str]] = {}
    for s in result.similar:
        for x, y in ((s.a, s.b), (s.b, s.a)):
            best[x] = max(best.get(x, (0.0, "")), (s.score, y))
    for i in range(1, 5):
        assert best[f"https://w3id.org/kg/paper/a{i}"][1].rsplit("/", 1)[-1].startswith("a")
        assert best[f"https://w3id.org/kg/paper/b{i}"][1].rsplit("/", 1)[-1].startswith("b")


def test_two_topics_rdf_reads_back_through_the_named_queries(two_topics_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "analysed.ttl"
    kg.analyze(two_topics_ttl, out)
    members: dict[str, set[str]] = {}
    for row in _run(out, "communities"):
        members.setdefault(row["community"], set()).add(row["member"])
    assert sorted(members.values(), key=sorted) == sorted([ASTRONOMY, BIOLOGY], key=sorted)
    rows = _run(out, "related-concepts", concept="quasar lensing")  # a label, resolved by kg.query
    weights = {r["related"]: r["papers"] for r in rows}
    assert weights == {EX + "pulsar-timing": 4, EX + "nebula-mapping": 4, EX + "protein-folding": 1}
    assert all(r["concept"] == EX + "quasar-lensing" for r in rows)
    assert {r["related"] for r in _run(out, "related-concepts", concept="quasar lensing", min=2)} == {EX + "pulsar-timing", EX + "nebula-mapping"}
    similar = _run(out, "similar-papers", paper="a1")
    assert similar and all(r["paper"].endswith("/a1") for r in similar)
    assert similar[0]["similar"].rsplit("/", 1)[-1] in {"a2", "a3", "a4"}  # ordered by score


def test_sample_analysis_reads_back_with_sparql(sample_analyzed: Path) -> None:
    store = _store(sample_analyzed)
    subjects = {r["c"].value for r in store.query("SELECT DISTINCT ?c WHERE { ?p <http://purl.org/dc/terms/subject> ?c }")}
    rows = _run(sample_analyzed, "communities", min=1)
    membership = Counter(r["member"] for r in rows)
    assert set(membership) == subjects and set(membership.values()) == {1}  # each concept in exactly one community
    assert all(r["pagerank"] is not None for r in rows)
    # related-concepts agrees with shared papers counted by SPARQL over dcterms:subject alone
    shared = {
        (r["a"].value, r["b"].value): int(r["n"].value)
        for r in store.query(
            "SELECT ?a ?b (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/subject> ?a, ?b FILTER (STR(?a) < STR(?b)) } GROUP BY ?a ?b"
        )
    }
    related = _run(sample_analyzed, "related-concepts")
    assert related, "the sample has concepts that share papers"
    for r in related:
        assert r["papers"] == shared[tuple(sorted((r["concept"], r["related"])))]
    one = related[0]["concept"]
    assert {r["concept"] for r in _run(sample_analyzed, "related-concepts", concept=one)} == {one}
    assert all(r["size"] >= 2 for r in _run(sample_analyzed, "communities"))  # singletons only on request


def test_analysis_adds_only_iris_and_keeps_the_input(sample_ttl: Path, sample_analyzed: Path) -> None:
    from kg.graph.files import read_triples

    before = set(read_triples(sample_ttl))
    after = set(read_triples(sample_analyzed))
    assert before <= after and len(after) > len(before)
    assert not any(t.subject.__class__.__name__ == "BlankNode" or t.object.__class__.__name__ == "BlankNode" for t in after)
    declared = (data_path("ontology") / "analysis.ttl").read_text(encoding="utf-8")
    for t in after - before:
        if t.predicate.value.startswith(KG):
            assert f"kg:{t.predicate.value[len(KG):]} a owl:" in declared  # every property is documented


def test_reanalysing_replaces_and_is_byte_identical(sample_analyzed: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.ttl"
    result = CliRunner().invoke(cli, ["analyze", str(sample_analyzed), "-o", str(again)])
    assert result.exit_code == 0, result.output
    assert again.read_bytes() == sample_analyzed.read_bytes()


def test_output_does_not_depend_on_hash_seed(two_topics_ttl: Path, tmp_path: Path) -> None:
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}.ttl"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "kg", "analyze", str(two_topics_ttl), "-o", str(out)], check=True, env=env, capture_output=True)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_missing_graph_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "nope.ttl")])
    assert result.exit_code == 1
    assert "Error:" in result.output and "nope.ttl: no such graph file" in result.output


def test_failed_analysis_leaves_the_output_alone(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text("this is not turtle", encoding="utf-8")
    out = tmp_path / "out.ttl"
    out.write_text("previous", encoding="utf-8")
    result = CliRunner().invoke(cli, ["analyze", str(bad), "-o", str(out)])
    assert result.exit_code == 1 and "not valid RDF" in result.output
    assert out.read_text(encoding="utf-8") == "previous"


def test_an_analysed_graph_passes_the_shapes(sample_ttl: Path, sample_analyzed: Path) -> None:
    import rdflib

    from .test_scheme import _validate_papers

    graph = rdflib.Graph().parse(sample_analyzed)
    conforms, report = _validate_papers(graph)
    assert conforms, report
    prov = "http://www.w3.org/ns/prov#"
    runs = list(graph.subjects(rdflib.RDF.type, rdflib.URIRef(KG + "Analysis")))
    assert len(runs) == 1
    (started,) = graph.objects(runs[0], rdflib.URIRef(prov + "startedAtTime"))
    assert started.toPython().timestamp() == 1700000000  # SOURCE_DATE_EPOCH, as for builds
    (agent,) = graph.objects(runs[0], rdflib.URIRef(prov + "wasAssociatedWith"))
    assert (agent, rdflib.RDF.type, rdflib.URIRef(prov + "SoftwareAgent")) in graph
    def repeated(path: Path) -> int:
        triples = kg.graph.files.read_triples(path)
        return len(triples) - len(set(triples))

    assert repeated(sample_analyzed) == repeated(sample_ttl), "the analysis writes no triple the graph already has (the agent)"


def test_an_update_says_the_analysis_is_stale(sample_analyzed: Path, tmp_path: Path) -> None:
    graph = tmp_path / "g.ttl"
    shutil.copy(sample_analyzed, graph)
    new = tmp_path / "new.jsonl"
    new.write_text('{"id": "n1", "title": "Diffusion policies", "abstract": "We propose diffusion models for offline reinforcement learning."}\n',
                   encoding="utf-8")
    got = CliRunner().invoke(cli, ["build", "--update", str(graph), str(new), "--no-render"])
    assert got.exit_code == 0, got.output
    assert f"run 'kg analyze {graph}' again" in got.stderr and "does not cover the new papers" in got.stderr
    again = CliRunner().invoke(cli, ["build", "--update", str(graph), str(new), "--no-render"])
    assert again.exit_code == 0 and "analyze" not in again.output, "nothing added: nothing went stale"
    plain = tmp_path / "plain.ttl"
    assert CliRunner().invoke(cli, ["build", str(new), "-o", str(plain), "--no-render"]).exit_code == 0
    more = tmp_path / "more.jsonl"
    more.write_text('{"id": "n2", "abstract": "Graph neural networks for molecules."}\n', encoding="utf-8")
    got = CliRunner().invoke(cli, ["build", "--update", str(plain), str(more), "--no-render"])
    assert got.exit_code == 0 and "analyze" not in got.output, "an unanalysed graph has nothing to go stale"


def test_the_analysis_prints_a_summary_not_every_score(two_topics_ttl: Path) -> None:
    result = kg.analyze(two_topics_ttl)
    text = repr(result)
    s = result.summary()
    assert text.startswith(f"<kg Analysis of {len(result.facts.papers)} papers: {s['concepts']} concepts ranked, {s['communities']} communities")
    assert len(text.splitlines()) == 1 + min(3, len(result.communities)) and len(text) < 1000
    assert "community 1: " in text


def test_betweenness_in_batches_is_networkx_betweenness() -> None:
    """The batched sparse Brandes (kg.views.network.paths_through) gives networkx's betweenness_centrality_subset, summed over
    each community's sources to the concepts of the other communities, on a graph with a part apart from the rest."""
    import networkx as nx
    import pyoxigraph as ox

    from kg.graph.facts import of_triples
    from kg.graph.vocabulary import DCTERMS
    from kg.views.network import paths_through

    from .conftest import synthetic_triples

    apart = [ox.Triple(ox.NamedNode(f"https://w3id.org/kg/paper/x{i}"), ox.NamedNode(DCTERMS + "subject"),
                       ox.NamedNode(f"https://w3id.org/kg/concept/x-{i + j}")) for i in range(3) for j in range(2)]
    facts = of_triples([*synthetic_triples(400, concepts=120, seed=3), *apart])
    concepts = sorted({c for _, c in facts.subjects})
    community = [1 + sum(map(ord, c)) % 4 for c in concepts]  # any partition will do
    sources = concepts[::3]
    got, pairs = paths_through(facts, concepts, community, sources, batch=7)  # batches that do not divide the sources
    g = nx.Graph()
    g.add_edges_from(facts.subjects)
    want: dict[str, float] = {}
    expected_pairs = 0
    for number in set(community):
        starts = [c for c, n in zip(concepts, community) if n == number and c in sources]
        ends = [c for c, n in zip(concepts, community) if n != number]
        expected_pairs += len(starts) * len(ends)
        for node, value in nx.betweenness_centrality_subset(g, starts, ends, normalized=False).items():
            want[node] = want.get(node, 0.0) + 2 * value  # networkx halves undirected counts
    assert pairs == expected_pairs
    papers = {p for p, _ in facts.subjects}
    assert set(got) == papers
    assert sum(v > 0 for v in got.values()) > 100
    for p in papers:
        assert got[p] == pytest.approx(want[p], rel=1e-9, abs=1e-9), p


def test_the_analysis_says_each_step_as_it_starts(two_topics_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Minutes on a large graph with nothing on screen (issue #29): kg analyze tells a terminal each step (kg.core.progress)."""
    from kg.core import progress

    said: list[str] = []
    monkeypatch.setattr(progress, "stage", said.append)
    kg.analyze(two_topics_ttl, tmp_path / "out.ttl")
    assert said[0] == f"reading the query index of {two_topics_ttl}"  # its fresh index, not a parse of it
    assert [s.split()[0] for s in said] == ["reading", "ranking", "finding", "finding", "writing"]
    assert "6 concepts of 10 papers" in said[1] and said[-1].startswith(f"writing {tmp_path / 'out.ttl'}")


@pytest.mark.parametrize("graph", ["sample_ttl", "corpus_slice_ttl"])
def test_the_analysis_reads_the_query_index_and_finds_what_a_parse_finds(graph: str, request: pytest.FixtureRequest,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph with a fresh query index is analysed from the index (decision 0059), with every result of the parse-fed analysis."""
    import kg.views.analyze as analysis
    from kg.graph.facts import read_facts

    path: Path = request.getfixturevalue(graph)
    parsed = analysis.compute(read_facts(path))

    def no_parse(graph: object) -> None:
        raise AssertionError(f"{graph} was parsed although its query index is fresh")

    monkeypatch.setattr(analysis, "read_facts", no_parse)
    indexed = analysis.compute(path)
    assert indexed.summary() == parsed.summary() and indexed.summary()["similar"] > 0
    for field in ("base", "pagerank", "communities", "related", "bridges", "similar"):
        assert getattr(indexed, field) == getattr(parsed, field), field
    for field in ("papers", "concepts", "subjects", "pagerank", "community", "builds"):
        assert getattr(indexed.facts, field) == getattr(parsed.facts, field), field
    assert list(indexed.facts.papers) == list(parsed.facts.papers)  # graph order: the run's IRI and the base are read off it


def test_an_analysis_from_the_index_writes_the_bytes_of_one_from_the_file(sample_ttl: Path, sample_analyzed: Path, tmp_path: Path) -> None:
    """The same graph without its query index (read from a parse) and with it give the same file, also re-analysed."""
    bare = tmp_path / "bare" / "icml2024.ttl"
    bare.parent.mkdir()
    shutil.copy(sample_ttl, bare)  # no index beside it: the facts come from a parse
    assert not kg.graph.handle.GraphFile(bare).fresh_index()
    out = tmp_path / "from-file.ttl"
    kg.analyze(bare, out)
    assert out.read_bytes() == sample_analyzed.read_bytes()
    again = tmp_path / "again.ttl"
    kg.analyze(out, again)  # out has an index now, with the analysis in it
    assert again.read_bytes() == sample_analyzed.read_bytes()
