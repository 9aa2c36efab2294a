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
from dataclasses import replace

from kg.views.scene import Edge, Scene, View

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
    papers = sorted(of)
    used = sorted(c for c, n in df.items() if 2 <= n <= cap)
    kept: dict[tuple[str, str], tuple[float, list[str]]] = {}
    for p, q in _strongest(papers, used, of, idf):
        shared = sorted(set(of[p]) & set(of[q]), key=lambda c: (-idf[c], index.label(c)))
        kept[(p, q) if p < q else (q, p)] = (round(sum(idf[c] for c in shared), 2), shared)
    return kept


def _strongest(papers: list[str], used: list[str], of: dict[str, list[str]], idf: dict[str, float]) -> list[tuple[str, str]]:
    """(paper, neighbour) for each paper's LINKS_PER_PAPER strongest neighbours by the idf of the `used` concepts they share.

    A sparse product of the paper-concept matrix with its idf-weighted transpose, a block of papers at a time
    (21k papers: about a second, where a dictionary per paper took 25 s).
    """
    import numpy as np
    from scipy import sparse

    column = {c: i for i, c in enumerate(used)}
    rows, cols = [], []
    for i, p in enumerate(papers):
        for c in sorted(set(of[p])):
            if c in column:
                rows.append(i)
                cols.append(column[c])
    if not rows:
        return []
    x = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(papers), len(used)))
    weighted = (sparse.diags(np.array([idf[c] for c in used])) @ x.T).tocsc()  # concepts x papers, idf on each entry
    out: list[tuple[str, str]] = []
    block = 2048
    for start in range(0, len(papers), block):
        scores = (x[start : start + block] @ weighted).tocsr()
        for r in range(scores.shape[0]):
            lo, hi = scores.indptr[r], scores.indptr[r + 1]
            cand, weight = scores.indices[lo:hi], np.round(scores.data[lo:hi], 9)
            keep = cand != start + r
            cand, weight = cand[keep], weight[keep]
            order = np.lexsort((cand, -weight))[:LINKS_PER_PAPER]
            out.extend((papers[start + r], papers[int(j)]) for j in cand[order])
    return out


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
    nodes = tuple(replace(index.paper_node(p), area=_area(index, p)) for p in sorted(chosen))
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


def _area(index: Scene, paper: str) -> str:
    """The area a paper's concepts weigh most in, each concept by its idf (rare concepts say more), for its colour."""
    total = max(len(index.concepts_of), 2)
    weight: dict[str, float] = {}
    for c in set(index.concepts_of.get(paper, ())):
        area = index.label(index.areas.get(c, c))
        weight[area] = weight.get(area, 0.0) + math.log(total / max(index.paper_count.get(c, 1), 1)) + 1e-6
    return min(weight, key=lambda a: (-weight[a], a)) if weight else "paper"
