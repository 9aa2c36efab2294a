"""The `analyze` verb: centrality, communities, related concepts, bridging and similar papers, as RDF.

Every result becomes triples under the kg: properties declared in ontology/analysis.ttl, on
IRIs made from the graph's base (no blank nodes), so named queries can read them back.
Runs are deterministic: graphs are built in sorted order with integer node ids (whose
hashes, unlike strings', do not change between processes) and every random step is seeded.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from kg.core import progress
from kg.core.defaults import ANALYZE_RESOLUTION, ANALYZE_SEED
from kg.graph.facts import Facts, read_facts
from kg.graph.handle import Derive, GraphFile, Writing
from kg.graph.index_facts import analysis_facts, indexed
from kg.graph.vocabulary import DEFAULT_BASE, KG, PROV, RDF, RDFS, XSD, Namespaces
from kg.pipeline.triples import agent_triples, build_time
from kg.views.network import association, paths_through

SEED = ANALYZE_SEED
# Subjects and predicates that only `kg analyze` writes: dropped before a new analysis is added.
FOLDERS = ("analysis/", "community/", "relatedness/", "similarity/")
PREDICATES = frozenset(KG + p for p in ("pagerank", "betweenness", "bridges", "similarTo"))


@dataclass(frozen=True)
class Related:
    """Two concepts that share papers: the count, PMI and Jaccard of their paper sets."""

    a: str
    b: str
    weight: int
    pmi: float
    jaccard: float


@dataclass(frozen=True)
class Bridge:
    """A paper whose concepts lie in several communities, with its betweenness on the paper–concept graph."""

    paper: str
    betweenness: float
    communities: tuple[int, ...]


@dataclass(frozen=True)
class Similar:
    """Two papers about the same specific concepts: IDF-weighted cosine of their concept sets."""

    a: str
    b: str
    score: float
    shared: int


@dataclass(frozen=True)
class Analysis:
    """The results of analysing one graph."""

    facts: Facts  # what it read: from the query index (kg.graph.index_facts), only the fields the analysis reads
    base: str
    pagerank: dict[str, float]
    communities: tuple[tuple[str, ...], ...]  # numbered from 1; largest first, members by PageRank
    related: tuple[Related, ...]
    bridges: tuple[Bridge, ...]
    similar: tuple[Similar, ...]

    def summary(self) -> dict[str, int]:
        """Counts for people."""
        return {
            "concepts": len(self.pagerank),
            "communities": sum(1 for c in self.communities if len(c) > 1),
            "related": len(self.related),
            "bridges": len(self.bridges),
            "similar": len(self.similar),
        }

    def __repr__(self) -> str:
        """Counts and the largest communities, not every score (a large graph has thousands)."""
        s = self.summary()
        label = self.facts.concepts.get
        head = [f"  community {i}: {', '.join(label(c, c) for c in members[:4])}{', …' if len(members) > 4 else ''} ({len(members)})"
                for i, members in enumerate(self.communities[:3], start=1)]
        first = (f"<kg Analysis of {len(self.facts.papers):,} papers: {s['concepts']:,} concepts ranked, "
                 f"{s['communities']:,} communities, {s['related']:,} related pairs, {s['bridges']:,} bridging papers, "
                 f"{s['similar']:,} similar pairs>")
        return "\n".join([first, *head])

    def triples(self) -> Iterator:
        """The analysis as pyoxigraph triples, in a fixed order."""
        return _triples(self)


def compute(
    graph: Any,
    *,
    seed: int = SEED,
    resolution: float = ANALYZE_RESOLUTION,
    related: int = 10,
    similar: int = 5,
    bridges: int = 20,
) -> Analysis:
    """Analyse a graph (path, triples, Built or Facts): nothing is written. Each step is a stage of kg.core.progress.

    A graph file with a fresh query index is read from the index (decision 0059): the results are the same.
    """
    import networkx as nx

    facts = _facts(graph)
    by_concept = facts.papers_of()
    concepts = sorted(by_concept)
    index = {c: i for i, c in enumerate(concepts)}
    n = len(facts.papers)
    progress.stage(f"ranking and grouping {len(concepts):,} concepts of {n:,} papers")
    pairs = sorted(facts.pairs().items())
    g = nx.Graph()
    g.add_nodes_from(range(len(concepts)))
    g.add_weighted_edges_from((index[a], index[b], w) for (a, b), w in pairs)
    pagerank = {concepts[i]: round(v, 6) for i, v in sorted(nx.pagerank(g, weight="weight").items())} if concepts else {}
    found = nx.community.louvain_communities(g, weight="weight", resolution=resolution, seed=seed) if concepts else []
    groups = [sorted((concepts[i] for i in group), key=lambda c: (-pagerank[c], c)) for group in found]
    groups.sort(key=lambda m: (-len(m), -sum(pagerank[c] for c in m), m[0]))
    links = []
    for (a, b), w in pairs:
        pmi, jaccard = association(w, len(by_concept[a]), len(by_concept[b]), n)
        links.append(Related(a, b, w, round(pmi, 4), round(jaccard, 4)))
    progress.stage("finding bridging papers")
    bridging = _bridges(facts, groups, bridges, seed)
    progress.stage("finding similar papers")
    return Analysis(
        facts=facts,
        base=_base(facts),
        pagerank=pagerank,
        communities=tuple(tuple(m) for m in groups),
        related=_top_related(links, related),
        bridges=bridging,
        similar=_similar(facts, by_concept, similar),
    )


@progress.stepped("analysing {graph}")
def analyze(graph: Any, out: str | Path | None = None, *, derived: Sequence[Derive] = (), **options: Any) -> Analysis:
    """Analyse a graph and, when `out` is given, write the graph plus the analysis there (atomically; `derived`: what
    makes its page or store, then, in the same transaction).

    The write is one transaction on `out` (kg.graph.handle.GraphFile.transaction), begun before the graph is
    read: its lock is held from the read to the rename, so an update of the same graph waits for the analysis
    (and the analysis for an update), and nothing replaces a graph file that changed since it was read.
    A graph file is read once as a stream, to copy it out (never held as triples); the facts come from its query
    index, or where it has no fresh one from a second streamed read.
    """
    if out is None:
        return compute(graph, **options)
    target = GraphFile(Path(out))
    target.refuse_sharded()  # before the analysis, not after it
    if not isinstance(graph, (str, Path)):
        triples = _triples_of(graph)
        with target.transaction(derived=derived) as writing:
            result = compute(triples, **options)
            progress.stage(f"writing {out}")
            _write(lambda: iter(triples), writing, result, None)
        return result
    source = GraphFile(Path(graph))
    with target.transaction(source, doing="analysed", derived=derived) as writing:
        result = compute(graph, **options)
        progress.stage(f"writing {out} and its query index")
        facts = result.facts
        earlier = bool(facts.pagerank or facts.community) or any(b.startswith(result.base + "analysis/") for b in facts.builds)
        # No earlier analysis to drop: the graph's own fresh index is copied and only the analysis added to it.
        _write(source.parse, writing, result, None if earlier else source.fresh_index())
    return result


def _facts(graph: Any) -> Facts:
    """What the analysis reads: a graph file's from its fresh query index (kg.graph.index_facts), else from a parse."""
    if isinstance(graph, Facts):
        return graph
    if not isinstance(graph, (str, Path)):
        progress.stage("reading the graph")
        return read_facts(graph)
    facts = indexed(graph, analysis_facts)
    if facts is not None:
        return facts
    progress.stage(f"reading {graph}")
    return read_facts(graph)


