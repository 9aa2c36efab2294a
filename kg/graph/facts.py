"""The one reader of a built graph: papers, concepts, subjects, annotations, hierarchy, areas and pair counts.

`read_facts` makes one pass over a graph's triples (a file, a kg.Built, or any triples) and keeps
what analysis, reports, exports, pages (kg.views.scene), evaluation and updates need, as strings, so every
command shows the same figures: one paper count and one area (`Facts.area`) per concept. Asked for
`evidence`, it also keeps every evidence span of every link with the link's score as written (the CSV tables,
kg.views.tables); other readers do without them, which spares the memory of one span per annotation. The hierarchy walk
(`closure`: skos:broader*, reflexive, cycles allowed) and the pair counts (`pair_counts`: the
resources about both of two concepts, the pair ordered by the string of its IRIs) are the ones the
named queries define; every module that needs them uses these.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from pathlib import Path
from typing import AbstractSet, Any, Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

from kg.graph.annotations import Evidence, Groups, Links, Mention, OutOfOrder
from kg.graph.vocabulary import BIBO, DCTERMS, FABIO, FOAF, KG, OA, PROV, RDF, RDFS, SKOS

T = TypeVar("T", bound=Hashable)

# The values the pages show (English or untagged literals, and IRIs), by node and predicate.
SHOWN = frozenset({RDFS + "label", DCTERMS + "title", DCTERMS + "abstract", DCTERMS + "isPartOf", FABIO + "hasPublicationYear",
                   SKOS + "prefLabel", SKOS + "altLabel", SKOS + "definition", FOAF + "name", DCTERMS + "creator"})
# Types no page or figure uses: the annotations' own, most of a graph's rdf:type triples.
UNSHOWN_TYPES = frozenset({OA + "Annotation", OA + "SpecificResource", OA + "TextPositionSelector", OA + "TextQuoteSelector"})


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
    """The content hash that tells an unchanged paper from a changed one (kg.graph.stamp)."""
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
    pref_labels: dict[str, frozenset[str]] = field(default_factory=dict)  # concept -> its prefLabels, in every language
    identifiers: dict[str, str] = field(default_factory=dict)  # dcterms:identifier -> resource
    builds: tuple[str, ...] = ()  # prov:Activity IRIs, in graph order
    authors: frozenset[str] = frozenset()  # foaf:Person IRIs
    venues: frozenset[str] = frozenset()  # fabio:ConferenceProceedings IRIs
    versions: frozenset[str] = frozenset()  # kg:schemeVersion values
    umbrellas: frozenset[str] = frozenset()  # kg:Umbrella concepts (machine learning, deep learning, ...)
    tops: frozenset[str] = frozenset()  # declared top concepts (skos:topConceptOf / skos:hasTopConcept)
    types: Mapping[str, AbstractSet[str]] = field(default_factory=dict)  # node -> its rdf:types (but UNSHOWN_TYPES)
    values: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)  # node -> SHOWN predicate -> values
    first_mentions: dict[tuple[str, str], Mention] = field(default_factory=dict)  # (paper, concept) -> first mention
    dois: dict[str, str] = field(default_factory=dict)  # resource -> bibo:doi
    evidence: dict[tuple[str, str], Evidence] = field(default_factory=dict)  # (paper, concept) -> spans, when read with them

    def first(self, node: str, *predicates: str) -> str | None:
        """The first value of the first of `predicates` that `node` has (the least, when it has several)."""
        for p in predicates:
            got = self.values.get(node, {}).get(p)
            if got:
                return min(got)
        return None

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
        """The ancestors of a concept via skos:broader* that have no broader, by label."""
        roots = {a for a in self.above(iri) if not [p for p in self.broader.get(a, ()) if p != a]}
        return tuple(sorted(roots, key=lambda r: (self.label(r), r))) or (iri,)

    def area(self, iri: str) -> str:
        """The area of a concept: what every command colours, counts and exports it under (see `areas`)."""
        if iri in self.areas:
            return self.areas[iri]
        return self._nearest_top(iri) if self.tops else self._area_without_tops(iri, self._single_root)

    @cached_property
    def areas(self) -> dict[str, str]:
        """Each concept's area: the nearest declared top concept up its skos:broader chain (the first by label).

        Schemes that declare no top concepts fall back to the roots (the first by label); below a single
        root, the root's children are the areas, so that one catch-all root does not colour everything.
        """
        if self.tops:
            return {c: self._nearest_top(c) for c in self.concepts}
        single = self._single_root
        return {c: self._area_without_tops(c, single) for c in self.concepts}

    @cached_property
    def _single_root(self) -> str | None:
        roots = {self.roots(c)[0] for c in self.concepts}
        return next(iter(roots)) if len(roots) == 1 else None

    def _area_without_tops(self, iri: str, single: str | None) -> str:
        if single is None:
            return self.roots(iri)[0]
        under = [a for a in self.above(iri) if a != single and single in self.broader.get(a, ())]
        return min(under, key=lambda a: (self.label(a), a)) if under else single

    def _nearest_top(self, concept: str) -> str:
        """Breadth-first up skos:broader: the first level holding a declared top concept (first by label)."""
        level, seen = {concept}, {concept}
        while level:
            found = level & self.tops
            if found:
                return min(found, key=lambda a: (self.label(a), a))
            level = {b for c in level for b in self.broader.get(c, ()) if b not in seen}
            seen |= level
        return self.roots(concept)[0]

    def pairs(self) -> Counter[tuple[str, str]]:
        """Concept pair (a < b) -> number of papers about both (co-occurrence.rq's counts)."""
        return pair_counts(self.concepts_of().values())


def read_facts(graph: Any, *, evidence: bool = False) -> Facts:
    """Read a graph (a Facts, a Built, a path to an RDF file or shard folder, or pyoxigraph triples) into Facts;
    `evidence`: with every evidence span (`Facts.evidence`)."""
    if isinstance(graph, Facts):
        return graph
    if isinstance(graph, (str, Path)):
        from functools import partial

        from kg.graph.files import parse

        triples: Callable[[], Iterable] = partial(parse, graph)
    elif callable(getattr(graph, "triples", None)):
        triples = graph.triples  # a kg.Built
    else:
        return of_triples(graph, evidence=evidence)
    try:  # read as kg writes a graph, each annotation's triples together (kg.graph.annotations) ...
        return of_triples(triples(), evidence=evidence, build_order=True)
    except OutOfOrder:  # ... else again, every annotation held until the end
        return of_triples(triples(), evidence=evidence)


def of_triples(triples: Iterable, *, evidence: bool = False, build_order: bool = False) -> Facts:
    """The facts of a stream of triples (or quads), in one pass (blank nodes keyed `_:id`); `evidence`: with every
    evidence span (`Facts.evidence`); `build_order`: the annotations come as kg writes them, each one's triples together,
    and are folded a thousand at a time (kg.graph.annotations.OutOfOrder where they do not)."""
    from pyoxigraph import BlankNode

    papers: dict[str, str] = {}
    labels: dict[str, str] = {}
    years: dict[str, int] = {}
    pref: dict[str, set[str]] = {}
    names: dict[str, set[str]] = {}
    prefs: dict[str, set[str]] = {}
    broader: dict[str, list[str]] = {}
    subjects: set[tuple[str, str]] = set()
    ann = Links.maps(evidence)
    selectors: dict[int, list[int]] = {}  # a target's selectors, by hashes of their IRIs (see ann)
    links = Links(evidence)
    groups = Groups(links, ann, selectors) if build_order else None
    pagerank: dict[str, float] = {}
    members: list[tuple[str, str]] = []
    abstracts: dict[str, str] = {}
    identifiers: dict[str, str] = {}
    dois: dict[str, str] = {}
    builds: list[str] = []
    types: dict[str, set[str]] = {}
    values: dict[str, dict[str, list[str]]] = {}
    tops: set[str] = set()
    versions: set[str] = set()
    rdf_type, has_selector, subject, skos_broader = RDF + "type", OA + "hasSelector", DCTERMS + "subject", SKOS + "broader"
    paper_type, concept_type, activity_type = FABIO + "ResearchPaper", SKOS + "Concept", PROV + "Activity"
    top_of, has_top, rdfs_label, pref_label, alt_label = SKOS + "topConceptOf", SKOS + "hasTopConcept", RDFS + "label", SKOS + "prefLabel", SKOS + "altLabel"
    abstract, identifier, year = DCTERMS + "abstract", DCTERMS + "identifier", FABIO + "hasPublicationYear"
    rank, member, version, doi = KG + "pagerank", KG + "member", KG + "schemeVersion", BIBO + "doi"
    read = {has_selector, rdf_type, subject, skos_broader, top_of, has_top, rdfs_label, pref_label, alt_label, abstract,
            identifier, year, rank, member, version, doi, *SHOWN}
    has_target, exact, has_body = OA + "hasTarget", OA + "exact", OA + "hasBody"
    shared: dict[str, str] = {}
    for t in triples:
        p = t.predicate.value
        if p in ann:  # one flat map per annotation predicate: most triples of a graph are these
            # Annotation, target and selector nodes only join these maps: a hash of their IRI keys them (the strings
            # held most of the 1.7 GB of a 21k-paper page), and the values that repeat (concepts, papers, scores,
            # offsets) are held once.
            value, node = t.object.value, hash(t.subject.value)
            if p == has_body and groups is not None and len(ann[p]) >= groups.size and node not in ann[p]:
                groups.close()  # an annotation begins: those before are complete
            ann[p][node] = hash(value) if p == has_target else value if p == exact else shared.setdefault(value, value)
            continue
        if p not in read:  # similarity, co-occurrence, provenance...: nothing kg reads back
            continue
        o, sub = t.object, t.subject
        value, s = o.value, sub.value
        if p == has_selector:
            selectors.setdefault(hash(s), []).append(hash(value))
            continue
        if type(sub) is BlankNode:
            s = "_:" + s
        if p == rdf_type:
            if value in UNSHOWN_TYPES:
                continue
            if value == paper_type:
                papers.setdefault(s, "")
            elif value == concept_type:
                pref.setdefault(s, set())
            elif value == activity_type:
                builds.append(s)
            types.setdefault(s, set()).add(value)
            continue
        if type(o) is BlankNode:
            value = "_:" + value
        if p == subject:
            subjects.add((s, value))
        elif p == skos_broader:
            broader.setdefault(s, []).append(value)
        elif p == top_of:
            tops.add(s)
        elif p == has_top:
            tops.add(value)
        elif p == rdfs_label:
            labels.setdefault(s, value)
        elif p == pref_label:
            names.setdefault(s, set()).add(value)
            prefs.setdefault(s, set()).add(value)
            pref.setdefault(s, set())
            if english(o):
                pref[s].add(value)
        elif p == alt_label:
            names.setdefault(s, set()).add(value)
        elif p == abstract:
            abstracts[s] = value
        elif p == identifier:
            identifiers[value] = s
        elif p == year:
            try:
                years[s] = int(value[:4])
            except ValueError:
                pass  # a malformed year is left out of the trends, not fatal
        elif p == rank:
            pagerank[s] = float(value)
        elif p == member:
            members.append((s, value))
        elif p == version:
            versions.add(value)
        elif p == doi:
            dois[s] = value
        if p in SHOWN and english(o):
            values.setdefault(s, {}).setdefault(p, []).append(value)
    if groups is not None:
        groups.close()
    else:
        links.fold(ann, selectors)
    scores, mentions, first_mentions, spans = links.result()
    for paper, concept in subjects:
        papers.setdefault(paper, "")
        pref.setdefault(concept, set())
    community = {c: community_number(s) for s, c in sorted(members)}
    return Facts(
        papers={p: labels.get(p, "") or p.rsplit("/", 1)[-1] for p in papers},
        years={p: y for p, y in years.items() if p in papers},
        concepts={c: min(ls, default="") or labels.get(c, "") or c.rstrip("/#").rsplit("/", 1)[-1] for c, ls in pref.items()},
        broader={c: tuple(sorted(set(bs))) for c, bs in broader.items()},
        subjects=tuple(sorted(subjects)),
        scores=scores,
        mentions=mentions,
        pagerank=pagerank,
        community=community,
        abstracts=abstracts,
        labels={c: frozenset(ns) for c, ns in names.items()},
        pref_labels={c: frozenset(ns) for c, ns in prefs.items()},
        identifiers=identifiers,
        builds=tuple(builds),
        authors=frozenset(s for s, k in types.items() if FOAF + "Person" in k),
        venues=frozenset(s for s, k in types.items() if FABIO + "ConferenceProceedings" in k),
        versions=frozenset(versions),
        umbrellas=frozenset(s for s, k in types.items() if KG + "Umbrella" in k),
        tops=frozenset(tops),
        types=types,
        values=values,
        first_mentions=first_mentions,
        dois=dois,
        evidence=spans,
    )


def english(term: Any) -> bool:
    """Whether a value is one the pages show: an English or untagged literal, or a node."""
    language = getattr(term, "language", None)
    return language is None or str(language).startswith("en")


def community_number(iri: str) -> int:
    tail = iri.rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else -1
