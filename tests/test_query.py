"""Named queries: the catalog, parameter binding, roll-up, formats, the persisted store, both engines."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.graph.files import read_triples
from kg.graph.vocabulary import DCTERMS, SKOS
from kg.sparql.run import catalog, from_text, resolve
from kg.sparql.store import fresh_folder, store_dir

KGC = "https://w3id.org/kg/concept/"
RL = KGC + "reinforcement-learning"


def _below(triples: list, top: str) -> set[str]:
    """Concepts at or below `top` through skos:broader, computed from the triples in Python."""
    broader: dict[str, set[str]] = {}
    for t in triples:
        if t.predicate.value == SKOS + "broader":
            broader.setdefault(t.subject.value, set()).add(t.object.value)
    out = {top}
    changed = True
    while changed:
        changed = False
        for c, parents in broader.items():
            if c not in out and parents & out:
                out.add(c)
                changed = True
    return out


def _subjects(triples: list) -> dict[str, set[str]]:
    subjects: dict[str, set[str]] = {}
    for t in triples:
        if t.predicate.value == DCTERMS + "subject":
            subjects.setdefault(t.subject.value, set()).add(t.object.value)
    return subjects


# ---- the catalog -----------------------------------------------------------------------------


def test_catalog_has_the_named_queries_with_headers() -> None:
    named = catalog()
    wanted = {"papers-by-concept", "concepts-of-paper", "top-concepts", "co-occurrence", "bridging-papers",
              "concept-tree", "evidence", "trend", "search", "proposed-methods"}
    assert wanted <= set(named)
    for q in named.values():
        assert q.purpose and q.example.startswith(f"kg query {q.name}"), q.name
        for p in q.params:  # every parameter is projected, so pyoxigraph can substitute it
            assert f"?{p.name}" in q.text.split("WHERE")[0], (q.name, p.name)
    assert [p.name for p in named["bridging-papers"].params] == ["a", "b"]
    assert named["co-occurrence"].params[0].default == "1"


def test_cli_list_prints_one_line_per_query() -> None:
    out = CliRunner().invoke(cli, ["query", "--list"])
    assert out.exit_code == 0
    lines = out.output.strip().splitlines()
    assert len(lines) >= 8 and len(lines) == len(catalog())
    by_name = {line.split()[0]: line for line in lines}
    assert "concept" in by_name["papers-by-concept"] and "skos:broader" in by_name["papers-by-concept"]


def test_unknown_query_lists_the_available_names(mini_ttl: Path) -> None:
    out = CliRunner().invoke(cli, ["query", "papers-by-concep", "--graph", str(mini_ttl)])
    assert out.exit_code == 1
    assert "query 'papers-by-concep' not found" in out.output and "did you mean 'papers-by-concept'" in out.output
    assert "available: bridging-papers, co-occurrence" in out.output and "Traceback" not in out.output


# ---- roll-up and binding ---------------------------------------------------------------------


def test_papers_by_concept_rolls_up_on_the_fixture(mini_ttl: Path) -> None:
    rows = list(kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=mini_ttl))
    assert {r["identifier"] for r in rows} == {"p1", "p2", "p5"}  # offline RL, RLHF, RL itself
    assert {r["viaLabel"] for r in rows} == {"offline reinforcement learning", "reinforcement learning from human feedback", "reinforcement learning"}
    # Labels resolve case-insensitively, through altLabels, and an IRI works as well.
    for given in ("Reinforcement Learning", "rl", RL, f"<{RL}>"):
        assert {r["identifier"] for r in kg.query("papers-by-concept", {"concept": given}, graph=mini_ttl)} == {"p1", "p2", "p5"}
    assert [r["identifier"] for r in kg.query("papers-by-concept", {"concept": "offline RL"}, graph=mini_ttl)] == ["p1"]


def test_papers_by_concept_on_the_sample_finds_rl_papers(sample_ttl: Path) -> None:
    """The must-show: every paper whose subject is at or below RL, and nothing else."""
    triples = read_triples(sample_ttl)
    below = _below(triples, RL)
    expected = {p for p, s in _subjects(triples).items() if s & below}
    assert len(expected) >= 3  # the sample has RL papers to find
    rows = list(kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=sample_ttl))
    assert {r["paper"] for r in rows} == expected and len(rows) == len(expected)  # each paper once
    assert all(r["via"] in below and r["via"] in _subjects(triples)[r["paper"]] for r in rows)
    offline = {p for p, s in _subjects(triples).items() if KGC + "offline-reinforcement-learning" in s}
    assert offline <= {r["paper"] for r in rows}
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]  # best-scored first


def test_bridging_papers_need_both_concepts(mini_ttl: Path) -> None:
    rows = list(kg.query("bridging-papers", {"a": "RL", "b": "LLM"}, graph=mini_ttl))
    assert [r["identifier"] for r in rows] == ["p2"]
    # p2 is about RLHF (below both) and LLMs: the first label in order names each side.
    assert (rows[0]["aVia"], rows[0]["bVia"]) == ("reinforcement learning from human feedback", "large language model")


def test_parameter_errors_are_clear(mini_ttl: Path) -> None:
    with pytest.raises(kg.UsageError, match="needs parameter 'concept'"):
        kg.query("papers-by-concept", graph=mini_ttl)
    with pytest.raises(kg.UsageError, match="no concept labelled 'reinforcment learning'.*did you mean: reinforcement learning"):
        kg.query("papers-by-concept", {"concept": "reinforcment learning"}, graph=mini_ttl)
    with pytest.raises(kg.UsageError, match="has no parameter 'topic'"):
        kg.query("papers-by-concept", {"topic": "RL"}, graph=mini_ttl)
    with pytest.raises(kg.UsageError, match="must be a whole number"):
        kg.query("co-occurrence", {"min": "two"}, graph=mini_ttl)


def test_parameters_are_bound_not_pasted(mini_ttl: Path) -> None:
    """A phrase with quotes and braces is a literal value, not SPARQL text."""
    rows = list(kg.query("search", {"words": 'x" } ?p ?o . { "'}, graph=mini_ttl))
    assert rows == []
    assert [r["identifier"] for r in kg.query("search", {"words": "HUMAN FEEDBACK"}, graph=mini_ttl)] == ["p2"]


def test_evidence_spans_point_into_the_abstract(mini_ttl: Path) -> None:
    rows = list(kg.query("evidence", {"paper": "p2", "concept": "machine learning"}, graph=mini_ttl))
    abstract = next(t.object.value for t in read_triples(mini_ttl) if t.predicate.value == DCTERMS + "abstract" and t.subject.value.endswith("/p2"))
    assert {r["exact"] for r in rows} >= {"large language model"}
    title = next((t.object.value for t in read_triples(mini_ttl) if t.predicate.value == DCTERMS + "title" and t.subject.value.endswith("/p2")), "")
    for r in rows:
        assert (abstract if r["field"] == "abstract" else title)[r["start"] : r["end"]] == r["exact"]


def test_counting_queries_agree_with_python(mini_ttl: Path) -> None:
    subjects = _subjects(read_triples(mini_ttl))
    top = {r["label"]: (r["papers"], r["total"]) for r in kg.query("top-concepts", graph=mini_ttl)}
    assert top["machine learning"] == (0, 5)  # nobody is about ML directly; all five roll up to it
    assert top["reinforcement learning"] == (1, 3)
    pairs = {(r["aLabel"], r["bLabel"]): r["papers"] for r in kg.query("co-occurrence", {"nested": "1"}, graph=mini_ttl)}
    assert pairs == {("large language model", "reinforcement learning from human feedback"): 1}
    assert sum(len(s) for s in subjects.values()) == 6
    trend = {(r["label"], r["year"]): r["papers"] for r in kg.query("trend", {"concept": "RL"}, graph=mini_ttl)}
    assert trend == {("reinforcement learning", 2022): 1, ("reinforcement learning", 2023): 1, ("reinforcement learning", 2024): 1}
    tree = {r["label"]: r for r in kg.query("concept-tree", {"root": "RL"}, graph=mini_ttl)}
    assert set(tree) == {"reinforcement learning", "offline reinforcement learning", "reinforcement learning from human feedback"}
    assert tree["offline reinforcement learning"]["depth"] == 2
    assert len(kg.query("concept-tree", graph=mini_ttl)) == 7  # 6 concepts, RLHF twice (two broader)
    methods = {r["identifier"]: r["method"] for r in kg.query("proposed-methods", graph=mini_ttl)}
    assert methods == {"p1": "CQLX", "p2": "PrefTune", "p5": "RevPG"}


def _both(graph: Path, name: str, params: dict[str, str]) -> list[dict]:
    """The rows of a named query from the public API (the query index) and from the engine, which must agree."""
    from kg.sparql.run import run_store
    from kg.sparql.store import open_store

    rows = [dict(r) for r in kg.query(name, params, graph=graph)]
    assert rows == [dict(r) for r in run_store(open_store(graph), resolve(name), params)], (name, params)
    return rows


def test_co_occurrence_leaves_out_a_concept_paired_with_its_ancestor(mini_ttl: Path, tmp_path: Path) -> None:
    """p2 is about LLM and RLHF, and RLHF is under LLM: the pair says nothing the hierarchy does not (issue #29)."""
    graph = tmp_path / "mini.ttl"
    shutil.copy(mini_ttl, graph)
    assert _both(graph, "co-occurrence", {}) == []
    nested = _both(graph, "co-occurrence", {"nested": "1"})
    assert [(r["aLabel"], r["bLabel"], r["papers"]) for r in nested] == [("large language model", "reinforcement learning from human feedback", 1)]
    # a pair of unrelated concepts stays: p2 about RL too makes RL x LLM a pair (RL and LLM are siblings)
    import pyoxigraph as ox

    triples = [*read_triples(mini_ttl), ox.Triple(ox.NamedNode("https://w3id.org/kg/paper/p2"), ox.NamedNode(DCTERMS + "subject"), ox.NamedNode(RL))]
    wider = tmp_path / "wider.nt"
    wider.write_bytes(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"")
    pairs = {(r["aLabel"], r["bLabel"]) for r in _both(wider, "co-occurrence", {})}
    assert pairs == {("large language model", "reinforcement learning")}  # RLHF is under both, so only the siblings remain
    assert len(_both(wider, "co-occurrence", {"nested": "1"})) == 3


def test_trend_gives_each_years_share_in_year_order(mini_ttl: Path, tmp_path: Path) -> None:
    graph = tmp_path / "mini.ttl"
    shutil.copy(mini_ttl, graph)
    rows = _both(graph, "trend", {})
    triples = read_triples(mini_ttl)
    year = {t.subject.value: int(t.object.value) for t in triples if t.predicate.value.endswith("hasPublicationYear")}
    per_year = {y: sum(1 for v in year.values() if v == y) for y in set(year.values())}
    assert per_year == {2022: 1, 2023: 2, 2024: 2}
    assert [r["year"] for r in rows] == sorted(r["year"] for r in rows)  # years in order …
    for y in per_year:
        counts = [r["papers"] for r in rows if r["year"] == y]
        assert counts == sorted(counts, reverse=True)  # … the year's most written-about concepts first
    for r in rows:
        assert r["share"] == round(Decimal(r["papers"]) / per_year[r["year"]], 4)
    ml = {r["year"]: r["share"] for r in rows if r["label"] == "machine learning"}
    assert ml == {2022: 1, 2023: 1, 2024: 1}  # every paper rolls up to machine learning
    rl = {r["year"]: r["share"] for r in _both(graph, "trend", {"concept": "RL"})}
    assert rl == {2022: 1, 2023: Decimal("0.5"), 2024: Decimal("0.5")}


# ---- formats -----------------------------------------------------------------------------------


def test_result_formats_parse_back(mini_ttl: Path) -> None:
    from rdflib.plugins.sparql.results.jsonresults import JSONResultParser
    from rdflib.plugins.sparql.results.xmlresults import XMLResultParser

    r = kg.query("papers-by-concept", {"concept": "RL"}, graph=mini_ttl)
    n = len(r)
    parsed = JSONResultParser().parse(io.StringIO(r.serialize("json").decode()))
    assert len(parsed.bindings) == n and str(parsed.bindings[0][parsed.vars[1]]).startswith("https://w3id.org/kg/paper/")
    assert len(XMLResultParser().parse(io.BytesIO(r.serialize("xml"))).bindings) == n
    rows = list(csv.reader(io.StringIO(r.serialize("csv").decode())))
    assert rows[0] == list(r.variables) and len(rows) == n + 1
    tsv = r.serialize("tsv").decode().splitlines()
    assert tsv[0].split("\t")[0] == "?concept" and tsv[1].split("\t")[0] == f"<{RL}>"
    assert any('"2022"^^<http://www.w3.org/2001/XMLSchema#gYear>' in line for line in tsv[1:])
    assert all("^^<http://www.w3.org/2001/XMLSchema#decimal>" in line for line in tsv[1:])  # each paper's best score
    table = r.serialize("table").decode()
    assert "kgc:reinforcement-learning" in table and f"({n} rows)" in table
    ask = kg.query("ASK { ?p <http://purl.org/dc/terms/subject> ?c }", graph=mini_ttl)
    assert ask.kind == "ask" and bool(ask) and json.loads(ask.serialize("json"))["boolean"] is True
    with pytest.raises(kg.UsageError, match="does not fit a SELECT"):
        r.serialize("ttl")


def test_construct_gives_rdf(mini_ttl: Path) -> None:
    import pyoxigraph as ox

    r = kg.query("paper-graph", {"paper": "p2"}, graph=mini_ttl)
    assert r.kind == "graph"
    parsed = list(ox.parse(r.serialize("ttl"), format=ox.RdfFormat.TURTLE))
    assert {t.object.value for t in parsed if t.predicate.value == DCTERMS + "subject"} == {KGC + "rlhf", KGC + "large-language-model"}
    assert all(t.predicate.value != DCTERMS + "abstract" for t in parsed)
    out = CliRunner().invoke(cli, ["query", "paper-graph", "--graph", str(mini_ttl), "-p", "paper=p2", "-f", "nt"])
    assert out.exit_code == 0 and len(list(ox.parse(out.output.encode(), format=ox.RdfFormat.N_TRIPLES))) == len(parsed)


def test_dataframe(mini_ttl: Path) -> None:
    pytest.importorskip("pandas")
    df = kg.query("top-concepts", graph=mini_ttl).to_dataframe()
    assert list(df.columns) == ["concept", "label", "papers", "total"]
    assert df.set_index("label").loc["reinforcement learning", "total"] == 3


def test_cli_query_formats_and_stdin(mini_ttl: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["query", "papers-by-concept", "--graph", str(mini_ttl), "--param", "concept=RL", "--format", "csv"])
    assert out.exit_code == 0 and {row["identifier"] for row in csv.DictReader(io.StringIO(out.output))} == {"p1", "p2", "p5"}
    out = runner.invoke(cli, ["query", "-", "--graph", str(mini_ttl), "-f", "json"],
                        input="SELECT (COUNT(*) AS ?n) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }")
    assert out.exit_code == 0 and json.loads(out.output)["results"]["bindings"][0]["n"]["value"] == "5"
    rq = tmp_path / "mine.rq"
    rq.write_text("# Papers in a year.\n#\n# Parameters:\n#   year (integer, required)  the year\nSELECT ?p ?year WHERE { ?p <http://purl.org/spar/fabio/hasPublicationYear> ?y . FILTER(YEAR(?y) = ?year || STR(?y) = STR(?year)) }\n")
    out = runner.invoke(cli, ["query", str(rq), "--graph", str(mini_ttl), "-p", "year=2024", "-f", "csv"])
    assert out.exit_code == 0 and len(out.output.strip().splitlines()) == 3  # p4, p5
    out = runner.invoke(cli, ["query", "-", "--graph", str(mini_ttl)], input="SELECT * WHERE {\n  ?s ?p \n}")
    assert out.exit_code == 1 and "SPARQL syntax error at line 3, column " in out.output
    out = runner.invoke(cli, ["query", "SELECT * WHERE { ?s ?p }", "--graph", str(mini_ttl)])
    assert out.exit_code == 1 and out.output.startswith("Error: query 'ad-hoc': SPARQL syntax error at line 1, column ")
    out = runner.invoke(cli, ["query", "-", "--graph", str(mini_ttl)], input="INSERT DATA { <a:b> <a:c> <a:d> }")
    assert out.exit_code == 1 and "SPARQL Update" in out.output
    out = runner.invoke(cli, ["query", "top-concepts", "--graph", str(tmp_path / "missing.ttl")])
    assert out.exit_code == 1 and "no such graph file" in out.output and "kg build" in out.output
    out = runner.invoke(cli, ["query", "top-concepts", "--graph", str(mini_ttl), "-o", str(tmp_path / "top.csv"), "-f", "csv"])
    assert out.exit_code == 0 and (tmp_path / "top.csv").read_text().startswith("concept,label,papers,total")


def test_graph_defaults_to_what_build_writes(mini_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "graphs").mkdir()
    shutil.copy(mini_ttl, tmp_path / "graphs" / "icml2024.ttl")
    out = CliRunner().invoke(cli, ["query", "top-concepts", "-f", "csv"])
    assert out.exit_code == 0 and "reinforcement learning" in out.output


# ---- the persisted store -----------------------------------------------------------------------


def test_store_is_persisted_reused_and_rebuilt(mini_ttl: Path, tmp_path: Path) -> None:
    graph = tmp_path / "g.ttl"
    shutil.copy(mini_ttl, graph)
    assert fresh_folder(graph) is None
    top = resolve("top-concepts").text  # as ad-hoc SPARQL: the engine answers it (the named query has SQL, kg.sparql.index)
    assert len(kg.query(top, graph=graph)) == 6
    folder = fresh_folder(graph)
    assert folder is not None and folder.parent == store_dir(graph) == tmp_path / "g.oxigraph"
    built_at = (folder / "kg-source.json").stat().st_mtime_ns
    kg.query(top, graph=graph)
    assert fresh_folder(graph) == folder and (folder / "kg-source.json").stat().st_mtime_ns == built_at  # reused, not rebuilt
    # The Turtle changes: the store follows it.
    text = graph.read_text().replace('"diffusion model"@en', '"diffusion models"@en')
    time.sleep(0.01)
    graph.write_text(text)
    assert fresh_folder(graph) is None
    labels = {r["label"] for r in kg.query(top, graph=graph)}
    assert "diffusion models" in labels and fresh_folder(graph) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.oxigraph", "g.ttl"]  # no temporary folders left
    # one version (the first, read by no other process, is gone) and the link to it; the build lock is gone with its holder
    assert sorted(p.name for p in store_dir(graph).iterdir() if not p.name.startswith("v-")) == ["current"]


def test_store_falls_back_to_memory_in_a_read_only_folder(mini_ttl: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores folder permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(mini_ttl, folder / "g.ttl")
    folder.chmod(0o555)
    try:
        assert len(kg.query("top-concepts", graph=folder / "g.ttl")) == 6
    finally:
        folder.chmod(0o755)


# ---- the same rows on both engines -------------------------------------------------------------


def _rdflib_rows(graph, q, terms) -> list[tuple]:
    from rdflib import Literal, URIRef, Variable

    def to_rdflib(t):
        return URIRef(t.value) if t.kind == "uri" else Literal(t.value, lang=t.lang, datatype=None if t.lang else t.datatype)

    answer = graph.query(q.text, initBindings={Variable(k): to_rdflib(t) for k, t in terms.items()})
    if answer.type in ("CONSTRUCT", "DESCRIBE"):
        return sorted((str(s), str(p), _norm(o)) for s, p, o in answer)
    return [tuple(_norm(row[v]) for v in q_vars(answer)) for row in answer]


def q_vars(answer) -> list:
    return list(answer.vars)


def _norm(value) -> str | None:
    """Compare values, not lexical forms: 0.550 and 0.55 are the same decimal."""
    if value is None:
        return None
    text = str(value)
    try:
        return str(Decimal(text).normalize()) if text[:1].isdigit() or text[:1] == "-" else text
    except ArithmeticError:
        return text


def _sample_params(sample_ttl: Path) -> dict[str, dict]:
    triples = read_triples(sample_ttl)
    subjects = _subjects(triples)
    paper = next(p for p, s in sorted(subjects.items()) if RL in s)
    ident = next(t.object.value for t in triples if t.subject.value == paper and t.predicate.value == DCTERMS + "identifier")
    return {
        "papers-by-concept": {"concept": "reinforcement learning"},
        "concepts-of-paper": {"paper": ident},
        "bridging-papers": {"a": "reinforcement learning", "b": "machine learning"},
        "evidence": {"paper": ident, "concept": "machine learning"},
        "search": {"words": "reinforcement"},
        "paper-graph": {"paper": ident},
        "concept-tree": {"root": "machine learning"},
    }


@pytest.fixture(scope="module")
def reached_ttl(sample_analyzed_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The analysed sample without the scheme's concepts that nothing outside the scheme reaches (nor any concept
    above one that is reached): rdflib walks skos:broader+ from every concept, 19 s of concept-tree over the whole
    scheme against under 1 s here."""
    from kg.graph.files import write
    from kg.graph.vocabulary import RDF

    triples = read_triples(sample_analyzed_ttl)
    concepts = {t.subject.value for t in triples if t.predicate.value == RDF + "type" and t.object.value == SKOS + "Concept"}
    reached: set[str] = {t.object.value for t in triples if t.object.value in concepts and t.subject.value not in concepts}
    broader = [(t.subject.value, t.object.value) for t in triples if t.predicate.value == SKOS + "broader"]
    while grown := {above for below, above in broader if below in reached} - reached:
        reached |= grown
    gone = concepts - reached
    out = tmp_path_factory.mktemp("reached") / "reached.ttl"
    with out.open("wb") as stream:
        write([t for t in triples if t.subject.value not in gone and t.object.value not in gone], stream)
    return out


def test_every_named_query_gives_the_same_rows_on_rdflib(reached_ttl: Path) -> None:
    """pyoxigraph (the engine) and rdflib's own evaluator agree on every named query, in order (on the analysed
    sample, so related-concepts, communities and similar-papers have rows too)."""
    import rdflib

    sample_ttl = reached_ttl

    from kg.graph.resources import internal_query
    from kg.sparql.run import bind, run_store
    from kg.sparql.store import open_store

    store = open_store(sample_ttl)
    graph = rdflib.Graph().parse(sample_ttl)
    params = _sample_params(sample_ttl)
    nonempty = 0
    for name, q in catalog().items():
        ours = run_store(store, q, params.get(name, {}))
        terms = bind(q, params.get(name, {}), lambda name, t: run_store(store, from_text(internal_query(name)), {k: v.value for k, v in t.items()}))
        theirs = _rdflib_rows(graph, q, terms)
        if ours.kind == "graph":
            mine = sorted((t.subject.value, t.predicate.value, _norm(t.object.value)) for t in ours.triples)
        else:
            mine = [tuple(_norm(t.value) if t else None for t in row) for row in ours.rows]
        assert mine == theirs, name
        nonempty += bool(mine)
    assert nonempty >= len(catalog()) - 1  # the comparison is not vacuous


def test_parameters_are_bound_as_terms_not_pasted_as_text(mini_ttl: Path) -> None:
    """A parameter holding SPARQL syntax is one literal: it matches nothing and changes no query."""
    hostile = 'x" ) } UNION { ?paper ?p ?o } #'
    assert len(kg.query("search", {"words": hostile}, graph=mini_ttl)) == 0
    quotes = 'offline \\ "RL" \n'
    assert len(kg.query("search", {"words": quotes}, graph=mini_ttl)) == 0
    assert len(kg.query("search", {"words": "offline reinforcement"}, graph=mini_ttl)) == 1


def test_a_query_command_imports_only_the_query_path() -> None:
    """Issue #38: `import kg`, which every kg command runs first, imported every layer (the analysis, networkx, the
    extractor, the endpoint: 0.46 s of CPU before `kg query` read a row). The API's names are imported on first use."""
    import subprocess
    import sys

    probe = ("import sys, kg.cli; from kg.cli import query; "
             "print(sorted(m for m in ('kg.views.analyze', 'networkx', 'kg.extract.matcher', 'kg.endpoint.app', 'spacy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_name_of_the_api_is_its_modules_own() -> None:
    """The lazy `kg` package gives each name of `__all__` as `from kg import NAME` did: the object its module defines."""
    import importlib

    for name in kg.__all__:
        value = getattr(kg, name)
        if name != "__version__" and hasattr(value, "__module__") and value.__module__.startswith("kg."):
            assert getattr(importlib.import_module(value.__module__), getattr(value, "__name__", name)) is value, name
    assert set(kg.__all__) <= set(dir(kg))
    with pytest.raises(AttributeError):
        kg.no_such_name  # noqa: B018


def test_the_table_shortens_iris_with_kg_prefixes() -> None:
    """The prefix list is made once now (issue #38: it was made for each of a table's cells); it shortens as before."""
    from kg.graph.vocabulary import compact

    assert compact("https://w3id.org/kg/concept/reinforcement-learning") == "kgc:reinforcement-learning"
    assert compact("http://www.w3.org/1999/02/22-rdf-syntax-ns#type") == "rdf:type"
    assert compact("https://example.org/x") == "https://example.org/x"


# ---- the table writer against the one it replaced (issue #38) ---------------------------------------------------


def _old_compact(value: str) -> str:
    from kg.graph.vocabulary import _prefixes

    for prefix, ns in _prefixes():
        if value.startswith(ns) and len(value) > len(ns):
            return f"{prefix}:{value[len(ns):]}"
    return value


def _old_cells(r: kg.Results, width: int) -> list[list[str]]:
    def cell(t: Any) -> str:
        text = "" if t is None else _old_compact(t.value) if t.kind == "uri" else t.value
        return text if len(text) <= width else text[: width - 1] + "…"

    return [[cell(t) for t in row] for row in r.rows]


def _old_table(r: kg.Results, width: int = 60) -> bytes:
    """kg.sparql.results._table before issue #38 made it column by column: the oracle for its bytes."""
    if r.kind == "ask":
        return b"yes\n" if r.boolean else b"no\n"
    head = list(r.variables)
    body = _old_cells(r, width)
    widths = [max([len(h)] + [len(row[i]) for row in body]) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(head), line(["-" * w for w in widths]), *(line(row) for row in body)]
    n = len(body)
    out.append(f"({n} row{'s' if n != 1 else ''}{', truncated by the row cap' if r.truncated else ''})")
    return ("\n".join(out) + "\n").encode("utf-8")


def _old_without_echoed(results: Any, params: set[str]) -> tuple[Any, list[tuple[str, str]]]:
    """kg.cli.query._without_echoed before issue #38: the oracle for the columns `kg query` leaves out."""
    from dataclasses import replace

    keep, echoed = [], []
    for i, name in enumerate(results.variables):
        values = {row[i] for row in results.rows}
        if name in params and len(values) == 1 and None not in values and results.rows:
            term = next(iter(values))
            echoed.append((name, _old_compact(term.value) if term.kind == "uri" else term.value))
        else:
            keep.append(i)
    if not echoed:
        return results, []
    rows = tuple(tuple(row[i] for i in keep) for row in results.rows)
    return replace(results, variables=tuple(results.variables[i] for i in keep), rows=rows), echoed


def test_the_table_and_its_cells_are_the_old_writers_on_the_sample(sample_ttl: Path) -> None:
    """Issue #38 writes the table column by column; every named query's table on the sample, and the columns kg query
    leaves out, are byte for byte what the writer before it gave, at the widths kg query and kg serve use."""
    from kg.cli.query import _without_echoed
    from kg.sparql.results import _cells

    cases = [("top-concepts", {}), ("co-occurrence", {}), ("concept-tree", {}), ("trend", {}), ("proposed-methods", {}),
             ("papers-by-concept", {"concept": "reinforcement learning"}), ("papers-by-concept", {"concept": "machine learning"}),
             ("search", {"words": "learning"}), ("search", {"words": "e"}), ("bridging-papers", {"a": "RL", "b": "large language model"})]
    paper = kg.query("papers-by-concept", {"concept": "large language model"}, graph=sample_ttl).column("identifier")[0]
    cases += [("concepts-of-paper", {"paper": paper}), ("evidence", {"paper": paper, "concept": "large language model"}),
              ("similar-papers", {"paper": paper})]
    tables = 0
    for name, params in cases:
        results = kg.query(name, params, graph=sample_ttl)
        shown, echoed = _without_echoed(results, set(params))
        old_shown, old_echoed = _old_without_echoed(results, set(params))
        assert (shown, echoed) == (old_shown, old_echoed), name
        for width in (8, 60, 200):
            assert shown.table(width) == _old_table(shown, width), (name, width)
            assert [list(row) for row in _cells(results, width)] == _old_cells(results, width), (name, width)
        tables += len(results) > 0
    assert tables >= 10


def test_the_table_is_the_old_writers_on_odd_cells() -> None:
    """Unbound cells, blank nodes, IRIs that are a namespace or sit in overlapping ones, text that ends in white space
    or holds line breaks, repeated and unique columns, no rows and no columns: the same bytes as the old writer."""
    import random

    from kg.cli.query import _without_echoed
    from kg.graph.vocabulary import compact
    from kg.sparql.results import Results, Term, _cells

    base = "https://w3id.org/kg/"
    iris = [base + "paper/p1", base + "paper/", base + "paper/x y", base + "concept/a", base + "ontology#score", base,
            base + "ontology#", base + "conceptual", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "https://example.org/x",
            "http://www.w3.org/2004/02/skos/core#prefLabel", "urn:x", ""]
    texts = ["", " ", "plain", "trailing  ", "tab\t", "line\nbreak", "line end\n", "\u2028", "é" * 70, "x" * 61, "y" * 60,
             "<b>&amp;</b>", "\x1b[31mred\x1b[0m", "  lead", "mixed \u00a0"]
    pool = ([Term("uri", v) for v in iris] + [Term("bnode", v) for v in ("b0", "node 1")] + [Term("literal", v) for v in texts]
            + [Term("literal", "2024", "http://www.w3.org/2001/XMLSchema#integer"), Term("literal", "hi", None, "en"), None])
    assert all(compact(v) == _old_compact(v) for v in iris + texts)
    rnd = random.Random(38)
    for case in range(300):
        n_vars, n_rows = rnd.randint(0, 4), rnd.choice([0, 1, 2, 5, 30, 450])
        columns = []
        for _ in range(n_vars):
            kind = rnd.choice(["uri", "literal", "any", "one"])
            choices = [t for t in pool if kind == "any" or (t is not None and t.kind == kind)] if kind != "one" else [rnd.choice(pool)]
            repeated = rnd.random() < 0.5
            column = [rnd.choice(choices) if repeated or t is None else t._replace(value=t.value + str(i) * rnd.randint(0, 1))
                      for i, t in enumerate(rnd.choice(choices) for _ in range(n_rows))]
            columns.append(column)
        rows = tuple(zip(*columns)) if n_vars else tuple(() for _ in range(n_rows))
        r = Results("select", tuple(f"v{i}" for i in range(n_vars)), rows, truncated=rnd.random() < 0.1)
        for width in (1, 2, 10, 60):
            assert r.table(width) == _old_table(r, width), (case, width)
            assert [list(row) for row in _cells(r, width)] == _old_cells(r, width), (case, width)
        params = {f"v{i}" for i in range(n_vars) if rnd.random() < 0.7}
        assert _without_echoed(r, params) == _old_without_echoed(r, params), case


def test_iris_are_shortened_as_before_in_overlapping_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column of IRIs in one namespace is shortened in one go (issue #38): with a namespace tried before it that
    extends it, or one that it extends, every IRI still gets the prefix the loop over the prefixes gave it."""
    from kg.graph import vocabulary
    from kg.graph.vocabulary import compacted

    prefixes = (("deep", "http://x.org/a/b/"), ("a", "http://x.org/a/"), ("x", "http://x.org/"), ("ab", "http://x.org/a/bc"))
    monkeypatch.setattr(vocabulary, "_prefixes", lambda: prefixes)
    vocabulary._shortener.cache_clear()
    try:
        columns = [["http://x.org/a/1", "http://x.org/a/2"], ["http://x.org/a/1", "http://x.org/a/b/2"],
                   ["http://x.org/a/1", "http://x.org/a/"], ["http://x.org/a/b/1", "http://x.org/a/bcd"],
                   ["http://x.org/a/bcd", "http://x.org/a/bc"], ["http://x.org/q", "http://x.org/a/b"], ["http://y.org/", "http://x.org/a/1"],
                   ["http://x.org/a/b/", "http://x.org/a/b/c"], ["http://x.org/a/bc1", "http://x.org/a/bc2"]]
        for column in columns:
            assert compacted(column) == [_old_compact(iri) for iri in column], column
    finally:
        vocabulary._shortener.cache_clear()
