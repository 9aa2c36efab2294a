"""The query index (kg.sparql.index): every queries/NAME.sql gives its NAME.rq's rows in the same order, and the dispatch rule.

The .rq files are the specification; the engine (pyoxigraph) runs them on the same triples the index
is made from. Graphs are generated: papers with and without years, titles and subjects, shared and
odd labels (non-ASCII, letters whose lowercase Python and the engine disagree on), broader chains
with several parents and cycles, concepts with alt labels, proposed methods with their spans.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.graph import index_file, index_writer
from kg.graph.files import parse
from kg.graph.handle import GraphFile
from kg.graph.stamp import stamp
from kg.graph.vocabulary import DCTERMS, FABIO, KG, OA, RDF, RDFS, SKOS, XSD
from kg.pipeline.build import sample_inputs
from kg.sparql import engine
from kg.sparql import index as qindex
from kg.sparql.backends import Engine, Index
from kg.sparql.catalog import catalog, resolve
from kg.sparql.run import run_on

FIXTURES = Path(__file__).parent / "fixtures" / "answers"
BASE = "https://w3id.org/kg/"
# U+1C89 lowercases to U+1C8A in the engine, not in Python 3.11's str.lower (Unicode 16 against 14)
WORDS = ["learning", "Reinforcement", "graph", "ΣΊΣΥΦΟΣ", "İstanbul", "ǅemal", "naïve", "x", "", "\u1c89ab"]
LABELS = ["learning", "Learning", "graph learning", "naïve bayes", "ΣΊΣΥΦΟΣ", "İstanbul", "ǅemal", "a", "B", "zeta"]


def _n(kind: str, i: int | str) -> ox.NamedNode:
    return ox.NamedNode(f"{BASE}{kind}/{i}")


@st.composite
def graphs(draw: st.DrawFn, pref_labels: tuple[tuple[str, ...], ...] = (("en",),)) -> list[ox.Triple]:
    """A small graph shaped as kg builds them (each concept with a prefLabel in each language of one of `pref_labels`)."""
    t: list[ox.Triple] = []
    add = t.append
    n_concepts = draw(st.integers(2, 7))
    concepts = [_n("concept", i) for i in range(n_concepts)]
    for i, c in enumerate(concepts):
        add(ox.Triple(c, ox.NamedNode(RDF + "type"), ox.NamedNode(SKOS + "Concept")))
        for language in draw(st.sampled_from(pref_labels)):
            add(ox.Triple(c, ox.NamedNode(SKOS + "prefLabel"), ox.Literal(draw(st.sampled_from(LABELS)) + f" {i}" * draw(st.booleans()), language=language)))
        if draw(st.booleans()):
            add(ox.Triple(c, ox.NamedNode(SKOS + "altLabel"), ox.Literal(draw(st.sampled_from(LABELS)), language="en")))
        for parent in draw(st.lists(st.sampled_from(concepts), max_size=2, unique=True)):  # cycles and self-links allowed
            add(ox.Triple(c, ox.NamedNode(SKOS + "broader"), parent))
    for i in range(draw(st.integers(0, 8))):
        p = _n("paper", f"p{i}")
        add(ox.Triple(p, ox.NamedNode(RDF + "type"), ox.NamedNode(FABIO + "ResearchPaper")))
        add(ox.Triple(p, ox.NamedNode(DCTERMS + "identifier"), ox.Literal(f"id{draw(st.integers(0, 20))}-{i}")))
        label = draw(st.sampled_from(LABELS))
        add(ox.Triple(p, ox.NamedNode(RDFS + "label"), ox.Literal(label)))
        if draw(st.booleans()):
            add(ox.Triple(p, ox.NamedNode(DCTERMS + "title"), ox.Literal(label + " " + draw(st.sampled_from(WORDS)))))
        abstract = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
        add(ox.Triple(p, ox.NamedNode(DCTERMS + "abstract"), ox.Literal(abstract)))
        year = draw(st.sampled_from([None, "2019", "2023", "2024"]))
        if year is not None:
            add(ox.Triple(p, ox.NamedNode(FABIO + "hasPublicationYear"), ox.Literal(year, datatype=ox.NamedNode(XSD + "gYear"))))
        if draw(st.booleans()):  # a venue of three, two sharing a label (topics-by-venue groups by the venue, sorts by its label)
            venue = draw(st.integers(0, 2))
            add(ox.Triple(p, ox.NamedNode(DCTERMS + "isPartOf"), _n("venue", venue)))
            add(ox.Triple(_n("venue", venue), ox.NamedNode(RDFS + "label"), ox.Literal("ICML" if venue < 2 else "COLT")))
        subjects = draw(st.lists(st.sampled_from(concepts), max_size=3, unique=True))
        for c in subjects:
            add(ox.Triple(p, ox.NamedNode(DCTERMS + "subject"), c))
        for j in range(draw(st.integers(0, 2))):
            m, ann, target, quote = _n("method", draw(st.sampled_from(["qora", "Zeta", "alpha"]))), _n("ann", f"{i}-{j}"), _n("target", f"{i}-{j}"), _n("quote", f"{i}-{j}")
            add(ox.Triple(p, ox.NamedNode(KG + "proposes"), m))
            add(ox.Triple(m, ox.NamedNode(RDFS + "label"), ox.Literal(m.value.rsplit("/", 1)[1])))
            add(ox.Triple(ann, ox.NamedNode(OA + "hasBody"), m))
            add(ox.Triple(ann, ox.NamedNode(OA + "hasTarget"), target))
            add(ox.Triple(target, ox.NamedNode(OA + "hasSource"), p))
            add(ox.Triple(target, ox.NamedNode(OA + "hasSelector"), quote))
            add(ox.Triple(quote, ox.NamedNode(OA + "exact"), ox.Literal(draw(st.sampled_from(WORDS)) or "we")))
        mentioned = draw(st.lists(st.sampled_from(concepts), max_size=3)) + (draw(st.lists(st.sampled_from(subjects), max_size=3)) if subjects else [])
        for j, c in enumerate(mentioned):  # mentions (of subjects too, so most links are scored), with their spans
            ann, target, position, quote = (_n(k, f"{i}-m{j}") for k in ("ann", "target", "position", "quote"))
            start = draw(st.integers(0, 30))
            add(ox.Triple(ann, ox.NamedNode(OA + "hasBody"), c))
            add(ox.Triple(ann, ox.NamedNode(OA + "hasTarget"), target))
            add(ox.Triple(ann, ox.NamedNode(KG + "score"), ox.Literal(draw(st.sampled_from(["0.5", "0.118", "1.0", "0.1180", "1"])), datatype=ox.NamedNode(XSD + "decimal"))))
            add(ox.Triple(target, ox.NamedNode(OA + "hasSource"), p))
            add(ox.Triple(target, ox.NamedNode(OA + "hasSelector"), position))
            add(ox.Triple(target, ox.NamedNode(OA + "hasSelector"), quote))
            add(ox.Triple(position, ox.NamedNode(OA + "start"), ox.Literal(str(start), datatype=ox.NamedNode(XSD + "nonNegativeInteger"))))
            add(ox.Triple(position, ox.NamedNode(OA + "end"), ox.Literal(str(start + draw(st.integers(1, 12))), datatype=ox.NamedNode(XSD + "nonNegativeInteger"))))
            add(ox.Triple(quote, ox.NamedNode(OA + "exact"), ox.Literal(draw(st.sampled_from(LABELS)))))
            if draw(st.booleans()):
                add(ox.Triple(target, ox.NamedNode(KG + "onProperty"), ox.NamedNode(DCTERMS + "title")))
    papers = [x.subject for x in t if x.object.value == FABIO + "ResearchPaper"]
    t += _analysis(draw, concepts, papers)
    return t


def _analysis(draw: st.DrawFn, concepts: list[ox.NamedNode], papers: list[ox.NamedNode]) -> list[ox.Triple]:
    """What `kg analyze` adds: PageRank, communities, related concepts, similar papers."""
    t: list[ox.Triple] = []
    number = st.sampled_from(["0.25", "0.250", "0.125", "0.5", "-0.3", "1.0"])
    for c in draw(st.lists(st.sampled_from(concepts), unique=True)):
        t.append(ox.Triple(c, ox.NamedNode(KG + "pagerank"), ox.Literal(draw(number), datatype=ox.NamedNode(XSD + "decimal"))))
    for i in range(draw(st.integers(0, 2))):
        community, members = _n("community", i), draw(st.lists(st.sampled_from(concepts), min_size=1, unique=True))
        t += [ox.Triple(community, ox.NamedNode(RDF + "type"), ox.NamedNode(KG + "Community")),
              ox.Triple(community, ox.NamedNode(RDFS + "label"), ox.Literal(f"community {i}")),
              ox.Triple(community, ox.NamedNode(KG + "size"), ox.Literal(len(members)))]
        t += [ox.Triple(community, ox.NamedNode(KG + "member"), m) for m in members]
    for kind, things, p, weights in (("related", concepts, "concept", (KG + "weight", KG + "jaccard", KG + "pmi")),
                                     ("similar", papers, "paper", (KG + "sharedConcepts", KG + "cosine"))):
        for i in range(draw(st.integers(0, 3)) if len(things) > 1 else 0):
            link, (x, y) = _n(kind, i), draw(st.lists(st.sampled_from(things), min_size=2, max_size=2, unique=True))
            t += [ox.Triple(link, ox.NamedNode(RDF + "type"), ox.NamedNode(KG + ("Relatedness" if kind == "related" else "Similarity"))),
                  ox.Triple(link, ox.NamedNode(KG + p), x), ox.Triple(link, ox.NamedNode(KG + p), y)]
            for w in weights:
                value = ox.Literal(draw(st.integers(1, 4))) if w in (KG + "weight", KG + "sharedConcepts") else ox.Literal(draw(number), datatype=ox.NamedNode(XSD + "decimal"))
                t.append(ox.Triple(link, ox.NamedNode(w), value))
    return t


def _pair(triples: list[ox.Triple], tmp: Path) -> tuple[ox.Store, Path]:
    """The engine's store and the index of the same triples."""
    store = ox.Store()
    store.extend([ox.Quad(x.subject, x.predicate, x.object) for x in triples])
    graph = tmp / "g.nt"
    graph.write_bytes(ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"")
    index = index_writer.write(graph, triples, stamp(graph))
    assert index is not None and index_file.fresh(graph) == index
    return store, index


