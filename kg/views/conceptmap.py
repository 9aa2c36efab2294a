"""The concept map: the default page of a large graph, readable at any number of papers.

A papers view of 21k papers cut to 500 nodes keeps 500 concepts and none of their papers, so no
edge: nothing to read. The map draws concepts only, grouped by their top-level area (laid out
around an anchor per area, in Python, so the page opens instantly and the same graph gives the same
picture), joined by their strongest co-occurrence links, and carries each concept's best papers
with their evidence, so a click on a concept lists them (works offline; nothing is fetched).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from kg.core.defaults import MAP_CONCEPTS
from kg.graph.vocabulary import DCTERMS, FABIO, RDFS
from kg.views.scene import Edge, Scene, View

LINKS_PER_CONCEPT = 5  # each concept keeps its strongest links (and a link kept by either end is drawn)
PAPERS_PER_CONCEPT = 60  # papers listed when a concept is clicked, best score first
SNIPPET = 70  # characters of context on each side of an evidence span in the drill-down
SCALE = 1000.0  # half the width of the laid-out map, in vis-network canvas units


def concept_map(index: Scene, title: str, max_concepts: int = MAP_CONCEPTS) -> View:
    """Concepts clustered by area, weighted co-occurrence links, and each concept's papers for the drill-down.

    max_concepts: the concepts on the most papers that are drawn (0 = all of them).
    """
    count = index.paper_count
    ranked = sorted(count, key=lambda c: (-count[c], index.label(c), c))
    kept = ranked if max_concepts == 0 else ranked[:max_concepts]
    keep = set(kept)
    year_of = {p: index.first(p, FABIO + "hasPublicationYear") or "" for p in index.papers}
    pairs: Counter[tuple[str, str]] = Counter()
    pair_years: dict[tuple[str, str], Counter[str]] = {}
    concept_years: dict[str, Counter[str]] = {c: Counter() for c in kept}
    venue_of, venues = _venues(index)
    # the same counts per venue (its number in `venues`), for the map's venue filter
    concept_venues: dict[str, dict[int, Counter[str]]] = {c: {} for c in kept}
    pair_venues: dict[tuple[str, str], dict[int, Counter[str]]] = {}
    for paper, concepts in index.concepts_of.items():
        mine = sorted({c for c in concepts if c in keep})
        year = year_of.get(paper, "")
        venue = venue_of.get(paper)
        for i, a in enumerate(mine):
            concept_years[a][year] += 1
            if venue is not None:
                concept_venues[a].setdefault(venue, Counter())[year] += 1
            for b in mine[i + 1 :]:
                pairs[(a, b)] += 1
                pair_years.setdefault((a, b), Counter())[year] += 1
                if venue is not None:
                    pair_venues.setdefault((a, b), {}).setdefault(venue, Counter())[year] += 1
    links = _strongest(pairs, count)
    area_of = {c: index.label(index.areas.get(c, c)) for c in kept}
    positions = _layout(kept, links, area_of)
    nodes = tuple(index.concept_node(c) for c in kept)
    edges = tuple(Edge(a, b, float(pairs[(a, b)]), f"{pairs[(a, b)]} shared paper{'s' if pairs[(a, b)] != 1 else ''}")
                  for a, b in sorted(links))
    papers, listed = _drill_down(index, kept, year_of)
    clusters = _clusters(kept, area_of, positions)
    years = sorted(y for y in {year_of.get(p, "") for p in index.concepts_of} if y)
    left = len(ranked) - len(kept)
    note = (f"Showing the {len(kept):,} concepts on the most papers of {len(ranked):,} (left out: {left:,} with at most "
            f"{count[ranked[len(kept)]]:,} papers each; --max-nodes 0 draws all). Each concept keeps its "
            f"{LINKS_PER_CONCEPT} strongest links. Click a concept for its papers and their evidence."
            if left else "Click a concept for its papers and their evidence.")
    extra = {
        "map": {
            "positions": {c: [round(x, 1), round(y, 1)] for c, (x, y) in positions.items()},
            "clusters": clusters,
            "years": years,
            "conceptYears": {c: dict(sorted(v.items())) for c, v in concept_years.items()},
            "edgeYears": {f"{a} {b}": dict(sorted(pair_years[(a, b)].items())) for a, b in sorted(links)},
            "papers": papers,
            "listed": listed,
            "papersTotal": len(index.papers),
        }
    }
    if len(venues) > 1:  # venues side by side: the filter picks one
        extra["map"].update(
            venues=venues,
            conceptVenues={c: {str(v): dict(sorted(n.items())) for v, n in sorted(by.items())} for c, by in concept_venues.items() if by},
            edgeVenues={f"{a} {b}": {str(v): dict(sorted(n.items())) for v, n in sorted(pair_venues[(a, b)].items())}
                        for a, b in sorted(links) if (a, b) in pair_venues},
        )
    return View(title, nodes, edges, note, None, len(ranked), extra)


def _venues(index: Scene) -> tuple[dict[str, int], list[str]]:
    """Each paper's venue as a number, and the venues' labels in that numbering (sorted)."""
    label_of = {}
    for paper in index.concepts_of:
        venue = index.first(paper, DCTERMS + "isPartOf")
        if venue:
            label_of[paper] = index.label(venue)
    names = sorted(set(label_of.values()))
    number = {name: i for i, name in enumerate(names)}
    return {p: number[name] for p, name in label_of.items()}, names


def _strongest(pairs: Counter[tuple[str, str]], count: Counter[str]) -> set[tuple[str, str]]:
    """Each concept's LINKS_PER_CONCEPT strongest links by the Ochiai coefficient (shared / sqrt(n_a n_b)).

    Raw shared counts would give every concept the same partner (the biggest hub); Ochiai favours
    partners that go together, and a link kept by either of its ends is drawn.
    """
    by_concept: dict[str, list[tuple[float, int, str, tuple[str, str]]]] = {}
    for (a, b), n in pairs.items():
        strength = n / math.sqrt(count[a] * count[b])
        for end, other in ((a, b), (b, a)):
            by_concept.setdefault(end, []).append((-strength, -n, other, (a, b)))
    kept: set[tuple[str, str]] = set()
    for items in by_concept.values():
        items.sort()
        kept.update(pair for *_, pair in items[:LINKS_PER_CONCEPT])
    return kept


def _layout(concepts: list[str], links: set[tuple[str, str]], area_of: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Positions from a seeded force layout in which each area's concepts are also tied to an anchor of the area."""
    import networkx as nx

    if not concepts:
        return {}
    g = nx.Graph()
    g.add_nodes_from(concepts)
    areas = sorted(set(area_of.values()))
    for c in concepts:
        g.add_edge(c, "\0area " + area_of[c], weight=1.0)
    for a, b in links:
        g.add_edge(a, b, weight=0.15)
    for i, a in enumerate(areas):  # a faint ring keeps small areas from drifting off
        g.add_edge("\0area " + a, "\0area " + areas[(i + 1) % len(areas)], weight=0.05)
    k = 1.6 / math.sqrt(max(g.number_of_nodes(), 1))
    raw = nx.spring_layout(g, k=k, weight="weight", seed=7, iterations=120)
    xs = [raw[c][0] for c in concepts]
    ys = [raw[c][1] for c in concepts]
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9) / 2
    size = SCALE * min(1.0, math.sqrt(len(concepts) / MAP_CONCEPTS) + 0.2)
    return {c: ((raw[c][0] - cx) / span * size, (raw[c][1] - cy) / span * size) for c in concepts}