def _triples_of(graph: Any) -> list:
    """The triples of a Built (or of any iterable of triples), as a list read twice."""
    return list(graph.triples() if callable(getattr(graph, "triples", None)) else graph)


def _write(source: Callable[[], Iterator], writing: Writing, result: Analysis, index: Path | None) -> None:
    """Write the triples of `source()` less any earlier analysis, then the analysis, and the query index of them all
    (`index`: a fresh index of exactly the source's triples, copied and added to)."""
    dropped = 0
    described = set()  # the kg agent that built the graph is described once, not again by the analysis

    def kept() -> Iterator:
        nonlocal dropped
        prefixes = tuple(result.base + f for f in FOLDERS)
        for t in source():
            if t.predicate.value in PREDICATES or t.subject.value.startswith(prefixes):
                dropped += 1
                continue
            if t.predicate.value == RDF + "type" and t.object.value == PROV + "SoftwareAgent":
                described.add(t.subject.value)
            yield t

    added = (t for t in result.triples() if t.subject.value not in described)
    # the copied index holds what was dropped: then none is written, and the next query makes a new one
    writing.write(kept(), added, ns=Namespaces(result.base), base=index, keep_base=lambda: not dropped)


def _base(facts: Facts) -> str:
    """The base IRI the graph was built with, read off its paper IRIs."""
    for paper in facts.papers:
        if "/paper/" in paper:
            return paper.rsplit("paper/", 1)[0]
    return DEFAULT_BASE


