"""Graph views for analytics: a built graph as networkx graphs (paper–concept, concept co-occurrence).

One reading of the RDF (`read_facts`) feeds every view, so `analyze`, `report` and the
GraphML/GEXF exports see the same papers, concepts and links.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable

from .errors import UsageError
from .graphio import read_triples
from .vocabulary import DCTERMS, FABIO, KG, OA, RDF, RDFS, SKOS

VIEWS = ("papers", "concepts")


@dataclass(frozen=True)
class Facts:
    """What the analytics need from a graph: papers, concepts, subject links, and any earlier analysis."""

    papers: dict[str, str]  # paper IRI -> label, in graph order
    years: dict[str, int]  # paper IRI -> publication year
    concepts: dict[str, str]  # concept IRI -> English prefLabel, every concept described in the graph
    broader: dict[str, tuple[str, ...]]  # concept IRI -> its skos:broader concepts
    subjects: tuple[tuple[str, str], ...]  # sorted (paper, concept) dcterms:subject links
    scores: dict[tuple[str, str], float] = field(default_factory=dict)  # (paper, concept) -> salience
    mentions: dict[tuple[str, str], int] = field(default_factory=dict)  # (paper, concept) -> mentions
    pagerank: dict[str, float] = field(default_factory=dict)  # from an earlier `kg analyze`
    community: dict[str, int] = field(default_factory=dict)  # concept IRI -> community number

    def label(self, iri: str) -> str:
        """The label of a paper or concept, or the IRI's last segment when it has none."""
        return self.papers.get(iri) or self.concepts.get(iri) or iri.rstrip("/#").rsplit("/", 1)[-1]

    def papers_of(self) -> dict[str, list[str]]:
        """Concept IRI -> its papers (sorted), for the concepts used as a subject."""
        out: dict[str, list[str]] = {}
        for paper, concept in self.subjects:
            out.setdefault(concept, []).append(paper)
        return {c: sorted(ps) for c, ps in sorted(out.items())}

    def concepts_of(self) -> dict[str, list[str]]:
        """Paper IRI -> its subject concepts (sorted), for every paper."""
        out: dict[str, list[str]] = {p: [] for p in self.papers}
        for paper, concept in self.subjects:
            out.setdefault(paper, []).append(concept)
        return out

    def roots(self, iri: str) -> tuple[str, ...]:
        """The top-level areas of a concept: the ancestors via skos:broader* that have no broader."""
        seen, todo, roots = {iri}, [iri], set()
        while todo:
            node = todo.pop()
            parents = [p for p in self.broader.get(node, ()) if p != node]
            if not parents:
                roots.add(node)
            for parent in parents:
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return tuple(sorted(roots, key=lambda r: (self.label(r), r))) or (iri,)

    def area(self, iri: str) -> str:
        """One top-level area of a concept (the first by label), for colouring."""
        return self.roots(iri)[0]


def read_facts(graph: Any) -> Facts:
    """Read a graph (a Facts, a Built, a path to an RDF file, or pyoxigraph triples) into Facts."""
    if isinstance(graph, Facts):
        return graph
    if isinstance(graph, (str, Path)):
        triples: Iterable = read_triples(graph)
    elif callable(getattr(graph, "triples", None)):
        triples = graph.triples()  # a kg.Built
    else:
        triples = graph
    return _facts(triples)


def _facts(triples: Iterable) -> Facts:
    papers: dict[str, str] = {}
    labels: dict[str, str] = {}
    years: dict[str, int] = {}
    pref: dict[str, str] = {}
    broader: dict[str, list[str]] = {}
    subjects: set[tuple[str, str]] = set()
    body: dict[str, str] = {}
    target: dict[str, str] = {}
    source: dict[str, str] = {}
    ann_score: dict[str, float] = {}
    pagerank: dict[str, float] = {}
    members: list[tuple[str, str]] = []
    concept_type = SKOS + "Concept"
    for t in triples:
        s, p, o = t.subject.value, t.predicate.value, t.object
        if p == RDF + "type":
            if o.value == FABIO + "ResearchPaper":
                papers.setdefault(s, "")
            elif o.value == concept_type:
                pref.setdefault(s, "")
        elif p == RDFS + "label":
            labels.setdefault(s, o.value)
        elif p == SKOS + "prefLabel":
            language = getattr(o, "language", None)
            if not pref.get(s) and (language is None or str(language).startswith("en")):
                pref[s] = o.value
        elif p == SKOS + "broader":
            broader.setdefault(s, []).append(o.value)
        elif p == DCTERMS + "subject":
            subjects.add((s, o.value))
        elif p == FABIO + "hasPublicationYear":
            try:
                years[s] = int(o.value[:4])
            except ValueError:
                pass  # a malformed year is left out of the trends, not fatal
        elif p == OA + "hasBody":
            body[s] = o.value
        elif p == OA + "hasTarget":
            target[s] = o.value
        elif p == OA + "hasSource":
            source[s] = o.value
        elif p == KG + "score":
            ann_score[s] = float(o.value)
        elif p == KG + "pagerank":
            pagerank[s] = float(o.value)
        elif p == KG + "member":
            members.append((s, o.value))
    scores: dict[tuple[str, str], float] = {}
    mentions: Counter[tuple[str, str]] = Counter()
    for ann, concept in body.items():
        paper = source.get(target.get(ann, ""))
        if paper is not None:
            key = (paper, concept)
            mentions[key] += 1
            scores[key] = max(scores.get(key, 0.0), ann_score.get(ann, 0.0))
    for paper, _ in subjects:
        papers.setdefault(paper, "")
    for _, concept in subjects:
        pref.setdefault(concept, "")
    community = {c: _community_number(s) for s, c in sorted(members)}
    return Facts(
        papers={p: labels.get(p, "") or p.rsplit("/", 1)[-1] for p in papers},
        years={p: y for p, y in years.items() if p in papers},
        concepts={c: label or labels.get(c, "") or c.rstrip("/#").rsplit("/", 1)[-1] for c, label in pref.items()},
        broader={c: tuple(sorted(set(bs))) for c, bs in broader.items()},
        subjects=tuple(sorted(subjects)),
        scores=scores,
        mentions=dict(mentions),
        pagerank=pagerank,
        community=community,
    )


def _community_number(iri: str) -> int:
    tail = iri.rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def cooccurrence(facts: Facts) -> Counter[tuple[str, str]]:
    """Concept pair (a < b) -> number of papers about both, counted paper by paper.

    A Counter over each paper's concept pairs gives the weighted projection of the
    bipartite graph in a fraction of the time of networkx's projection (MEASURED.md).
    """
    pairs: Counter[tuple[str, str]] = Counter()
    for concepts in facts.concepts_of().values():
        pairs.update(combinations(sorted(set(concepts)), 2))
    return pairs


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
    for (a, b), weight in sorted(cooccurrence(facts).items()):
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
