"""What `kg render` draws: papers, concepts, neighbourhoods and CONSTRUCT results as plain node/edge views."""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from kg.core.errors import UsageError
from kg.extract.scheme import Concept, Scheme
from kg.graph.facts import Mention, pair_counts, read_facts
from kg.graph.vocabulary import DCTERMS, FABIO, FOAF, RDF, RDFS, SKOS

VIEWS = ("papers", "concepts", "map")
SNIPPET = 90  # characters of context on each side of a mention


@dataclass(frozen=True)
class Node:
    """One drawn node; `info` holds the plain-text facts its tooltip shows (escaped at draw time)."""

    id: str
    label: str
    kind: str  # "paper", "concept" or another class name (query views)
    area: str = ""  # legend group: a concept's top-level area, or the kind
    weight: float = 1.0  # papers of a concept; drives the node size
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge:
    """One drawn edge; `weight` is 1 or the number of shared papers."""

    source: str
    target: str
    weight: float = 1.0
    label: str = ""


@dataclass(frozen=True)
class View:
    """Nodes and edges to draw, what was left out, and the node to centre on."""

    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    note: str = ""
    focus: str | None = None
    total: int = 0  # nodes before --max-nodes
    extra: Mapping[str, Any] = field(default_factory=dict)  # view-specific page data (the concept map's layout and papers)


class Scene:
    """What views draw from a kg graph (labels, tooltips, areas, first mentions): the graph's Facts (kg.graph.facts, the one
    reader every command uses), so a page shows the figures `kg report` and `kg export` show."""

    def __init__(self, graph: Any) -> None:
        facts = self.facts = read_facts(graph)
        self.types = facts.types
        self.values = facts.values
        self.subjects = list(facts.subjects)
        self.broader = facts.broader
        self.papers = sorted(p for p, ts in facts.types.items() if FABIO + "ResearchPaper" in ts)
        self.concepts_of: dict[str, list[str]] = {}
        for p, c in self.subjects:
            self.concepts_of.setdefault(p, []).append(c)
        self.links: dict[tuple[str, str], tuple[float | None, Mention | None]] = {
            key: (facts.scores.get(key), facts.first_mentions.get(key)) for key in facts.mentions}
        self.scheme = Scheme((), (), {c: self._concept(c) for c in sorted(facts.concepts)}, ())
        self.paper_count = Counter(c for _, c in self.subjects)
        self.areas = facts.areas

    def first(self, node: str, *predicates: str) -> str | None:
        """The first value of the first predicate that `node` has."""
        return self.facts.first(node, *predicates)

    def label(self, node: str) -> str:
        """A readable name: prefLabel, title, rdfs:label, foaf:name, else the end of the IRI."""
        if node in self.facts.concepts:
            return self.facts.label(node)
        got = self.first(node, SKOS + "prefLabel", DCTERMS + "title", RDFS + "label", FOAF + "name")
        return got or node.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or node

    def _concept(self, iri: str) -> Concept:
        alt = tuple(sorted(self.values.get(iri, {}).get(SKOS + "altLabel", [])))
        return Concept(iri, self.label(iri), alt, (), tuple(sorted(self.broader.get(iri, []))), None, ())

    def paper_info(self, paper: str) -> dict[str, Any]:
        """Tooltip facts of a paper: title, venue, year, concepts with scores, one evidence snippet."""
        venue = self.first(paper, DCTERMS + "isPartOf")
        linked = sorted(
            ((c, self.links.get((paper, c), (None, None))[0]) for c in self.concepts_of.get(paper, ())),
            key=lambda cs: (-(cs[1] or 0), self.label(cs[0])),
        )
        info: dict[str, Any] = {
            "title": self.first(paper, DCTERMS + "title", RDFS + "label") or self.label(paper),
            "venue": self.label(venue) if venue else None,
            "year": self.first(paper, FABIO + "hasPublicationYear"),
            "concepts": [[self.label(c), s] for c, s in linked],
        }
        for c, _ in linked:
            evidence = self.evidence(paper, c)
            if evidence:
                info["evidence"] = evidence
                break
        return info

    def evidence(self, paper: str, concept: str, width: int = SNIPPET) -> list[str] | None:
        """[before, exact, after] around the first mention of `concept` in the paper's abstract (`width` characters of context)."""
        _, mention = self.links.get((paper, concept), (None, None))
        if mention is None:
            return None
        start, exact, on = mention
        abstract = self.first(paper, on or DCTERMS + "abstract") or ""  # a title span (kg:onProperty) quotes the title
        if abstract[start : start + len(exact)] != exact:
            return ["", exact, ""]
        before = abstract[max(0, start - width) : start]
        after = abstract[start + len(exact) : start + len(exact) + width]
        if start > width:
            before = "…" + before.split(" ", 1)[-1]
        if start + len(exact) + width < len(abstract):
            after = after.rsplit(" ", 1)[0] + "…"
        return [before, exact, after]

    def concept_info(self, concept: str) -> dict[str, Any]:
        """Tooltip facts of a concept: label, area, broader, paper count, definition."""
        c = self.scheme.concepts.get(concept)
        return {
            "title": self.label(concept),
            "area": self.label(self.areas.get(concept, concept)),
            "broader": [self.label(b) for b in (c.broader if c else ())],
            "papers": self.paper_count.get(concept, 0),
            "definition": self.first(concept, SKOS + "definition"),
        }

    def concept_node(self, concept: str) -> Node:
        return Node(concept, self.label(concept), "concept", self.label(self.areas.get(concept, concept)),
                    float(self.paper_count.get(concept, 0)), self.concept_info(concept))

    def paper_node(self, paper: str) -> Node:
        info = self.paper_info(paper)
        return Node(paper, info["title"], "paper", "paper", 1.0, info)


