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
from typing import Any, Iterator

from . import progress, qbuild
from .atomic import atomic_write
from .facts import Facts, read_facts
from .graphio import format_for, read_triples, write
from .index import stamp_written
from .network import association
from .triples import agent_triples, build_time
from .vocabulary import DEFAULT_BASE, KG, PROV, RDF, RDFS, XSD, Namespaces

SEED = 42
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

    facts: Facts
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
    resolution: float = 1.0,
    related: int = 10,
    similar: int = 5,
    bridges: int = 20,
) -> Analysis:
    """Analyse a graph (path, triples or Built): nothing is written."""
    import networkx as nx

    progress.stage("facts")
    facts = read_facts(graph)
    by_concept = facts.papers_of()
    concepts = sorted(by_concept)
    index = {c: i for i, c in enumerate(concepts)}
    n = len(facts.papers)
    pairs = sorted(facts.pairs().items())
    progress.stage("centrality and communities")
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
    return Analysis(
        facts=facts,
        base=_base(facts),
        pagerank=pagerank,
        communities=tuple(tuple(m) for m in groups),
        related=_top_related(links, related),
        bridges=_bridges(facts, groups, bridges, seed),
        similar=_similar(facts, by_concept, similar),
    )


@progress.stepped("analysing {graph}")
def analyze(graph: Any, out: str | Path | None = None, **options: Any) -> Analysis:
    """Analyse a graph and, when `out` is given, write the graph plus the analysis there (atomically)."""
    triples = read_triples(graph) if isinstance(graph, (str, Path)) else list(graph.triples() if callable(getattr(graph, "triples", None)) else graph)
    result = compute(triples, **options)
    if out is not None:
        kept = [t for t in triples if not _from_analysis(t, result.base)]
        described = {t.subject.value for t in kept if t.predicate.value == RDF + "type" and t.object.value == PROV + "SoftwareAgent"}
        # The kg agent that built the graph is described once, not again by the analysis.
        added = [t for t in result.triples() if t.subject.value not in described]
        with atomic_write(out) as stream:
            write([*kept, *added], stream, format_for(None, out), ns=Namespaces(result.base))
            stamped = stamp_written(stream, out)
        progress.stage("indexing for the named queries")
        qbuild.write(out, [*kept, *added], stamped)  # the query index, from the triples in hand
    return result


def _from_analysis(triple: Any, base: str) -> bool:
    """True for the triples an earlier analysis added, so re-analysing replaces rather than piles up."""
    return triple.predicate.value in PREDICATES or triple.subject.value.startswith(tuple(base + f for f in FOLDERS))


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
    concept up to `budget` concepts, and from `budget` seeded sample concepts above that
    (one breadth-first search each), which keeps a 2,000-paper graph to about a second.
    """
    import random

    import networkx as nx

    progress.stage("bridging papers")
    number = {c: i for i, members in enumerate(groups, start=1) for c in members}
    spans = {p: tuple(sorted({number[c] for c in cs})) for p, cs in facts.concepts_of().items() if cs}
    candidates = [p for p, s in spans.items() if len(s) > 1]
    if not candidates or k <= 0:
        return ()
    concepts = sorted(number)
    nodes = sorted(facts.papers) + concepts
    index = {iri: i for i, iri in enumerate(nodes)}
    g = nx.Graph()
    g.add_edges_from((index[p], index[c]) for p, c in facts.subjects)  # papers about nothing lie on no path
    sources = concepts if len(concepts) <= budget else sorted(random.Random(seed).sample(concepts, budget))
    scores = dict.fromkeys(g, 0.0)
    pairs = 0
    for community in range(1, len(groups) + 1):
        starts = [index[c] for c in sources if number[c] == community]
        ends = [index[c] for c in concepts if number[c] != community]
        if starts and ends:
            pairs += len(starts) * len(ends)
            for node, value in nx.betweenness_centrality_subset(g, starts, ends, normalized=False).items():
                scores[node] += value
    # networkx halves undirected counts; doubling makes the score a plain share of source–target pairs
    share = {p: 2 * scores[index[p]] / pairs if pairs else 0.0 for p in candidates}
    ranked = sorted(candidates, key=lambda p: (-round(share[p], 9), p))[:k]
    return tuple(Bridge(p, round(share[p], 6), spans[p]) for p in ranked)


def _similar(facts: Facts, by_concept: dict[str, list[str]], k: int) -> tuple[Similar, ...]:
    """Each paper's k most similar papers: cosine of concept sets weighted by IDF (rare concepts count more).

    Computed as a sparse matrix product in blocks of rows, so memory stays bounded.
    """
    import numpy as np
    from scipy import sparse

    progress.stage("similar papers")
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
    binary = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=x.shape)
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    found: dict[tuple[str, str], Similar] = {}
    for start in range(0, len(papers), 1000):
        dots = (x[start : start + 1000] @ x.T).tocsr()
        counts = (binary[start : start + 1000] @ binary.T).tocsr()
        counts.sort_indices()
        for r in range(dots.shape[0]):
            row = start + r
            cols = dots.indices[dots.indptr[r] : dots.indptr[r + 1]]
            vals = dots.data[dots.indptr[r] : dots.indptr[r + 1]]
            keep = (cols != row) & (vals > 0)
            if not norms[row] or not keep.any():
                continue
            cols, sims = cols[keep], vals[keep] / (norms[row] * norms[cols[keep]])
            # best score first, ties by IRI (papers are sorted, so by index); rounding hides float noise
            for j, score in ((int(cols[i]), float(sims[i])) for i in np.lexsort((cols, -np.round(sims, 9)))[:k]):
                row_cols = counts.indices[counts.indptr[r] : counts.indptr[r + 1]]
                shared = int(counts.data[counts.indptr[r] + np.searchsorted(row_cols, j)])
                a, b = sorted((papers[row], papers[j]))
                found[(a, b)] = Similar(a, b, round(score, 4), shared)
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