def _params(name: str, triples: list[ox.Triple]) -> list[dict[str, str]]:
    concepts = sorted({x.subject.value for x in triples if x.object.value == SKOS + "Concept"})
    papers = sorted({x.subject.value for x in triples if x.object.value == FABIO + "ResearchPaper"})
    q = resolve(name)
    names = [p.name for p in q.params]
    if names == ["concept"]:
        return [{"concept": c} for c in concepts] + ([{}] if not q.params[0].required else [])
    if names == ["a", "b"]:
        return [{"a": a, "b": b} for a in concepts[:3] for b in concepts[-3:]]
    if names == ["min"]:
        return [{}, {"min": "0"}, {"min": "2"}]
    if names == ["min", "nested"]:
        return [{}, {"min": "0"}, {"min": "2"}, {"nested": "1"}, {"min": "2", "nested": "1"}]
    if names == ["root"]:
        return [{}] + [{"root": c} for c in concepts[:3]]
    if names == ["words"]:
        return [{"words": w} for w in [*WORDS, "LEARNING", "ing gr", "σ", "naïve", "\u1c8aab"]]
    if names == ["paper"]:
        return [{"paper": p} for p in papers[:3]] + ([{}] if not q.params[0].required else [])
    if names == ["paper", "concept"]:
        return [{"paper": p, "concept": c} for p in papers[:3] for c in concepts[:3]]
    if names == ["concept", "min"]:
        return [{}, {"min": "2"}] + [{"concept": c} for c in concepts[:3]]
    assert names == [], names
    return [{}]


