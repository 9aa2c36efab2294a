"""kg.stats: counts materialised in the query store answer the aggregate queries with the portable queries' rows."""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path

import pytest

import kg
from kg.engine import bound as _bound
from kg.engine import execute as _execute
from kg.engine import fast_text as _fast_text
from kg.query import bind, catalog, resolve, run_store
from kg.stats import STATS_GRAPH, has_stats
from kg.store import STAMP, ensure_store, open_store
from kg.vocabulary import DCTERMS, FABIO, KG, OA, RDF, RDFS, SKOS, XSD

KGC = "https://w3id.org/kg/concept/"
# Shipped queries with a local-store twin: `_stats-NAME.rq` (reads the counts) or `_oxigraph-NAME.rq` (reshaped).
TWINS = sorted({p.stem.split("-", 1)[1] for pattern in ("_stats-*.rq", "_oxigraph-*.rq")
                for p in (Path(kg.__file__).parent.parent / "queries").glob(pattern)})


def _tricky_graph(path: Path, seed: int = 7, papers: int = 80, labels: str = "unique") -> Path:
    """Poly-hierarchy, a broader cycle, a subject outside the scheme, papers with 0–2 years, papers sharing a
    label; concept labels `unique`, `shared` (two concepts, one label) or `two` (a concept and a paper with two)."""
    import pyoxigraph as ox

    rnd = random.Random(seed)
    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a, broader, label = N(RDF + "type"), N(SKOS + "broader"), N(SKOS + "prefLabel")
    concepts = [N(f"{KGC}c{i}") for i in range(12)]
    out = []
    for i, c in enumerate(concepts):
        out += [T(c, a, N(SKOS + "Concept")), T(c, label, L(f"concept {min(i, 10) if labels == 'shared' else i}", language="en"))]
        if i:
            out.append(T(c, broader, concepts[(i - 1) // 2]))
    out += [T(concepts[9], broader, concepts[2]),  # a second parent
            T(concepts[0], broader, concepts[11])]  # a cycle through the top
    if labels == "two":
        out.append(T(concepts[3], label, L("concept three", language="de")))  # a second prefLabel
    outside = N(f"{KGC}not-in-the-scheme")
    for j in range(papers):
        p = N(f"https://w3id.org/kg/paper/p{j:03d}")
        out += [T(p, a, N(FABIO + "ResearchPaper")), T(p, N(DCTERMS + "identifier"), L(f"p{j:03d}")),
                T(p, N(RDFS + "label"), L(f"Paper {rnd.randint(0, papers // 2)}"))]
        if j % 9 == 0:  # a proposed method, with its annotation (names repeat: ties in the sort)
            m, ann, target, quote = (N(f"https://w3id.org/kg/{kind}/p{j}") for kind in ("method", "annotation", "target", "quote"))
            out += [T(p, N(KG + "proposes"), m), T(m, N(RDFS + "label"), L(f"Method{j % 4}")), T(ann, N(OA + "hasBody"), m),
                    T(ann, N(OA + "hasTarget"), target), T(target, N(OA + "hasSource"), p), T(target, N(OA + "hasSelector"), quote),
                    T(quote, N(OA + "exact"), L(f"Method{j % 4}"))]
        if labels == "two" and j == 5:
            out.append(T(p, N(RDFS + "label"), L("A second label")))
        for year in rnd.sample(["2021", "2022", "2023"], rnd.choice([0, 1, 1, 1, 2])):
            out.append(T(p, N(FABIO + "hasPublicationYear"), L(year, datatype=N(XSD + "gYear"))))
        for c in rnd.sample(concepts + [outside], rnd.randint(0, 4)):
            out.append(T(p, N(DCTERMS + "subject"), c))
    out.append(T(N("https://w3id.org/kg/method/m1"), N(DCTERMS + "subject"), concepts[4]))  # not a paper
    with path.open("wb") as stream:
        ox.serialize(out, stream, format=ox.RdfFormat.TURTLE)
    return path


def _portable(store, name: str, params: dict) -> list:
    """The rows of the shipped NAME.rq itself, counted by the engine."""
    q = resolve(name)
    terms = bind(q, params, lambda text, t: _execute(store, _bound(text, t), None, name))
    return list(_execute(store, _bound(q.text, terms), None, name).rows)


def _cases(store) -> list[tuple[str, dict]]:
    top = [r["concept"] for r in run_store(store, resolve("top-concepts"))]
    needs = {"papers-by-concept": {"concept": top[0]}, "bridging-papers": {"a": top[0], "b": top[1]}}
    return [(name, needs.get(name, {})) for name in TWINS] + [
        ("trend", {"concept": top[0]}),
        ("co-occurrence", {"min": "2"}),
        ("concept-tree", {"root": top[0]}),
    ]


def test_the_aggregates_have_stats_twins() -> None:
    assert {"top-concepts", "trend", "co-occurrence", "concept-tree", "papers-by-concept"} <= set(TWINS) <= set(catalog())


@pytest.mark.parametrize("which", ["sample", "tricky", "tricky-memory", "tricky-shared", "tricky-two"])
def test_twins_give_the_portable_rows_in_order(which: str, sample_ttl: Path, tmp_path: Path) -> None:
    graph = sample_ttl if which == "sample" else _tricky_graph(tmp_path / "tricky.ttl", labels=which.split("-")[-1] if which.count("-") and "memory" not in which else "unique")
    store = open_store(graph, memory=which.endswith("memory"))
    assert has_stats(store)
    for name, params in _cases(store):
        q = resolve(name)
        assert _fast_text(store, q) != q.text, name  # the twin really runs
        ours = list(run_store(store, q, params).rows)
        assert ours == _portable(store, name, params), (which, name, params)
        assert ours or name == "co-occurrence", name  # not vacuous


def test_counts_are_the_python_counts(mini_ttl: Path) -> None:
    """Independent of both queries: papers per concept rolled up, from the triples in Python."""
    from kg.graphio import read_triples

    triples = read_triples(mini_ttl)
    parents: dict[str, set[str]] = {}
    about: dict[str, set[str]] = {}
    for t in triples:
        if t.predicate.value == SKOS + "broader":
            parents.setdefault(t.subject.value, set()).add(t.object.value)
        if t.predicate.value == DCTERMS + "subject":
            about.setdefault(t.subject.value, set()).add(t.object.value)

    def up(c: str) -> set[str]:
        return {c}.union(*(up(p) for p in parents.get(c, ())))

    total: dict[str, int] = {}
    for concepts in about.values():
        for c in set().union(*(up(c) for c in concepts)):
            total[c] = total.get(c, 0) + 1
    rows = kg.query("top-concepts", graph=mini_ttl)
    assert {r["concept"]: r["total"] for r in rows} == total


def test_a_user_file_named_like_a_shipped_query_runs_as_written(mini_ttl: Path, tmp_path: Path) -> None:
    mine = tmp_path / "top-concepts.rq"
    mine.write_text("SELECT ?concept WHERE { ?concept a <http://www.w3.org/2004/02/skos/core#Concept> } ORDER BY ?concept\n")
    rows = kg.query(mine, graph=mini_ttl)
    assert rows.variables == ("concept",) and len(rows) == 6


def test_stats_are_recounted_when_the_graph_changes(mini_ttl: Path, tmp_path: Path) -> None:
    graph = tmp_path / "g.ttl"
    shutil.copy(mini_ttl, graph)
    before = {r["label"]: r["total"] for r in kg.query("top-concepts", graph=graph)}
    # One more paper about offline RL: it counts for offline RL, RL and ML.
    extra = (f"\n<https://w3id.org/kg/paper/extra> <{DCTERMS}subject> <{KGC}offline-reinforcement-learning> .\n")
    time.sleep(0.01)
    graph.write_text(graph.read_text() + extra)
    after = {r["label"]: r["total"] for r in kg.query("top-concepts", graph=graph)}
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed == {"offline reinforcement learning", "reinforcement learning", "machine learning"}
    assert all(after[k] == before[k] + 1 for k in changed)


def test_a_store_built_without_stats_is_rebuilt(mini_ttl: Path, tmp_path: Path) -> None:
    graph = tmp_path / "g.ttl"
    shutil.copy(mini_ttl, graph)
    stamp = ensure_store(graph) / STAMP
    old = json.loads(stamp.read_text())
    del old["stats"]  # what a store of an earlier kg has
    stamp.write_text(json.dumps(old))
    assert json.loads((ensure_store(graph) / STAMP).read_text())["stats"] and has_stats(open_store(graph))


def test_the_stats_graph_stays_out_of_the_default_graph(mini_ttl: Path) -> None:
    """Ad-hoc queries see the graph file's triples only; the counts live in their own named graph."""
    n = len(kg.graphio.read_triples(mini_ttl))
    assert kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", graph=mini_ttl).column("n") == [n]
    graphs = kg.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", graph=mini_ttl).column("g")
    assert graphs == [STATS_GRAPH]


def test_a_broken_graph_file_is_one_error_and_leaves_no_store(tmp_path: Path) -> None:
    graph = tmp_path / "broken.ttl"
    graph.write_text("<https://example.org/a> <https://example.org/b> .\n")  # no object
    with pytest.raises(kg.InputError, match="broken.ttl: not valid RDF"):
        kg.query("top-concepts", graph=graph)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.ttl"]
