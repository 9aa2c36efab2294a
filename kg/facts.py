"""The one reader of a built graph: papers, concepts, subjects, annotations, hierarchy and pair counts.

`read_facts` makes one pass over a graph's triples (a file, a kg.Built, or any triples) and keeps
what analysis, reports, exports, evaluation and updates need, as strings. The hierarchy walk
(`closure`: skos:broader*, reflexive, cycles allowed) and the pair counts (`pair_counts`: the
resources about both of two concepts, the pair ordered by the string of its IRIs) are the ones the
named queries define; every module that needs them uses these.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Mapping, TypeVar

from .vocabulary import DCTERMS, FABIO, FOAF, KG, OA, PROV, RDF, RDFS, SKOS

T = TypeVar("T", bound=Hashable)


def closure(broader: Mapping[T, Iterable[T]]) -> Callable[[T], frozenset[T]]:
    """`skos:broader*` from each term: itself and everything above it (cycles allowed), memoised."""
    memo: dict[T, frozenset[T]] = {}

    def up(term: T) -> frozenset[T]:
        if term not in memo:
            seen, todo = {term}, [term]
            while todo:
                for parent in broader.get(todo.pop(), ()):
                    if parent not in seen:
                        seen.add(parent)
                        todo.append(parent)
            memo[term] = frozenset(seen)
        return memo[term]

    return up


def pair_counts(groups: Iterable[Iterable[T]], key: Callable[[T], Any] = lambda t: t) -> Counter[tuple[T, T]]:
    """Per pair (a, b) with key(a) < key(b): the number of groups (each paper's concepts) holding both."""
    pairs: Counter[tuple[T, T]] = Counter()
    for group in groups:
        ordered = sorted(set(group), key=key)
        pairs.update((a, b) for a, b in combinations(ordered, 2) if key(a) < key(b))
    return pairs


def digest(abstract: str) -> str:
    """The content hash that tells an unchanged paper from a changed one (kg.index)."""
    return hashlib.sha256(abstract.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Facts:
    """What kg reads back from a graph: papers, concepts, subject links, annotations and any earlier analysis."""

    papers: dict[str, str]  # paper IRI -> label, in graph order
    years: dict[str, int]  # paper IRI -> publication year
    concepts: dict[str, str]  # concept IRI -> English prefLabel, every concept described in the graph
    broader: dict[str, tuple[str, ...]]  # concept IRI -> its skos:broader concepts
    subjects: tuple[tuple[str, str], ...]  # sorted (paper, concept) dcterms:subject links
    scores: dict[tuple[str, str], float] = field(default_factory=dict)  # (paper, concept) -> salience
    mentions: dict[tuple[str, str], int] = field(default_factory=dict)  # (paper, concept) -> annotations
    pagerank: dict[str, float] = field(default_factory=dict)  # from an earlier `kg analyze`
    community: dict[str, int] = field(default_factory=dict)  # concept IRI -> community number
    abstracts: dict[str, str] = field(default_factory=dict)  # resource -> dcterms:abstract
    labels: dict[str, frozenset[str]] = field(default_factory=dict)  # concept -> every prefLabel and altLabel
    identifiers: dict[str, str] = field(default_factory=dict)  # dcterms:identifier -> resource
    builds: tuple[str, ...] = ()  # prov:Activity IRIs, in graph order
    authors: frozenset[str] = frozenset()  # foaf:Person IRIs
    venues: frozenset[str] = frozenset()  # fabio:ConferenceProceedings IRIs
    versions: frozenset[str] = frozenset()  # kg:schemeVersion values
    umbrellas: frozenset[str] = frozenset()  # kg:Umbrella concepts (machine learning, deep learning, ...)

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

    def above(self, iri: str) -> frozenset[str]:
        """The concept and every concept above it (skos:broader*)."""
        return closure(self.broader)(iri)

    def roots(self, iri: str) -> tuple[str, ...]:
        """The top-level areas of a concept: the ancestors via skos:broader* that have no broader."""
        roots = {a for a in self.above(iri) if not [p for p in self.broader.get(a, ()) if p != a]}
        return tuple(sorted(roots, key=lambda r: (self.label(r), r))) or (iri,)

    def area(self, iri: str) -> str:
        """One top-level area of a concept (the first by label), for colouring."""
        return self.roots(iri)[0]

    def pairs(self) -> Counter[tuple[str, str]]:
        """Concept pair (a < b) -> number of papers about both (co-occurrence.rq's counts)."""
        return pair_counts(self.concepts_of().values())


def read_facts(graph: Any) -> Facts:
    """Read a graph (a Facts, a Built, a path to an RDF file, or pyoxigraph triples) into Facts."""
    if isinstance(graph, Facts):
        return graph
    if isinstance(graph, (str, Path)):
        from .graphio import parse

        return of_triples(parse(graph))
    if callable(getattr(graph, "triples", None)):
        return of_triples(graph.triples())  # a kg.Built
    return of_triples(graph)


def of_triples(triples: Iterable) -> Facts:
    """The facts of a stream of triples (or quads), in one pass."""
    papers: dict[str, str] = {}
    labels: dict[str, str] = {}
    years: dict[str, int] = {}
    pref: dict[str, str] = {}
    names: dict[str, set[str]] = {}
    broader: dict[str, list[str]] = {}
    subjects: set[tuple[str, str]] = set()
    body: dict[str, str] = {}
    target: dict[str, str] = {}
    source: dict[str, str] = {}
    ann_score: dict[str, float] = {}
    pagerank: dict[str, float] = {}
    members: list[tuple[str, str]] = []
    abstracts: dict[str, str] = {}
    identifiers: dict[str, str] = {}
    builds: list[str] = []
    authors: set[str] = set()
    venues: set[str] = set()
    versions: set[str] = set()
    umbrellas: set[str] = set()
    concept_type = SKOS + "Concept"
    for t in triples:
        s, p, o = t.subject.value, t.predicate.value, t.object
        if p == RDF + "type":
            kind = o.value
            if kind == FABIO + "ResearchPaper":
                papers.setdefault(s, "")
            elif kind == concept_type:
                pref.setdefault(s, "")
            elif kind == PROV + "Activity":
                builds.append(s)
            elif kind == FOAF + "Person":
                authors.add(s)
            elif kind == FABIO + "ConferenceProceedings":
                venues.add(s)
            elif kind == KG + "Umbrella":
                umbrellas.add(s)
        elif p == RDFS + "label":
            labels.setdefault(s, o.value)
        elif p == SKOS + "prefLabel":
            names.setdefault(s, set()).add(o.value)
            language = getattr(o, "language", None)
            if not pref.get(s) and (language is None or str(language).startswith("en")):
                pref[s] = o.value
        elif p == SKOS + "altLabel":
            names.setdefault(s, set()).add(o.value)
        elif p == SKOS + "broader":
            broader.setdefault(s, []).append(o.value)
        elif p == DCTERMS + "subject":
            subjects.add((s, o.value))
        elif p == DCTERMS + "abstract":
            abstracts[s] = o.value
        elif p == DCTERMS + "identifier":
            identifiers[o.value] = s
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
        elif p == KG + "schemeVersion":
            versions.add(o.value)
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
        abstracts=abstracts,
        labels={c: frozenset(ns) for c, ns in names.items()},
        identifiers=identifiers,
        builds=tuple(builds),
        authors=frozenset(authors),
        venues=frozenset(venues),
        versions=frozenset(versions),
        umbrellas=frozenset(umbrellas),
    )


def _community_number(iri: str) -> int:
    tail = iri.rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else -1