SQL_QUERIES = sorted(name for name, q in catalog().items() if qindex.answers(q))


def test_the_slow_queries_have_sql() -> None:
    assert {"papers-by-concept", "bridging-papers", "co-occurrence", "search", "top-concepts", "trend", "concept-tree",
            "proposed-methods"} <= set(SQL_QUERIES)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(graphs())
def test_every_sql_gives_its_rq_rows_in_order(tmp_path: Path, triples: list[ox.Triple]) -> None:
    store, index = _pair(triples, tmp_path)
    for name in SQL_QUERIES:
        q = resolve(name)
        for params in _params(name, triples):
            want = run_on(Engine(store), q, params)
            got = run_on(Index(index), q, params)
            assert (got.variables, got.rows) == (want.variables, want.rows), (name, params)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(graphs(pref_labels=(("en",), ("en",), ("en", "de"), ())))
def test_papers_by_concept_sql_holds_on_concepts_with_no_or_two_pref_labels(tmp_path: Path, triples: list[ox.Triple]) -> None:
    """papers-by-concept picks each paper's ?via among the subjects that have a prefLabel, and lists each of its labels."""
    store, index = _pair(triples, tmp_path)
    q = resolve("papers-by-concept")
    for params in _params("papers-by-concept", triples):
        want, got = run_on(Engine(store), q, params), run_on(Index(index), q, params)
        assert (got.variables, got.rows) == (want.variables, want.rows), params


