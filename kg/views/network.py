"""Graph views for analytics: a built graph as networkx graphs (paper–concept, concept co-occurrence).

One reading of the RDF (`kg.graph.facts.read_facts`, or the same facts from a graph file's query index:
`kg.graph.index_facts.read_shown`) feeds every view, so `analyze`, `report` and the GraphML/GEXF exports see the same
papers, concepts and links.
"""

from __future__ import annotations

import math
from typing import Any

from kg.core.errors import UsageError
from kg.graph.facts import Facts
from kg.graph.index_facts import read_shown

VIEWS = ("papers", "concepts")


def association(weight: int, na: int, nb: int, n: int) -> tuple[float, float]:
    """PMI (log2 of observed over expected co-occurrence) and Jaccard of two concepts' paper sets."""
    pmi = math.log2(weight * n / (na * nb)) if weight and na and nb and n else 0.0
    union = na + nb - weight
    return pmi, (weight / union if union else 0.0)


def to_networkx(graph: Any, view: str = "papers"):  # -> networkx.Graph
    """A networkx view of a graph: "papers" (paper–concept bipartite) or "concepts" (co-occurrence).

    Nodes are IRIs with `kind`, `label` and counts as attributes; papers-view edges carry the
    salience `score` and `mentions`, concepts-view edges the shared-paper `weight`, `pmi` and `jaccard`.
    Attributes never hold None, so every view can be written as GraphML or GEXF.
    """
    if view not in VIEWS:
        raise UsageError(f"unknown graph view {view!r} (available: {', '.join(VIEWS)})")
    import networkx as nx

    facts = read_shown(graph)
    by_concept = facts.papers_of()
    g = nx.Graph(view=view, papers=len(facts.papers))
    if view == "papers":
        for paper, label in sorted(facts.papers.items()):
            g.add_node(paper, **_paper_attrs(facts, paper, label))
    for concept in sorted(by_concept):
        g.add_node(concept, **_concept_attrs(facts, concept, len(by_concept[concept])))
    if view == "papers":
        for paper, concept in facts.subjects:
            key = (paper, concept)
            g.add_edge(paper, concept, score=round(facts.scores.get(key, 0.0), 3), mentions=facts.mentions.get(key, 0))
        return g
    n = len(facts.papers)
    for (a, b), weight in sorted(facts.pairs().items()):
        pmi, jaccard = association(weight, len(by_concept[a]), len(by_concept[b]), n)
        g.add_edge(a, b, weight=weight, pmi=round(pmi, 4), jaccard=round(jaccard, 4))
    return g


def _paper_attrs(facts: Facts, paper: str, label: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {"kind": "paper", "label": label, "bipartite": 0}
    if paper in facts.years:
        attrs["year"] = facts.years[paper]
    return attrs


def _concept_attrs(facts: Facts, concept: str, papers: int) -> dict[str, Any]:
    area = facts.area(concept)
    attrs: dict[str, Any] = {"kind": "concept", "label": facts.concepts.get(concept, concept), "bipartite": 1}
    attrs.update(papers=papers, area=facts.label(area))
    if concept in facts.pagerank:
        attrs["pagerank"] = facts.pagerank[concept]
    if concept in facts.community:
        attrs["community"] = facts.community[concept]
    return attrs


def paths_through(facts: Facts, concepts: list[str], community: list[int], sources: list[str], batch: int = 64) -> tuple[dict[str, float], int]:
    """Per paper, the shortest paths from each source concept to every concept of another community that pass
    through it (each path weighted 1 / the number of shortest paths of its pair), and the number of pairs.

    The graph is bipartite (papers, concepts), so breadth-first search alternates B @ x (concepts to papers) and
    B.T @ x (papers to concepts), for `batch` sources as the columns of dense arrays: path counts forward,
    dependencies backward, as in Brandes' algorithm. Path counts are integers (exact in floats).
    """
    import numpy as np
    from scipy import sparse

    papers = sorted({p for p, _ in facts.subjects})
    if not papers or not sources:
        return {}, 0
    p_index = {p: i for i, p in enumerate(papers)}
    c_index = {c: j for j, c in enumerate(concepts)}
    rows = np.fromiter((p_index[p] for p, _ in facts.subjects), dtype=np.int64, count=len(facts.subjects))
    cols = np.fromiter((c_index[c] for _, c in facts.subjects), dtype=np.int64, count=len(facts.subjects))
    b = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(papers), len(concepts)))
    b.data[:] = 1.0  # a repeated link is one edge
    bt = b.T.tocsr()
    number = np.asarray(community)
    total = np.zeros(len(papers))
    pairs = 0
    for start in range(0, len(sources), batch):
        chosen = np.array([c_index[c] for c in sources[start : start + batch]])
        width = len(chosen)
        columns = np.arange(width)
        targets = number[:, None] != number[chosen][None, :]  # concept x source: in another community
        pairs += int(targets.sum())
        sigma_c = np.zeros((len(concepts), width))
        sigma_c[chosen, columns] = 1.0
        seen_c, seen_p = sigma_c > 0, np.zeros((len(papers), width), dtype=bool)
        sigma_p = np.zeros((len(papers), width))
        levels: list[tuple[bool, np.ndarray]] = [(False, seen_c.copy())]  # (a paper level?, its nodes)
        front = sigma_c.copy()
        while True:  # forward: concepts -> papers -> concepts …, counting shortest paths
            step = np.asarray(b @ front)
            step[seen_p] = 0.0
            reached = step > 0
            if not reached.any():
                break
            seen_p |= reached
            sigma_p += step
            levels.append((True, reached))
            step = np.asarray(bt @ step)
            step[seen_c] = 0.0
            reached = step > 0
            if not reached.any():
                break
            seen_c |= reached
            sigma_c += step
            levels.append((False, reached))
            front = step
        delta_c, delta_p = np.zeros_like(sigma_c), np.zeros_like(sigma_p)
        for (is_paper, nodes), (_, below) in zip(levels[:0:-1], levels[-2::-1]):  # backward: dependencies
            if is_paper:  # papers are no targets; their concepts one level up gain σ_c / σ_p (δ_p)
                coeff = np.where(nodes, delta_p / np.where(nodes, sigma_p, 1.0), 0.0)
                delta_c += np.where(below, sigma_c * np.asarray(bt @ coeff), 0.0)
            else:
                coeff = np.where(nodes, (targets + delta_c) / np.where(nodes, sigma_c, 1.0), 0.0)
                delta_p += np.where(below, sigma_p * np.asarray(b @ coeff), 0.0)
        total += delta_p.sum(axis=1)
    return dict(zip(papers, total.tolist())), pairs
