"""Paper counts materialised into a query store, so the aggregate named queries read them instead of counting.

Counting over every `dcterms:subject` triple (rolled up through `skos:broader*`) took 5–78 s a
query at 100k papers in the persisted store; the same counts in Python, from a second parse of the
graph file, take about 20 s at 100k (5–10 s at 21k), once, when the store is built. They go into
the named graph `STATS_GRAPH` of the store (never into the graph file): per concept the papers
directly about it and the papers about it or a concept below it, per concept and year the same
roll-up, per pair of concepts the shared papers, and label ranks for sorting.

Each aggregate query `NAME.rq` that has a twin `_stats-NAME.rq` is answered from that graph when
the store has it (`kg.query.run_store` picks the twin); other engines (a remote endpoint, rdflib)
run the portable `NAME.rq`. The counts follow the portable queries' definitions exactly, which the
tests check row for row: COUNT(DISTINCT ?paper) over every resource with the property (not only
fabio:ResearchPaper), `skos:broader*` reflexive, pairs ordered by the string of their IRIs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Iterator

from .facts import closure
from .facts import pair_counts as facts_pair_counts
from .vocabulary import DCTERMS, FABIO, RDF, RDFS, SKOS, XSD

# The named graph of the counts: a kg IRI no graph file uses (stores only, never written out).
STATS_GRAPH = "https://w3id.org/kg/stats"
NS = STATS_GRAPH + "#"  # its terms (kgs: in the _stats-*.rq queries)
# Raised when the store's contents change (what is counted, how, compaction, the text index of
# kg.textindex, the tables of kg.tables), so that stores built before are rebuilt.
VERSION = 8


# dcterms:identifier is for the listing tables of kg.tables, built from the same reading.
PREDICATES = (DCTERMS + "subject", FABIO + "hasPublicationYear", SKOS + "broader", SKOS + "prefLabel", RDFS + "label", DCTERMS + "identifier")
STRINGS = (XSD + "string", RDF + "langString")


def read_terms(quads: Iterable) -> dict[str, dict]:  # predicate -> {subject: {objects}} as RDF terms, for PREDICATES
    from pyoxigraph import DefaultGraph

    wanted: dict[str, dict] = {p: defaultdict(set) for p in PREDICATES}
    for q in quads:
        bucket = wanted.get(q.predicate.value)
        if bucket is not None and isinstance(q.graph_name, DefaultGraph):  # queries read the default graph only
            bucket[q.subject].add(q.object)
    return wanted


def store_quads(store) -> Iterator:
    """The quads the counts need from a store's default graph (fast for an in-memory store only)."""
    import pyoxigraph as ox

    for predicate in PREDICATES:
        yield from store.quads_for_pattern(None, ox.NamedNode(predicate), None, ox.DefaultGraph())


def _count(facts: dict[str, dict]) -> tuple[Counter, Counter, Counter, Counter]:
    """(direct, total, per (concept, year), per (a, b) pair) paper counts."""
    subjects, years = facts[DCTERMS + "subject"], facts[FABIO + "hasPublicationYear"]
    up = closure(facts[SKOS + "broader"])
    direct: Counter = Counter()
    total: Counter = Counter()
    trend: Counter = Counter()
    for resource, concepts in subjects.items():
        direct.update(concepts)
        rolled = set().union(*(up(c) for c in concepts))
        total.update(rolled)
        for year in years.get(resource, ()):
            trend.update((c, year) for c in rolled)
    return direct, total, trend, pair_counts(subjects)


def pair_counts(subjects: dict) -> Counter:
    """Per pair (a, b) of subjects with STR(a) < STR(b), the number of resources about both (co-occurrence.rq)."""
    return facts_pair_counts(subjects.values(), key=lambda t: t.value)