def test_the_sample_gives_the_engine_rows(tmp_path: Path) -> None:
    graph = tmp_path / "sample.ttl"
    graph.write_bytes(gzip.decompress((FIXTURES / "sample-analyzed.ttl.gz").read_bytes()))
    triples = list(parse(graph))
    store, _ = _pair(triples, tmp_path)
    index = GraphFile(graph).index()
    assert index is not None
    labels = [r["label"] for r in kg.query("top-concepts", graph=graph)][:4]
    paper = next(iter(kg.query("papers-by-concept", {"concept": labels[0]}, graph=graph)))["identifier"]
    for name in SQL_QUERIES:
        cases = {"concept": [{"concept": c} for c in labels], "a": [{"a": labels[0], "b": labels[1]}], "words": [{"words": "learning"}],
                 "paper": [{"paper": paper, "concept": labels[0]}] if name == "evidence" else [{"paper": paper}]}
        first = resolve(name).params[0].name if resolve(name).params else ""
        for params in cases.get(first, [{}]):
            want, got = run_on(Engine(store), resolve(name), params), run_on(Index(index), resolve(name), params)
            assert got.rows == want.rows and len(got.rows) > 0, (name, params)


def test_a_wrong_order_is_caught(tmp_path: Path) -> None:
    """The comparison can fail: papers-by-concept with its years sorted the other way differs from the engine."""
    triples = [*_paper_triples("a", "2023", "zeta"), *_paper_triples("b", "2024", "alpha")]
    store, index = _pair(triples, tmp_path)
    q = resolve("papers-by-concept")
    right = run_on(Index(index), q, {"concept": BASE + "concept/0"})
    assert right.rows == run_on(Engine(store), q, {"concept": BASE + "concept/0"}).rows and len(right.rows) == 2
    import sqlite3

    shipped = (Path(kg.__file__).parent.parent / "queries" / "papers-by-concept.sql").read_text(encoding="utf-8")
    assert "ORDER BY listed.seq" in shipped
    sql = shipped.replace("ORDER BY listed.seq", "ORDER BY -listed.seq")  # the years (and all) the other way
    db = sqlite3.connect(index)
    rows = db.execute(sql, {"concept": BASE + "concept/0", "concept_term": -1}).fetchall()
    assert [r[1] for r in rows] != [db.execute("SELECT id FROM term WHERE value = ?", (r[1].value,)).fetchone()[0] for r in right.rows]


