"""Paper counts materialised into a query store, so the aggregate named queries read them instead of counting.

Counting over every `dcterms:subject` triple (rolled up through `skos:broader*`) took 5–78 s at
100k papers in the persisted store; the same counts in Python over the subject triples take about
a second, once, when the store is built. They go into the named graph `STATS_GRAPH` of the store
(never into the graph file): per concept the papers directly about it and the papers about it or a
concept below it, per concept and year the same roll-up, per pair of concepts the shared papers.

Each aggregate query `NAME.rq` that has a twin `_stats-NAME.rq` is answered from that graph when
the store has it (`kg.query.run_store` picks the twin); other engines (a remote endpoint, rdflib)
run the portable `NAME.rq`. The counts follow the portable queries' definitions exactly, which the
tests check row for row: COUNT(DISTINCT ?paper) over every resource with the property (not only
fabio:ResearchPaper), `skos:broader*` reflexive, pairs ordered by the string of their IRIs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterator

from .rdf import DCTERMS, FABIO, KG, RDF, SKOS

# The named graph of the counts: a kg IRI no graph file uses (stores only, never written out).
STATS_GRAPH = "https://w3id.org/kg/stats"
# Raised when what is counted or how changes, so that stores built before are rebuilt.
VERSION = 1


def _subject_facts(store) -> tuple[dict, dict, dict]:  # ({resource: {subject}}, {resource: {year}}, {concept: {broader}})
    import pyoxigraph as ox

    default = ox.DefaultGraph()

    def pairs(predicate: str) -> Iterator[tuple]:
        for q in store.quads_for_pattern(None, ox.NamedNode(predicate), None, default):
            yield q.subject, q.object

    subjects: dict = defaultdict(set)
    for s, o in pairs(DCTERMS + "subject"):
        subjects[s].add(o)
    years: dict = defaultdict(set)
    for s, o in pairs(FABIO + "hasPublicationYear"):
        years[s].add(o)
    broader: dict = defaultdict(set)
    for s, o in pairs(SKOS + "broader"):
        broader[s].add(o)
    return subjects, years, broader


def _closure(broader: dict) -> dict:
    """`skos:broader*` from each term: itself and everything above it (cycles allowed)."""
    memo: dict = {}

    def up(term) -> frozenset:
        if term not in memo:
            seen, todo = {term}, [term]
            while todo:
                for parent in broader.get(todo.pop(), ()):
                    if parent not in seen:
                        seen.add(parent)
                        todo.append(parent)
            memo[term] = frozenset(seen)
        return memo[term]

    return up  # type: ignore[return-value]


def counts(store) -> tuple[Counter, Counter, Counter, Counter]:
    """(direct, total, per (concept, year), per (a, b) pair) paper counts from a store's default graph."""
    subjects, years, broader = _subject_facts(store)
    up = _closure(broader)
    direct: Counter = Counter()
    total: Counter = Counter()
    trend: Counter = Counter()
    pairs: Counter = Counter()
    for resource, concepts in subjects.items():
        direct.update(concepts)
        rolled = set().union(*(up(c) for c in concepts))
        total.update(rolled)
        for year in years.get(resource, ()):
            trend.update((c, year) for c in rolled)
        ordered = sorted(concepts, key=lambda t: t.value)
        pairs.update((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if a.value < b.value)
    return direct, total, trend, pairs


def quads(store) -> Iterator:
    """The counts of a store as quads in `STATS_GRAPH`, on IRIs under it (no blank nodes)."""
    import pyoxigraph as ox

    graph = ox.NamedNode(STATS_GRAPH)
    direct, total, trend, pairs = counts(store)
    p = {name: ox.NamedNode(KG + name) for name in ("papers", "totalPapers", "concept", "year", "conceptA", "conceptB")}
    kind = ox.NamedNode(RDF + "type")
    yield ox.Quad(graph, kind, ox.NamedNode(KG + "Statistics"), graph)
    for concept, n in total.items():
        yield ox.Quad(concept, p["totalPapers"], ox.Literal(n), graph)
    for concept, n in direct.items():
        yield ox.Quad(concept, p["papers"], ox.Literal(n), graph)
    for i, ((concept, year), n) in enumerate(sorted(trend.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value))):
        cell = ox.NamedNode(f"{STATS_GRAPH}/year/{i}")
        yield from (ox.Quad(cell, p["concept"], concept, graph), ox.Quad(cell, p["year"], year, graph),
                    ox.Quad(cell, p["papers"], ox.Literal(n), graph))
    for i, ((a, b), n) in enumerate(sorted(pairs.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value))):
        cell = ox.NamedNode(f"{STATS_GRAPH}/pair/{i}")
        yield from (ox.Quad(cell, p["conceptA"], a, graph), ox.Quad(cell, p["conceptB"], b, graph),
                    ox.Quad(cell, p["papers"], ox.Literal(n), graph))


def add(store) -> None:
    """Count and add the statistics graph to a store (replacing one already there)."""
    import pyoxigraph as ox

    graph = ox.NamedNode(STATS_GRAPH)
    if store.contains_named_graph(graph):
        store.remove_graph(graph)
    store.bulk_extend(list(quads(store)))  # counted in full before the first write


def has_stats(store) -> bool:
    """True when the store carries the statistics graph (built by this kg's `add`)."""
    import pyoxigraph as ox

    return store.contains_named_graph(ox.NamedNode(STATS_GRAPH))