def papers_view(index: Scene, title: str) -> View:
    """Every paper and the concepts it is about (dcterms:subject)."""
    used = sorted({c for _, c in index.subjects}, key=lambda c: (index.label(c), c))
    nodes = [index.paper_node(p) for p in index.papers]
    nodes += [index.concept_node(c) for c in used]
    known = set(index.papers) | set(used)
    edges = [Edge(p, c) for p, c in index.subjects if p in known]
    return View(title, tuple(nodes), tuple(edges), total=len(nodes))


def concepts_view(index: Scene, title: str) -> View:
    """Concepts only, linked when papers share them; the edge weight is the number of shared papers."""
    by_paper: dict[str, list[str]] = {}
    for p, c in index.subjects:
        by_paper.setdefault(p, []).append(c)
    pairs = pair_counts(by_paper.values())  # a Counter of pairs: 40x faster than networkx's projection
    nodes = [index.concept_node(c) for c in sorted(index.paper_count, key=lambda c: (index.label(c), c))]
    edges = [Edge(a, b, float(n), f"{n} shared paper{'s' if n != 1 else ''}") for (a, b), n in sorted(pairs.items())]
    return View(title, tuple(nodes), tuple(edges), total=len(nodes))


def neighbourhood(view: View, focus: str, hops: int) -> View:
    """The part of a view within `hops` edges of `focus`."""
    if hops < 0:
        raise UsageError(f"--hops must be 0 or more, not {hops}")
    adjacent: dict[str, set[str]] = {}
    for e in view.edges:
        adjacent.setdefault(e.source, set()).add(e.target)
        adjacent.setdefault(e.target, set()).add(e.source)
    distance = {focus: 0}
    todo = deque([focus])
    while todo:
        node = todo.popleft()
        if distance[node] < hops:
            for other in sorted(adjacent.get(node, ())):
                if other not in distance:
                    distance[other] = distance[node] + 1
                    todo.append(other)
    nodes = tuple(n for n in view.nodes if n.id in distance)
    edges = tuple(e for e in view.edges if e.source in distance and e.target in distance)
    return replace(view, nodes=nodes, edges=edges, focus=focus, total=len(nodes))