def _clusters(concepts: list[str], area_of: dict[str, str], positions: dict[str, tuple[float, float]]) -> list[list[Any]]:
    """[area, x, y, concepts] for each area: where its label goes (the middle of its concepts), biggest first."""
    groups: dict[str, list[str]] = {}
    for c in concepts:
        groups.setdefault(area_of[c], []).append(c)
    out = []
    for area, members in groups.items():
        x = sum(positions[c][0] for c in members) / len(members)
        y = sum(positions[c][1] for c in members) / len(members)
        out.append([area, round(x, 1), round(y, 1), len(members)])
    return sorted(out, key=lambda r: (-r[3], r[0]))


def _drill_down(index: Scene, concepts: list[str], year_of: dict[str, str]) -> tuple[list[list[Any]], dict[str, list[list[Any]]]]:
    """Papers (title, year, venue) listed once, and per concept its best papers as [paper #, score, evidence]."""
    by_concept: dict[str, list[tuple[float, str]]] = {c: [] for c in concepts}
    for paper, concept in index.subjects:
        if concept in by_concept:
            score, _ = index.links.get((paper, concept), (None, None))
            by_concept[concept].append((score if score is not None else -1.0, paper))
    number: dict[str, int] = {}
    papers: list[list[Any]] = []
    listed: dict[str, list[list[Any]]] = {}
    for concept in concepts:
        best = sorted(by_concept[concept], key=lambda sp: (-sp[0], sp[1]))[:PAPERS_PER_CONCEPT]
        rows = []
        for score, paper in best:
            if paper not in number:
                number[paper] = len(papers)
                venue = index.first(paper, DCTERMS + "isPartOf")
                papers.append([index.first(paper, DCTERMS + "title", RDFS + "label") or index.label(paper),
                               year_of.get(paper, ""), index.label(venue) if venue else "", paper])
            rows.append([number[paper], round(score, 3) if score >= 0 else None, index.evidence(paper, concept, SNIPPET)])
        listed[concept] = rows
    return papers, listed
