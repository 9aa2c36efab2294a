"""The page's search index: every concept and every paper of the graph, drawn or not, in compact arrays.

A capped page draws a few hundred nodes of tens of thousands; its search box still finds any paper
or concept, because the page carries this index (titles, labels, years, and which papers each
concept is on, best score first) and the page script adds a hit that is not drawn next to its
drawn neighbours. Numbers index into the arrays, and paper IRIs are stored without their common
prefix, so 21k papers cost about 2 bytes per paper-concept link plus the titles.
"""

from __future__ import annotations

from typing import Any

from kg.graph.vocabulary import DCTERMS, FABIO, RDFS
from kg.views.scene import Scene


def search_index(index: Scene) -> dict[str, Any]:
    """{"base", "papers": [[title, year, IRI after base]], "concepts": [[IRI, label, area, [alt labels], [paper #, best first]]]}."""
    papers = list(index.papers)
    number = {p: i for i, p in enumerate(papers)}
    base = _common_prefix(papers[0], papers[-1]) if len(papers) > 1 else ""  # sorted: the first and last bound the rest
    rows = [[index.first(p, DCTERMS + "title", RDFS + "label") or index.label(p), index.first(p, FABIO + "hasPublicationYear") or "",
             p[len(base):]] for p in papers]
    on: dict[str, list[tuple[float, int]]] = {}
    for paper, concept in index.subjects:
        if paper in number:
            score = index.links.get((paper, concept), (None, None))[0]
            on.setdefault(concept, []).append((-(score if score is not None else -1.0), number[paper]))
    concepts = []
    for c in sorted(index.paper_count, key=lambda c: (-index.paper_count[c], index.label(c), c)):
        known = index.scheme.concepts.get(c)
        concepts.append([c, index.label(c), index.label(index.areas.get(c, c)), list(known.alt_labels) if known else [],
                         [i for _, i in sorted(on.get(c, []))]])
    return {"base": base, "papers": rows, "concepts": concepts}


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