def _paper_triples(name: str, year: str, label: str) -> list[ox.Triple]:
    p, c = _n("paper", name), _n("concept", 0)
    return [
        ox.Triple(c, ox.NamedNode(RDF + "type"), ox.NamedNode(SKOS + "Concept")),
        ox.Triple(c, ox.NamedNode(SKOS + "prefLabel"), ox.Literal("c", language="en")),
        ox.Triple(p, ox.NamedNode(RDF + "type"), ox.NamedNode(FABIO + "ResearchPaper")),
        ox.Triple(p, ox.NamedNode(DCTERMS + "identifier"), ox.Literal(name)),
        ox.Triple(p, ox.NamedNode(RDFS + "label"), ox.Literal(label)),
        ox.Triple(p, ox.NamedNode(DCTERMS + "subject"), c),
        ox.Triple(p, ox.NamedNode(FABIO + "hasPublicationYear"), ox.Literal(year, datatype=ox.NamedNode(XSD + "gYear"))),
        ox.Triple(_n("ann", name), ox.NamedNode(OA + "hasBody"), c),  # the link's score: the same for both, so the years decide
        ox.Triple(_n("ann", name), ox.NamedNode(KG + "score"), ox.Literal("0.5", datatype=ox.NamedNode(XSD + "decimal"))),
        ox.Triple(_n("ann", name), ox.NamedNode(OA + "hasTarget"), _n("target", name)),
        ox.Triple(_n("target", name), ox.NamedNode(OA + "hasSource"), p),
    ]


RANKED = """@prefix ex: <https://example.org/> . @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix dcterms: <http://purl.org/dc/terms/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix fabio: <http://purl.org/spar/fabio/> . @prefix oa: <http://www.w3.org/ns/oa#> .
@prefix kg: <https://w3id.org/kg/ontology#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a a skos:Concept ; skos:prefLabel "alpha"@en .
ex:b a skos:Concept ; skos:prefLabel "beta"@en ; skos:broader ex:a .
ex:c a skos:Concept ; skos:prefLabel "gamma"@en ; skos:broader ex:b .
ex:d a skos:Concept ; skos:prefLabel "delta"@en ; skos:broader ex:a .
"""


def _ranked_paper(name: str, year: int, links: dict[str, str | None]) -> str:
    """A paper with its subject links, each with a scored annotation (None: a subject link with no annotation)."""
    text = f'ex:{name} a fabio:ResearchPaper ; dcterms:identifier "{name}" ; rdfs:label "{name}" ; fabio:hasPublicationYear "{year}"^^xsd:gYear .\n'
    for concept, score in links.items():
        text += f"ex:{name} dcterms:subject ex:{concept} .\n"
        if score is not None:
            text += f'ex:{name}-{concept} oa:hasBody ex:{concept} ; kg:score "{score}"^^xsd:decimal ; oa:hasTarget [ oa:hasSource ex:{name} ] .\n'
    return text


def test_papers_by_concept_lists_each_paper_once_by_its_best_score(tmp_path: Path) -> None:
    """One row per paper, best kg:score first; ?via is the subject that gave it, of equal scores the most specific
    (most concepts above it), then the first IRI; a subject link with no kg:score annotation (kg makes none) does not
    count, so a paper with only such links is not listed. Engine and index agree."""
    graph = tmp_path / "ranked.ttl"
    graph.write_text(RANKED + _ranked_paper("p1", 2023, {"b": "0.5", "c": "0.50"}) + _ranked_paper("p2", 2023, {"d": "0.9", "b": "0.3"})
                     + _ranked_paper("p3", 2024, {"a": None}) + _ranked_paper("p4", 2024, {"d": "0.5", "b": "0.5"}), encoding="utf-8")
    store, index = _pair(list(parse(graph)), tmp_path)
    q = resolve("papers-by-concept")
    want = {"https://example.org/a": [("p2", "0.9", "delta"), ("p4", "0.5", "beta"), ("p1", "0.5", "gamma")],
            "https://example.org/b": [("p4", "0.5", "beta"), ("p1", "0.5", "gamma"), ("p2", "0.3", "beta")]}
    for concept, rows in want.items():
        for answer in (run_on(Engine(store), q, {"concept": concept}), run_on(Index(index), q, {"concept": concept})):
            got = [tuple(t.value if t else None for t in (row[2], row[5], row[7])) for row in answer.rows]  # identifier, score, viaLabel
            assert got == rows, concept


