"""Stage 3: turn papers and their extractions into RDF triples, as pyoxigraph terms in one fixed order."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from functools import lru_cache
from typing import Iterable, Iterator, Sequence
from urllib.parse import quote

from kg.core.defaults import VERSION as __version__
from kg.core.errors import InputError, UsageError
from kg.extract import Extraction
from kg.extract.ingest import Paper
from kg.extract.scheme import Scheme
from kg.graph.annotations import Annotated
from kg.graph.vocabulary import BIBO, DCTERMS, DEFAULT_BASE, FABIO, FOAF, KG, OA, PROV, RDF, RDFS, XSD, Namespaces, slug


def paper_slugs(ids: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """A distinct IRI segment for every paper id: its slug, or slug-<hash> if an earlier id took it.

    Slugs fold case and spacing ("A B" and "a-b" both give "a-b"); two different papers
    must still get two IRIs, else their abstracts and annotations would merge.
    """
    out: dict[str, str] = {}
    taken = set(taken)  # segments already used (by the papers of a graph being updated)
    for paper_id in ids:
        if paper_id in out:
            continue
        segment = slug(paper_id)
        salt = ""
        while segment in taken:
            salt += "#"
            segment = f"{slug(paper_id)}-{hashlib.sha256((paper_id + salt).encode()).hexdigest()[:8]}"
        taken.add(segment)
        out[paper_id] = segment
    return out


def build_time() -> datetime:
    """The build time: SOURCE_DATE_EPOCH when set (reproducible builds), else now."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), tz=UTC)
        except ValueError:
            raise UsageError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds") from None
    return datetime.now(UTC).replace(microsecond=0)


def triples(
    papers: Sequence[Paper],
    extractions: Sequence[Extraction],
    scheme: Scheme,
    *,
    ns: Namespaces = Namespaces(),
    inputs: Sequence[str] = (),
    annotated: bool = False,
) -> Iterator:
    """Every triple of a built graph, in a fixed order: scheme, provenance, then paper by paper (`annotated`: each
    annotation's triples as one kg.graph.annotations.Annotated, which kg.graph.handle.GraphFile.write takes apart)."""
    yield from scheme.triples
    build = build_node(papers, ns)
    yield from provenance(build, papers, scheme, ns=ns, inputs=inputs)
    yield from paper_triples(papers, extractions, build, ns=ns, annotated=annotated)


def build_node(papers: Sequence[Paper], ns: Namespaces = Namespaces()):  # -> pyoxigraph.NamedNode
    """The prov:Activity of a build: named by a hash of the ids of the papers it made."""
    return build_node_of_ids((p.id for p in papers), ns)


def build_node_of_ids(ids: Iterable[str], ns: Namespaces = Namespaces()):  # -> pyoxigraph.NamedNode
    """The build node of papers with these ids, in order, hashed as a stream (a cluster build never holds the papers)."""
    import pyoxigraph as ox

    h = hashlib.sha256()
    for i, paper_id in enumerate(ids):
        h.update(b"\n" + paper_id.encode() if i else paper_id.encode())
    return ox.NamedNode(ns.base + "build/" + h.hexdigest()[:16])


def provenance(
    build,
    papers: Sequence[Paper] | int,
    scheme: Scheme,
    *,
    ns: Namespaces = Namespaces(),
    inputs: Sequence[str] = (),
    informed_by: Sequence[str] = (),
) -> Iterator:
    """The triples describing one build (or update) activity of `papers` (or that many) and the kg software agent."""
    import pyoxigraph as ox

    count = papers if isinstance(papers, int) else len(papers)
    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a = N(RDF + "type")
    yield T(build, a, N(PROV + "Activity"))
    yield T(build, N(RDFS + "label"), L(f"kg build of {count} papers"))
    yield T(build, N(PROV + "startedAtTime"), L(build_time().isoformat(), datatype=N(XSD + "dateTime")))
    agent = list(agent_triples(build, ns.base))
    yield agent[0]
    for earlier in informed_by:
        yield T(build, N(PROV + "wasInformedBy"), N(earlier))
    for name in inputs:
        yield T(build, N(KG + "inputName"), L(name))
    for version in scheme.versions:
        yield T(build, N(KG + "schemeVersion"), L(version))
    for iri in scheme.iris:
        yield T(build, N(PROV + "used"), N(iri))
    yield from agent[1:]


def agent_triples(activity, base: str = DEFAULT_BASE) -> Iterator:
    """`activity prov:wasAssociatedWith` the kg software agent of this version, then the agent's description."""
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    agent = N(base + "agent/kg-" + slug(__version__))
    yield T(activity, N(PROV + "wasAssociatedWith"), agent)
    yield T(agent, N(RDF + "type"), N(PROV + "SoftwareAgent"))
    yield T(agent, N(RDFS + "label"), L(f"kg {__version__}"))
    yield T(agent, N(KG + "softwareVersion"), L(__version__))