def stats_quads(facts: dict[str, dict]) -> Iterator:
    """The counts of a graph as quads in `STATS_GRAPH`, on IRIs under it (no blank nodes).

    Besides the counts, every labelled resource gets an integer rank in the order of its label, which
    the twins sort by before the label itself: on disk, an ORDER BY on labels fetched every label
    string again for each comparison (co-occurrence: 4.7 s of 5.3 s at 21k papers).
    """
    import pyoxigraph as ox

    graph = ox.NamedNode(STATS_GRAPH)
    labels = facts[SKOS + "prefLabel"]
    direct, total, trend, pairs = _count(facts)
    p = {name: ox.NamedNode(NS + name) for name in
         ("papers", "totalPapers", "a", "b", "pairPapers", "concept", "year", "yearPapers", "yearRank", "labelRank", "prefLabelRank")}
    yield ox.Quad(graph, ox.NamedNode(RDF + "type"), ox.NamedNode(NS + "Statistics"), graph)
    for concept, n in total.items():
        yield ox.Quad(concept, p["totalPapers"], ox.Literal(n), graph)
    for concept, n in direct.items():
        yield ox.Quad(concept, p["papers"], ox.Literal(n), graph)
    # Listings sort by labels. Each labelled resource gets its place in that order as an integer, which
    # the twins sort by before the label itself. Papers (rdfs:label): equal ranks are equal strings and
    # fall through to the label. Concepts (skos:prefLabel): a rank stands for one concept, so only when
    # every concept has one string label and no two share it; otherwise every rank is 0 and the twins
    # sort by the labels as the portable queries do.
    paper_ranks = _label_ranks(facts[RDFS + "label"], distinct=False)
    concept_ranks = _label_ranks(labels, distinct=True)
    for predicate, ranks, names in ((p["labelRank"], paper_ranks, facts[RDFS + "label"]), (p["prefLabelRank"], concept_ranks, labels)):
        for resource in names:
            yield ox.Quad(resource, predicate, ox.Literal(ranks[resource] if ranks else 0), graph)
    for i, ((a, b), n) in enumerate(sorted(pairs.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value))):
        row = ox.NamedNode(f"{STATS_GRAPH}/co-occurrence/{i}")
        yield from (ox.Quad(row, p["a"], a, graph), ox.Quad(row, p["b"], b, graph), ox.Quad(row, p["pairPapers"], ox.Literal(n), graph))
    # trend.rq sorts by ?label ?concept ?year: with concept ranks, each row's place in that order.
    order = {cell: i + 1 for i, cell in enumerate(sorted(trend, key=lambda cy: (concept_ranks.get(cy[0], 0), cy[1].value)))} if concept_ranks else {}
    for i, ((c, y), n) in enumerate(sorted(trend.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value))):
        row = ox.NamedNode(f"{STATS_GRAPH}/trend/{i}")
        yield from (ox.Quad(row, p["concept"], c, graph), ox.Quad(row, p["year"], y, graph), ox.Quad(row, p["yearPapers"], ox.Literal(n), graph),
                    ox.Quad(row, p["yearRank"], ox.Literal(order.get((c, y), 0)), graph))


def _label_ranks(labels: dict, *, distinct: bool) -> dict | None:
    """Each resource's dense rank by its label's string (from 1), or None unless every resource has one
    string label (and, when `distinct`, no two resources share a label string)."""
    import pyoxigraph as ox

    def single(v: set) -> bool:
        return len(v) == 1 and isinstance(label := next(iter(v)), ox.Literal) and label.datatype.value in STRINGS

    if not all(single(v) for v in labels.values()):
        return None
    strings = {resource: next(iter(v)).value for resource, v in labels.items()}
    if distinct and len(set(strings.values())) != len(strings):
        return None
    place = {text: i + 1 for i, text in enumerate(sorted(set(strings.values())))}
    return {resource: place[text] for resource, text in strings.items()}


def add(store, counted: list | None = None) -> None:
    """Add the statistics graph to a store, replacing one there: `counted` (from `count_file`), else the store's own counts.

    A persisted store is counted from its graph file: the file parses faster than the subject
    triples read back out of RocksDB (58k quads took 4 s at 21k papers).
    """
    import pyoxigraph as ox

    graph = ox.NamedNode(STATS_GRAPH)
    if store.contains_named_graph(graph):
        store.remove_graph(graph)
    store.bulk_extend(counted if counted is not None else list(stats_quads(read_terms(store_quads(store)))))


def count_file(path: str, fmt) -> tuple[list, dict[str, dict]]:  # fmt: pyoxigraph.RdfFormat
    """The statistics quads of a graph file, counted from a parse of it, and the facts read for them."""
    import pyoxigraph as ox

    facts = read_terms(ox.parse(path=path, format=fmt))
    return list(stats_quads(facts)), facts


def has_stats(store) -> bool:
    """True when the store carries the statistics graph (built by this kg's `add`)."""
    import pyoxigraph as ox

    return store.contains_named_graph(ox.NamedNode(STATS_GRAPH))
