"""Venues side by side: the share of each venue's papers of a year about each concept, from a graph's Facts.

The same figures as the named query `topics-by-venue` (queries/topics-by-venue.rq): a paper counts for the concepts
it is about and every concept above them (skos:broader*), and a share is over the papers of that venue and year.
`kg report` shows them as a table; the concept map's venue filter uses `venue_of`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kg.graph.facts import Facts
from kg.graph.vocabulary import DCTERMS, FABIO, RDFS


@dataclass(frozen=True)
class Shares:
    """Per (venue, year) group, its papers and, per concept, how many of them are about it."""

    groups: tuple[tuple[str, int | None], ...]  # (venue label, year), in column order
    papers: dict[tuple[str, int | None], int]  # group -> its papers
    counts: dict[tuple[str, tuple[str, int | None]], int]  # (concept, group) -> papers about it
    concepts: tuple[str, ...]  # the concepts with the most papers over the groups, most first

    def share(self, concept: str, group: tuple[str, int | None]) -> float:
        return self.counts.get((concept, group), 0) / self.papers[group] if self.papers.get(group) else 0.0


def venue_of(facts: Facts) -> dict[str, str]:
    """Paper IRI -> the label of its venue (dcterms:isPartOf), for the papers that have one."""
    out = {}
    for paper in facts.papers:
        venue = facts.first(paper, DCTERMS + "isPartOf")
        if venue:
            out[paper] = facts.first(venue, RDFS + "label") or facts.label(venue)
    return out


def shares(facts: Facts, groups: int = 8, concepts: int = 15) -> Shares:
    """The `groups` (venue, year) groups with the most papers (in venue, then year order) and their top `concepts`."""
    venues = venue_of(facts)
    group_of: dict[str, tuple[str, int | None]] = {}
    for paper, venue in venues.items():
        year = facts.first(paper, FABIO + "hasPublicationYear")
        group_of[paper] = (venue, int(year) if year and year.isdigit() else None)
    size = Counter(group_of.values())
    kept = sorted(sorted(size, key=lambda g: (-size[g], g[0], g[1] or 0))[:groups], key=lambda g: (g[0], g[1] or 0))
    keep = set(kept)
    counts: Counter[tuple[str, tuple[str, int | None]]] = Counter()
    above: dict[str, frozenset[str]] = {}
    for paper, concepts_of in facts.concepts_of().items():
        group = group_of.get(paper)
        if group not in keep or group is None:
            continue
        rolled: set[str] = set()
        for concept in concepts_of:
            if concept not in above:
                above[concept] = facts.above(concept)
            rolled |= above[concept]
        for concept in rolled:
            if concept in facts.concepts:
                counts[(concept, group)] += 1
    total: Counter[str] = Counter()
    for (concept, _), n in counts.items():
        total[concept] += n
    top = tuple(sorted(total, key=lambda c: (-total[c], facts.label(c), c))[:concepts])
    return Shares(tuple(kept), {g: size[g] for g in kept}, dict(counts), top)