def limit(view: View, max_nodes: int) -> View:
    """Keep the `max_nodes` most connected nodes (the focus first) and say what was left out; 0 keeps all."""
    if max_nodes < 0:
        raise UsageError(f"--max-nodes must be 0 (no limit) or more, not {max_nodes}")
    if max_nodes == 0 or len(view.nodes) <= max_nodes:
        return view
    degree: Counter[str] = Counter()
    strength: dict[str, float] = {}
    for e in view.edges:
        for end in (e.source, e.target):
            degree[end] += 1
            strength[end] = strength.get(end, 0.0) + e.weight
    ranked = sorted(view.nodes, key=lambda n: (n.id != view.focus, -degree[n.id], -strength.get(n.id, 0.0), n.label, n.id))
    # Unlinked nodes carry no structure: once a view is cut, they never fill the places left.
    kept = [n for n in ranked[:max_nodes] if degree[n.id] or n.id == view.focus]
    ids = {n.id for n in kept}
    dropped = [n for n in ranked if n.id not in ids]
    nodes = tuple(n for n in view.nodes if n.id in ids)
    edges = tuple(e for e in view.edges if e.source in ids and e.target in ids)
    by_kind = Counter(n.kind for n in dropped)
    parts = []
    for kind, k in sorted(by_kind.items(), key=lambda kk: (kk[0] != "concept", kk[0])):
        names = [n.label for n in dropped if n.kind == kind][:5] if kind == "concept" else []
        more = ", …" if len(names) < k else ""
        parts.append(f"{k:,} {_plural(kind, k)}" + (f" ({', '.join(names)}{more})" if names else ""))
    most = max((degree[n.id] for n in dropped), default=0)
    links = f"with at most {most} link{'s' if most != 1 else ''} each" if most else "with no links"
    note = (
        f"Showing the {len(kept):,} most connected of {len(view.nodes):,} nodes. Left out: {' and '.join(parts)}, "
        f"{links}. Raise --max-nodes (0 shows everything) to see them."
    )
    return replace(view, nodes=nodes, edges=edges, note=note, total=len(view.nodes))


def result_view(index: Scene, triples: Iterable, title: str) -> View:
    """The graph a CONSTRUCT returned: resources as nodes, links as edges, literals in tooltips."""
    local = Scene(triples_ := list(triples))
    nodes: dict[str, Node] = {}
    edges: set[Edge] = set()
    rows: dict[str, list[list[str]]] = {}

    def node(key: str) -> None:
        if key in nodes:
            return
        kinds = index.types.get(key, set()) | local.types.get(key, set())
        if FABIO + "ResearchPaper" in kinds:
            nodes[key] = index.paper_node(key)
        elif SKOS + "Concept" in kinds or key in index.scheme.concepts:
            nodes[key] = index.concept_node(key)
        else:
            kind = min((_local(k) for k in kinds), default="resource")
            label = local.label(key) if key in local.values else index.label(key)
            nodes[key] = Node(key, label, kind, kind, 1.0, {"title": label, "type": sorted(_local(k) for k in kinds)})

    for t in triples_:
        s = _key(t.subject)
        node(s)
        if t.predicate.value == RDF + "type":
            continue
        if type(t.object).__name__ == "Literal":
            rows.setdefault(s, []).append([_local(t.predicate.value), t.object.value])
        else:
            o = _key(t.object)
            node(o)
            edges.add(Edge(s, o, 1.0, _local(t.predicate.value)))
    drawn = []
    for key, n in nodes.items():
        if key in rows:
            n = replace(n, info={**n.info, "rows": sorted(rows[key])[:12]})
        drawn.append(n)
    drawn.sort(key=lambda n: (n.kind, n.label, n.id))
    return View(title, tuple(drawn), tuple(sorted(edges, key=lambda e: (e.source, e.target, e.label))), total=len(drawn))


def size(weight: float, biggest: float) -> float:
    """Node radius in pixels: area grows with the paper count."""
    return round(10 + 30 * math.sqrt(max(weight, 0) / max(biggest, 1)), 1)


def _key(term) -> str:
    """A node id: the IRI, or `_:id` for a blank node."""
    return term.value if type(term).__name__ == "NamedNode" else f"_:{term.value}"


def _plural(kind: str, count: int) -> str:
    return kind if count == 1 or kind.endswith("s") else kind + "s"


def _local(iri: str) -> str:
    return iri.rstrip("/#").rsplit("#", 1)[-1].rsplit("/", 1)[-1]
