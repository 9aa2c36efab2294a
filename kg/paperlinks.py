"""The papers view of a graph too large to draw whole: papers linked to the papers they share specific concepts with.

Cut to its most connected nodes, the papers-and-concepts view keeps concepts only (each is on
hundreds of papers; a paper is on a handful of concepts), so it had no edge left at 21k papers.
Here the nodes are papers and an edge joins two papers that share concepts, weighted by how
specific those concepts are (the sum of their inverse document frequencies, log(papers / papers of
the concept)); each paper keeps its strongest few links, and the drawn papers are grown from the
most linked paper along the strongest links, so every drawn paper is joined to another.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter

from .views import Edge, Scene, View

LINKS_PER_PAPER = 5  # each paper keeps its strongest links (a link kept by either end is drawn)
GENERIC = 0.05  # a concept on more than this share of the papers ("machine learning") links no pair by itself
SHARED_NAMES = 4  # concepts named in an edge's tooltip


def paper_links(index: Scene) -> dict[tuple[str, str], tuple[float, list[str]]]:
    """(paper a, paper b) with a < b -> (weight, shared concepts, most specific first) for each paper's strongest links."""
    of = {p: cs for p, cs in index.concepts_of.items() if cs}
    total = len(of)
    if total < 2:
        return {}
    df = Counter(c for cs in of.values() for c in set(cs))
    idf = {c: math.log(total / n) for c, n in df.items()}
    cap = max(2, int(GENERIC * total))
    papers_of: dict[str, list[str]] = {}
    for p in sorted(of):
        for c in sorted(set(of[p])):
            if 2 <= df[c] <= cap:
                papers_of.setdefault(c, []).append(p)
    kept: dict[tuple[str, str], tuple[float, list[str]]] = {}
    for p in sorted(of):
        mine = set(of[p])
        score: dict[str, float] = {}
        for c in mine:
            for q in papers_of.get(c, ()):
                score[q] = score.get(q, 0.0) + idf[c]
        score.pop(p, None)
        best = heapq.nsmallest(LINKS_PER_PAPER, score.items(), key=lambda qs: (-qs[1], qs[0]))
        for q, _ in best:
            pair = (p, q) if p < q else (q, p)
            if pair not in kept:
                shared = sorted(mine & set(of[q]), key=lambda c: (-idf[c], index.label(c)))
                kept[pair] = (round(sum(idf[c] for c in shared), 2), shared)
    return kept


def paper_links_view(index: Scene, title: str, max_nodes: int) -> View:
    """Up to `max_nodes` papers (0 = all linked papers) joined by their strongest shared-concept links."""
    links = paper_links(index)
    adjacent: dict[str, list[tuple[float, str]]] = {}
    for (a, b), (w, _) in links.items():
        adjacent.setdefault(a, []).append((w, b))
        adjacent.setdefault(b, []).append((w, a))
    room = len(adjacent) if max_nodes == 0 else max_nodes
    chosen: list[str] = []
    taken: set[str] = set()
    # Grow from the most linked paper along the strongest link out of the drawn set (Prim's order);
    # when a group is exhausted, start again from the most linked paper left.
    seeds = sorted(adjacent, key=lambda p: (-len(adjacent[p]), -sum(w for w, _ in adjacent[p]), p))
    for seed in seeds:
        if len(chosen) >= room:
            break
        if seed in taken:
            continue
        frontier = [(0.0, seed)]
        while frontier and len(chosen) < room:
            _, p = heapq.heappop(frontier)
            if p in taken:
                continue
            taken.add(p)
            chosen.append(p)
            for w, q in adjacent[p]:
                if q not in taken:
                    heapq.heappush(frontier, (-w, q))
    nodes = tuple(index.paper_node(p) for p in sorted(chosen))
    edges = tuple(Edge(a, b, w, "shared: " + ", ".join(index.label(c) for c in shared[:SHARED_NAMES])
                       + (f" and {len(shared) - SHARED_NAMES} more" if len(shared) > SHARED_NAMES else ""))
                  for (a, b), (w, shared) in sorted(links.items()) if a in taken and b in taken)
    papers, total = len(index.papers), len(index.papers) + len(index.paper_count)
    note = (f"Showing {len(nodes):,} papers of {total:,} nodes ({papers:,} papers and {len(index.paper_count):,} concepts), "
            f"joined when they share specific concepts: each paper keeps its {LINKS_PER_PAPER} strongest links, weighted "
            f"by how rare the shared concepts are (a concept on more than {GENERIC:.0%} of the papers links none); the papers "
            "drawn are grown from the most linked one along the strongest links. Hover a paper for its concepts; the search "
            "box finds every paper and concept; --view map shows the concepts; --max-nodes 0 draws every paper and concept.")
    return View(title, nodes, edges, note, None, total)