def _top_related(links: list[Related], k: int) -> tuple[Related, ...]:
    """The union of each concept's k most related concepts (by Jaccard, then shared papers)."""
    by_concept: dict[str, list[Related]] = {}
    for link in links:
        by_concept.setdefault(link.a, []).append(link)
        by_concept.setdefault(link.b, []).append(link)
    keep: set[tuple[str, str]] = set()
    for items in by_concept.values():
        items.sort(key=lambda r: (-r.jaccard, -r.weight, r.a, r.b))
        keep.update((r.a, r.b) for r in items[:k])
    return tuple(r for r in links if (r.a, r.b) in keep)


def _bridges(facts: Facts, groups: list[list[str]], k: int, seed: int, budget: int = 200) -> tuple[Bridge, ...]:
    """Papers whose concepts span communities, ranked by betweenness between communities.

    The score of a paper is the share of shortest paths in the paper–concept graph, from a
    concept to a concept of another community, that pass through it. Paths start from every
    concept up to `budget` concepts, and from `budget` seeded sample concepts above that.
    Brandes' accumulation (networkx's betweenness_centrality_subset), run for a batch of sources
    at once as sparse products level by level (kg.views.network.paths_through), so 100,000 papers take seconds.
    """
    import random

    number = {c: i for i, members in enumerate(groups, start=1) for c in members}
    spans = {p: tuple(sorted({number[c] for c in cs})) for p, cs in facts.concepts_of().items() if cs}
    candidates = [p for p, s in spans.items() if len(s) > 1]
    if not candidates or k <= 0:
        return ()
    concepts = sorted(number)
    sources = concepts if len(concepts) <= budget else sorted(random.Random(seed).sample(concepts, budget))
    through, pairs = paths_through(facts, concepts, [number[c] for c in concepts], sources)
    share = {p: through[p] / pairs if pairs else 0.0 for p in candidates}
    ranked = sorted(candidates, key=lambda p: (-round(share[p], 9), p))[:k]
    return tuple(Bridge(p, round(share[p], 6), spans[p]) for p in ranked)


def _similar(facts: Facts, by_concept: dict[str, list[str]], k: int) -> tuple[Similar, ...]:
    """Each paper's k most similar papers: cosine of concept sets weighted by IDF (rare concepts count more).

    Computed as a sparse matrix product in blocks of rows, so memory stays bounded.
    """
    import numpy as np
    from scipy import sparse

    n = len(facts.papers)
    papers = sorted({p for p, _ in facts.subjects})
    if k <= 0 or len(papers) < 2:
        return ()
    concepts = sorted(by_concept)
    p_index = {p: i for i, p in enumerate(papers)}
    c_index = {c: j for j, c in enumerate(concepts)}
    idf = np.array([math.log(n / len(by_concept[c])) for c in concepts])
    rows = [p_index[p] for p, _ in facts.subjects]
    cols = [c_index[c] for _, c in facts.subjects]
    x = sparse.csr_matrix((idf[cols], (rows, cols)), shape=(len(papers), len(concepts)))
    x.sort_indices()
    sets = [frozenset(x.indices[x.indptr[i] : x.indptr[i + 1]].tolist()) for i in range(len(papers))]
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    found: dict[tuple[str, str], Similar] = {}
    for start in range(0, len(papers), 1000):
        dots = (x[start : start + 1000] @ x.T).tocsr()
        for r in range(dots.shape[0]):
            row = start + r
            cols = dots.indices[dots.indptr[r] : dots.indptr[r + 1]]
            vals = dots.data[dots.indptr[r] : dots.indptr[r + 1]]
            keep = (cols != row) & (vals > 0)
            if not norms[row] or not keep.any():
                continue
            cols, sims = cols[keep], vals[keep] / (norms[row] * norms[cols[keep]])
            rounded = np.round(sims, 9)  # rounding hides float noise
            if len(rounded) > k:  # only the scores at or above the k-th best can be among the k best
                cut = rounded >= np.partition(rounded, len(rounded) - k)[len(rounded) - k]
                cols, sims, rounded = cols[cut], sims[cut], rounded[cut]
            # best score first, ties by IRI (papers are sorted, so by index)
            for j, score in ((int(cols[i]), float(sims[i])) for i in np.lexsort((cols, -rounded))[:k]):
                a, b = sorted((papers[row], papers[j]))
                found[(a, b)] = Similar(a, b, round(score, 4), len(sets[row] & sets[j]))
    return tuple(found[key] for key in sorted(found))