def test_lowercase_is_the_engines() -> None:
    texts = ["ΣΊΣΥΦΟΣ ΟΔΟΣ", "İstanbul", "ǅemal", "ẞ", "Ａ", "abc", "", "\u1c89", "Ꟁ"]
    store = ox.Store()
    want = [next(iter(store.query(f"SELECT (LCASE({ox.Literal(t)}) AS ?l) {{}}")))[0].value for t in texts]
    assert index_file.lowercase(texts) == want


def test_build_writes_a_fresh_index_and_a_changed_graph_makes_it_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = kg.write(kg.build(), tmp_path / "g.ttl")
    index = index_file.fresh(graph)
    assert index == index_file.index_path(graph) and index.is_file()
    monkeypatch.setattr(engine, "run", _no_engine)
    rows = kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=graph).rows
    assert len(rows) > 3
    assert not (tmp_path / "g.oxigraph").exists()  # named queries with SQL need no store
    with graph.open("ab") as stream:
        stream.write(b"\n")
    assert index_file.fresh(graph) is None  # stale: never read
    assert kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=graph).rows == rows  # made again from the file
    assert index_file.fresh(graph) is not None


def _no_engine(*args: object, **kwargs: object) -> None:
    raise AssertionError("the engine ran a query that has SQL")


def test_an_update_adds_to_the_index(tmp_path: Path) -> None:
    parts = sorted(sample_inputs())
    graph = kg.write(kg.build(parts[:1]), tmp_path / "g.ttl")
    kg.update(graph, parts[1:])
    whole = kg.write(kg.build(parts), tmp_path / "whole.ttl")
    assert index_file.fresh(graph) is not None
    for name, params in (("top-concepts", {}), ("co-occurrence", {}), ("search", {"words": "learning"}), ("trend", {}),
                         ("papers-by-concept", {"concept": "machine learning"})):
        assert kg.query(name, params, graph=graph).rows == kg.query(name, params, graph=whole).rows, name


def test_a_users_file_with_a_shipped_name_runs_in_the_engine(tmp_path: Path) -> None:
    text = (Path(kg.__file__).parent.parent / "queries" / "top-concepts.rq").read_text(encoding="utf-8")
    mine = tmp_path / "top-concepts.rq"
    mine.write_text(text + "LIMIT 2\n", encoding="utf-8")
    assert not qindex.answers(resolve(str(mine)))
    assert qindex.answers(resolve("top-concepts"))


