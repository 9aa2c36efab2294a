"""Graph views for analytics: a built graph as networkx graphs (paper–concept, concept co-occurrence).

One reading of the RDF (`kg.facts.read_facts`) feeds every view, so `analyze`, `report` and the
GraphML/GEXF exports see the same papers, concepts and links.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import UsageError
from .facts import Facts, read_facts

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

    facts = read_facts(graph)
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