def paper_triples(
    papers: Sequence[Paper],
    extractions: Sequence[Extraction],
    build,
    *,
    ns: Namespaces = Namespaces(),
    authors: set[str] | None = None,
    venues: set[str] | None = None,
    segments: dict[str, str] | None = None,
    annotated: bool = False,
) -> Iterator:
    """The triples of each paper in order; authors and venues already in `authors`/`venues` are not described again.

    `segments` gives each paper id its IRI segment (paper_slugs of the ids when None); `annotated`: each annotation as
    one Annotated instead of its triples.
    """
    authors = set() if authors is None else authors
    venues = set() if venues is None else venues
    segments = paper_slugs(p.id for p in papers) if segments is None else segments
    terms = _terms()
    for paper, extraction in zip(papers, extractions, strict=True):
        try:
            # Made as a list so that a record that cannot become RDF fails before any of it is written.
            made = list(_paper(paper, extraction, ns, segments[paper.id], build, venues, authors, terms, annotated))
        except Exception as exc:  # a value no term constructor accepts: name the record, not the stack
            raise InputError(f"{paper.where or paper.id}: cannot turn this record into RDF ({type(exc).__name__}: {exc})") from exc
        yield from made


@lru_cache(maxsize=1)
def _terms() -> dict:
    """Predicates, classes and datatypes made once: building a NamedNode per triple was a third of RDF time."""
    import pyoxigraph as ox

    N = ox.NamedNode
    names = {
        "a": RDF + "type", "ResearchPaper": FABIO + "ResearchPaper", "identifier": DCTERMS + "identifier",
        "title": DCTERMS + "title", "label": RDFS + "label", "abstract": DCTERMS + "abstract",
        "creator": DCTERMS + "creator", "isPartOf": DCTERMS + "isPartOf", "year": FABIO + "hasPublicationYear",
        "gYear": XSD + "gYear", "generatedBy": PROV + "wasGeneratedBy", "subject": DCTERMS + "subject",
        "Person": FOAF + "Person", "name": FOAF + "name", "Proceedings": FABIO + "ConferenceProceedings",
        "decimal": XSD + "decimal", "Annotation": OA + "Annotation", "hasBody": OA + "hasBody",
        "hasTarget": OA + "hasTarget", "score": KG + "score", "SpecificResource": OA + "SpecificResource",
        "hasSource": OA + "hasSource", "hasSelector": OA + "hasSelector",
        "PositionSelector": OA + "TextPositionSelector", "start": OA + "start", "end": OA + "end",
        "nonNegativeInteger": XSD + "nonNegativeInteger", "QuoteSelector": OA + "TextQuoteSelector",
        "exact": OA + "exact", "evaluatesOn": KG + "evaluatesOn", "proposes": KG + "proposes", "Method": KG + "Method",
        "onProperty": KG + "onProperty", "doi": BIBO + "doi", "otherId": BIBO + "identifier", "seeAlso": RDFS + "seeAlso",
    }
    terms: dict = {key: N(iri) for key, iri in names.items()}
    terms.update(offsets={}, scores={}, nodes={})  # caches of terms met while building
    return terms


def _paper(paper: Paper, ex: Extraction, ns: Namespaces, segment: str, build, venues: set[str], authors: set[str], t: dict,
           annotated: bool = False) -> Iterator:
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a = t["a"]
    p = N(f"{ns.base}paper/{segment}")
    yield T(p, a, t["ResearchPaper"])
    yield T(p, t["identifier"], L(paper.id))
    yield from _identifiers(p, paper, t)
    if paper.title:
        yield T(p, t["title"], L(paper.title))
    yield T(p, t["label"], L(paper.title or ex.label))
    yield T(p, t["abstract"], L(paper.abstract))
    creators = [N(f"{ns.base}author/{slug(name)}") for name in paper.authors]
    for creator in creators:
        yield T(p, t["creator"], creator)
    venue = N(f"{ns.base}venue/{slug(paper.venue)}") if paper.venue else None
    if venue is not None:
        yield T(p, t["isPartOf"], venue)
    if paper.year is not None:
        yield T(p, t["year"], L(f"{paper.year:04d}", datatype=t["gYear"]))
    yield T(p, t["generatedBy"], build)
    for link in ex.links:
        if link.subject:
            yield T(p, t["subject"], _node(t, link.concept))
    for link in ex.links:
        if link.dataset and link.mentions:
            yield T(p, t["evaluatesOn"], _node(t, link.concept))
    methods = [N(f"{ns.base}method/{slug(m.name)}") for m in ex.methods]
    for method in methods:
        yield T(p, t["proposes"], method)
    # Authors, venues and proposed methods are described once, where first met.
    for name, creator in zip(paper.authors, creators):
        if creator.value not in authors:
            authors.add(creator.value)
            yield T(creator, a, t["Person"])
            yield T(creator, t["name"], L(name))
    for m, method in zip(ex.methods, methods):
        if method.value not in authors:
            authors.add(method.value)
            yield T(method, a, t["Method"])
            yield T(method, t["label"], L(m.name))
    if venue is not None and venue.value not in venues:
        venues.add(venue.value)
        yield T(venue, a, t["Proceedings"])
        yield T(venue, t["label"], L(paper.venue or ""))
    key = f"{ns.base}annotation/{segment}-"
    n = 0

    def made(a: Annotated) -> Iterable:
        return (a,) if annotated else a.triples

    # Terms that repeat across papers (offsets, scores, concepts) are made once and reused.
    score_of = t["scores"]
    for link in ex.links:
        score = score_of.get(link.score) or score_of.setdefault(link.score, L(f"{link.score:.3f}", datatype=t["decimal"]))
        for mention in link.mentions:
            n += 1
            yield from made(_annotation(t, f"{key}{n}", _node(t, mention.concept), p, mention.start, mention.end, mention.exact, score))
    # The span that names each proposed method is its evidence, annotated like a concept mention.
    method_score = L(METHOD_SCORE_TEXT, datatype=t["decimal"])
    for m, method in zip(ex.methods, methods):
        n += 1
        yield from made(_annotation(t, f"{key}{n}", method, p, m.start, m.end, m.exact, method_score))
    # A concept the title names is evidenced by its span of dcterms:title (numbered last, so the
    # abstract's annotations keep the numbers they had before titles were annotated).
    for link in ex.links:
        score = score_of.get(link.score) or score_of.setdefault(link.score, L(f"{link.score:.3f}", datatype=t["decimal"]))
        for tm in link.title_mentions:
            n += 1
            yield from made(_annotation(t, f"{key}{n}", _node(t, tm.concept), p, tm.start, tm.end, tm.exact, score, t["title"]))