def test_an_index_that_fails_leaves_the_build_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index only saves time: a failure while making it writes the graph anyway, and the engine answers."""
    def boom(self: object, term: object) -> int:
        raise RuntimeError("no index today")

    monkeypatch.setattr(index_writer.Writer, "_tid", boom)
    graph = kg.write(kg.build(), tmp_path / "g.ttl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.ttl"]  # no index, no temporary file
    rows = kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=graph).rows
    monkeypatch.undo()
    assert GraphFile(graph).index() is not None
    assert kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=graph).rows == rows and len(rows) > 3


def _damage(index: Path) -> None:
    """Overwrite every page of a SQLite file but its schema and `meta` (so its stamp still reads) with garbage."""
    import sqlite3

    db = sqlite3.connect(index)
    try:
        kept = {n for name, n in db.execute("SELECT name, pageno FROM dbstat")
                if name in ("sqlite_schema", "sqlite_master", "meta", "sqlite_autoindex_meta_1")}
        size = db.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table")
    finally:
        db.close()
    data = bytearray(index.read_bytes())
    for page in range(len(data) // size):
        if page + 1 not in kept:
            data[page * size:(page + 1) * size] = b"\xa5" * size
    index.write_bytes(bytes(data))


@pytest.fixture
def damaged(mini_ttl: Path, tmp_path: Path) -> Path:
    """A copy of the mini graph whose query index is damaged while its stamp still matches."""
    import shutil

    graph = tmp_path / mini_ttl.name
    shutil.copy2(mini_ttl, graph)
    shutil.copy2(index_file.index_path(mini_ttl), index_file.index_path(graph))
    _damage(index_file.index_path(graph))
    assert index_file.fresh(graph) is not None  # the stamp matches: only reading it fails
    return graph


def test_a_damaged_index_whose_stamp_matches_is_made_again_and_the_query_answered(mini_ttl: Path, damaged: Path) -> None:
    """kg query on an index that cannot be read: a one-line warning, the index made again, the right rows (issue 30, L3)."""
    from click.testing import CliRunner

    from kg.cli import cli

    runner = CliRunner()
    expected = runner.invoke(cli, ["query", "top-concepts", "--graph", str(mini_ttl), "-f", "csv"]).stdout
    out = runner.invoke(cli, ["query", "top-concepts", "--graph", str(damaged), "-f", "csv"])
    assert out.exit_code == 0 and out.stdout == expected, out.output
    warnings = [line for line in out.stderr.splitlines() if line.startswith("kg: warning:")]
    assert warnings == [f"kg: warning: the query index {index_file.index_path(damaged)} cannot be read (database disk image is malformed); "
                        f"making it again from {damaged}"], out.stderr
    again = runner.invoke(cli, ["query", "top-concepts", "--graph", str(damaged), "-f", "csv"])
    assert again.exit_code == 0 and again.stdout == expected and "warning" not in again.stderr  # the index made again reads


def test_serve_and_update_pass_over_a_damaged_index(mini_ttl: Path, damaged: Path) -> None:
    """kg serve answers a named query from the store (it was a 503), and kg build --update reads the graph instead."""
    from click.testing import CliRunner

    from kg.cli import cli
    from kg.endpoint.app import make_app

    from .test_serve import call

    expected = kg.query("top-concepts", graph=mini_ttl).serialize("csv")
    app = make_app(damaged, workers=1, timeout=10.0)
    try:
        status, _, body = call(app, "GET", "/queries/top-concepts", query={"format": "csv"})
    finally:
        app.close()
    assert (status, body) == (200, expected)
    new = damaged.parent / "new.jsonl"
    new.write_text('{"id": "n1", "title": "Offline RL again", "abstract": "We study offline reinforcement learning."}\n', encoding="utf-8")
    out = CliRunner().invoke(cli, ["build", "--no-render", "--update", str(damaged), str(new), "--scheme",
                                   str(Path(__file__).parent / "fixtures" / "query" / "mini-scheme.ttl"), "--no-default-scheme"])
    assert out.exit_code == 0 and "1 papers added" in out.stdout, out.output
    assert "cannot be read (database disk image is malformed); reading" in out.stderr
    assert len(kg.query("papers-by-concept", {"concept": "offline reinforcement learning"}, graph=damaged)) == 2


def test_the_sql_path_stops_at_its_time_limit(sample_ttl: Path) -> None:
    """The query index's SQL gets a time limit like the engine's (SQLite's progress handler stops it), not only a
    thread that stops waiting for it (#28); within the limit the same query answers."""
    index = GraphFile(sample_ttl).index()
    assert index is not None
    q = resolve("co-occurrence")
    with pytest.raises(kg.QueryError, match=r"query 'co-occurrence' did not finish in 1e-09 s"):
        run_on(Index(index), q, {}, timeout=1e-9)
    assert len(run_on(Index(index), q, {}, timeout=60).rows) > 0