def _local(iri: str) -> str:
    # The last segment of an IRI is already IRI-safe; slugging it again would re-encode its '%'.
    return iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or "x"


def _pair_iri(folder: str, a: str, b: str, used: set[str]) -> str:
    """`{folder}<a>--<b>` from the IRIs' last segments; a hash suffix keeps clashing names apart."""
    iri = f"{folder}{_local(a)}--{_local(b)}"
    if iri in used:
        iri += "-" + hashlib.sha256(f"{a} {b}".encode()).hexdigest()[:8]
    used.add(iri)
    return iri


def _triples(result: Analysis) -> Iterator:
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a = N(RDF + "type")
    base, facts = result.base, result.facts

    def num(value: float, digits: int) -> Any:
        return L(f"{value:.{digits}f}", datatype=N(XSD + "decimal"))

    def integer(value: int) -> Any:
        return L(str(value), datatype=N(XSD + "integer"))

    run = N(base + "analysis/" + hashlib.sha256("\n".join(sorted(facts.papers)).encode()).hexdigest()[:16])
    yield T(run, a, N(PROV + "Activity"))
    yield T(run, a, N(KG + "Analysis"))
    yield T(run, N(RDFS + "label"), L(f"kg analysis of {len(facts.papers)} papers and {len(result.pagerank)} concepts"))
    # Like a build: when it ran (SOURCE_DATE_EPOCH for reproducible files) and which kg ran it (ontology/shapes.ttl).
    yield T(run, N(PROV + "startedAtTime"), L(build_time().isoformat(), datatype=N(XSD + "dateTime")))
    yield from agent_triples(run, base)
    for concept, score in sorted(result.pagerank.items()):
        yield T(N(concept), N(KG + "pagerank"), num(score, 6))
    for number, members in enumerate(result.communities, start=1):
        community = N(f"{base}community/{number}")
        yield T(community, a, N(KG + "Community"))
        head = ", ".join(facts.concepts.get(c, c) for c in members[:3])
        yield T(community, N(RDFS + "label"), L(f"community {number}: {head}" + (", …" if len(members) > 3 else "")))
        yield T(community, N(KG + "size"), integer(len(members)))
        yield T(community, N(PROV + "wasGeneratedBy"), run)
        for concept in sorted(members):
            yield T(community, N(KG + "member"), N(concept))
    used: set[str] = set()
    for r in result.related:
        node = N(_pair_iri(base + "relatedness/", r.a, r.b, used))
        yield T(node, a, N(KG + "Relatedness"))
        yield T(node, N(KG + "concept"), N(r.a))
        yield T(node, N(KG + "concept"), N(r.b))
        yield T(node, N(KG + "weight"), integer(r.weight))
        yield T(node, N(KG + "pmi"), num(r.pmi, 4))
        yield T(node, N(KG + "jaccard"), num(r.jaccard, 4))
    for bridge in result.bridges:
        paper = N(bridge.paper)
        yield T(paper, N(KG + "betweenness"), num(bridge.betweenness, 6))
        for number in bridge.communities:
            yield T(paper, N(KG + "bridges"), N(f"{base}community/{number}"))
    for s in result.similar:
        node = N(_pair_iri(base + "similarity/", s.a, s.b, used))
        yield T(N(s.a), N(KG + "similarTo"), N(s.b))
        yield T(N(s.b), N(KG + "similarTo"), N(s.a))
        yield T(node, a, N(KG + "Similarity"))
        yield T(node, N(KG + "paper"), N(s.a))
        yield T(node, N(KG + "paper"), N(s.b))
        yield T(node, N(KG + "cosine"), num(s.score, 4))
        yield T(node, N(KG + "sharedConcepts"), integer(s.shared))