def _identifiers(p, paper: Paper, t: dict) -> Iterator:
    """A paper's DOI (bibo:doi), arXiv id and the ids of its other records (bibo:identifier), with links to the resolvers."""
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    if paper.doi:
        yield T(p, t["doi"], L(paper.doi))
        yield T(p, t["seeAlso"], N("https://doi.org/" + quote(paper.doi, safe="/:;()._-")))
    if paper.arxiv:
        yield T(p, t["otherId"], L("arXiv:" + paper.arxiv))
        yield T(p, t["seeAlso"], N("https://arxiv.org/abs/" + quote(paper.arxiv, safe="/._-")))
    for alias in paper.aliases:
        yield T(p, t["otherId"], L(alias))


# A method the paper names as its own contribution ("we propose QORA") is certain evidence.
METHOD_SCORE_TEXT = "1.000"


def _annotation(t: dict, iri: str, body, source, start: int, end: int, exact: str, score, on=None) -> Annotated:
    """An oa:Annotation whose target is the span [start, end) of the paper's abstract (or of the property `on`: dcterms:title)."""
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a, offset = t["a"], t["offsets"]
    ann, target = N(iri), N(f"{iri}-target")
    pos, quote_ = N(f"{iri}-position"), N(f"{iri}-quote")
    first, last, text = offset.get(start) or _offset(offset, start, t), offset.get(end) or _offset(offset, end, t), L(exact)
    made = [
        T(ann, a, t["Annotation"]), T(ann, t["hasBody"], body), T(ann, t["hasTarget"], target), T(ann, t["score"], score),
        T(target, a, t["SpecificResource"]), T(target, t["hasSource"], source),
    ]
    if on is not None:
        made.append(T(target, t["onProperty"], on))
    made += [
        T(target, t["hasSelector"], pos), T(target, t["hasSelector"], quote_),
        T(pos, a, t["PositionSelector"]), T(pos, t["start"], first), T(pos, t["end"], last),
        T(quote_, a, t["QuoteSelector"]), T(quote_, t["exact"], text),
    ]
    return Annotated(tuple(made), body, source, score, target, first, last, text, on)


def _node(t: dict, iri: str):  # -> pyoxigraph.NamedNode
    """A concept's NamedNode, made once per process."""
    import pyoxigraph as ox

    node = t["nodes"].get(iri)
    if node is None:
        node = t["nodes"][iri] = ox.NamedNode(iri)
    return node


def _offset(cache: dict, value: int, t: dict):  # -> pyoxigraph.Literal
    import pyoxigraph as ox

    cache[value] = ox.Literal(str(value), datatype=t["nonNegativeInteger"])
    return cache[value]


def without(triples_: Iterable, papers: set[str]) -> list:
    """The triples minus those of the given papers (IRIs) and of their annotations (targets, selectors): a changed paper's
    old triples, dropped before it is added again (a graph file's update, a shard folder's)."""
    triples_ = list(triples_)
    if not papers:
        return triples_
    targets = {t.subject.value for t in triples_ if t.predicate.value == OA + "hasSource" and t.object.value in papers}
    gone = set(papers) | targets
    for t in triples_:
        p = t.predicate.value
        if (p == OA + "hasTarget" and t.object.value in targets) or (p == OA + "hasSelector" and t.subject.value in targets):
            gone.add(t.subject.value if p == OA + "hasTarget" else t.object.value)
    return [t for t in triples_ if t.subject.value not in gone]
