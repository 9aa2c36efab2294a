"""Stage 3: turn papers and their extractions into RDF, and read and write RDF files.

Triples are made as pyoxigraph terms in one fixed order and written by pyoxigraph's
serializers (measured 500x faster than rdflib's Turtle writer at 10k papers); Python
users get an rdflib.Graph over an Oxigraph store (oxrdflib) from `load`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import IO, Iterable, Iterator, Sequence
from urllib.parse import quote

from . import __version__
from .errors import InputError, UsageError
from .extract import Extraction
from .ingest import Paper
from .scheme import Scheme

DEFAULT_BASE = "https://w3id.org/kg/"
KG = "https://w3id.org/kg/ontology#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
DCTERMS = "http://purl.org/dc/terms/"
FABIO = "http://purl.org/spar/fabio/"
FOAF = "http://xmlns.com/foaf/0.1/"
OA = "http://www.w3.org/ns/oa#"
PROV = "http://www.w3.org/ns/prov#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
OWL = "http://www.w3.org/2002/07/owl#"

# Output formats by name: (pyoxigraph format attribute, file suffix).
FORMATS: dict[str, tuple[str, str]] = {
    "ttl": ("TURTLE", ".ttl"),
    "nt": ("N_TRIPLES", ".nt"),
    "nq": ("N_QUADS", ".nq"),
    "trig": ("TRIG", ".trig"),
    "jsonld": ("JSON_LD", ".jsonld"),
    "xml": ("RDF_XML", ".rdf"),
}


# Other suffixes read as one of FORMATS.
SUFFIX_ALIASES = {".json": "jsonld", ".xml": "xml", ".owl": "xml", ".turtle": "ttl"}


@dataclass(frozen=True)
class Namespaces:
    """The IRI folders under one configurable base."""

    base: str = DEFAULT_BASE

    def __post_init__(self) -> None:
        if not re.match(r"^[a-z][a-z0-9+.-]*:[^\s<>\"{}|\\^`]*[/#]$", self.base):
            raise UsageError(f"base IRI {self.base!r} must be an absolute IRI ending in '/' or '#'")

    def prefixes(self) -> dict[str, str]:
        return {
            "paper": self.base + "paper/",
            "ann": self.base + "annotation/",
            "author": self.base + "author/",
            "venue": self.base + "venue/",
            "method": self.base + "method/",
            "kgc": "https://w3id.org/kg/concept/",
            "kg": KG,
            "rdfs": RDFS,
            "xsd": XSD,
            "dcterms": DCTERMS,
            "fabio": FABIO,
            "foaf": FOAF,
            "oa": OA,
            "prov": PROV,
            "skos": SKOS,
            "owl": OWL,
        }

    def paper(self, paper_id: str) -> str:
        return f"{self.base}paper/{slug(paper_id)}"


@lru_cache(maxsize=1 << 16)  # authors and venues repeat across papers
def slug(text: str) -> str:
    """A readable, valid IRI segment for any text: lower-case words joined by '-', the rest %-encoded."""
    text = re.sub(r"[\s/#?]+", "-", text.strip().lower()).strip("-")
    segment = quote(text, safe="-._~") or "x"
    # A trailing dot is %-encoded: "." and ".." would be dot-segments (which IRI resolution
    # removes), and rdflib's Turtle parser rejects the escaped final dot of `author:j\.`.
    return re.sub(r"\.+$", lambda m: "%2E" * len(m.group()), segment)


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
            return datetime.fromtimestamp(int(epoch), tz=timezone.utc)
        except ValueError:
            raise UsageError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds") from None
    return datetime.now(timezone.utc).replace(microsecond=0)


def triples(
    papers: Sequence[Paper],
    extractions: Sequence[Extraction],
    scheme: Scheme,
    *,
    ns: Namespaces = Namespaces(),
    inputs: Sequence[str] = (),
) -> Iterator:
    """Every triple of a built graph, in a fixed order: scheme, provenance, then paper by paper."""
    yield from scheme.triples
    build = build_node(papers, ns)
    yield from provenance(build, papers, scheme, ns=ns, inputs=inputs)
    yield from paper_triples(papers, extractions, build, ns=ns)


def build_node(papers: Sequence[Paper], ns: Namespaces = Namespaces()):  # -> pyoxigraph.NamedNode
    """The prov:Activity of a build: named by a hash of the ids of the papers it made."""
    import pyoxigraph as ox

    return ox.NamedNode(ns.base + "build/" + hashlib.sha256("\n".join(p.id for p in papers).encode()).hexdigest()[:16])


def provenance(
    build,
    papers: Sequence[Paper],
    scheme: Scheme,
    *,
    ns: Namespaces = Namespaces(),
    inputs: Sequence[str] = (),
    informed_by: Sequence[str] = (),
) -> Iterator:
    """The triples describing one build (or update) activity and the kg software agent."""
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a = N(RDF + "type")
    yield T(build, a, N(PROV + "Activity"))
    yield T(build, N(RDFS + "label"), L(f"kg build of {len(papers)} papers"))
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
) -> Iterator:
    """The triples of each paper in order; authors and venues already in `authors`/`venues` are not described again.

    `segments` gives each paper id its IRI segment (paper_slugs of the ids when None).
    """
    authors = set() if authors is None else authors
    venues = set() if venues is None else venues
    segments = paper_slugs(p.id for p in papers) if segments is None else segments
    terms = _terms()
    for paper, extraction in zip(papers, extractions, strict=True):
        try:
            # Made as a list so that a record that cannot become RDF fails before any of it is written.
            made = list(_paper(paper, extraction, ns, segments[paper.id], build, venues, authors, terms))
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
        "onProperty": KG + "onProperty",
    }
    terms: dict = {key: N(iri) for key, iri in names.items()}
    terms.update(offsets={}, scores={}, nodes={})  # caches of terms met while building
    return terms


def _paper(paper: Paper, ex: Extraction, ns: Namespaces, segment: str, build, venues: set[str], authors: set[str], t: dict) -> Iterator:
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a = t["a"]
    p = N(f"{ns.base}paper/{segment}")
    yield T(p, a, t["ResearchPaper"])
    yield T(p, t["identifier"], L(paper.id))
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
        yield T(venue, t["label"], L(paper.venue))
    key = f"{ns.base}annotation/{segment}-"
    n = 0
    # Terms that repeat across papers (offsets, scores, concepts) are made once and reused.
    score_of = t["scores"]
    for link in ex.links:
        score = score_of.get(link.score) or score_of.setdefault(link.score, L(f"{link.score:.3f}", datatype=t["decimal"]))
        for m in link.mentions:
            n += 1
            yield from _annotation(t, f"{key}{n}", _node(t, m.concept), p, m.start, m.end, m.exact, score)
    # The span that names each proposed method is its evidence, annotated like a concept mention.
    method_score = L(METHOD_SCORE_TEXT, datatype=t["decimal"])
    for m, method in zip(ex.methods, methods):
        n += 1
        yield from _annotation(t, f"{key}{n}", method, p, m.start, m.end, m.exact, method_score)
    # A concept the title names is evidenced by its span of dcterms:title (numbered last, so the
    # abstract's annotations keep the numbers they had before titles were annotated).
    for link in ex.links:
        score = score_of.get(link.score) or score_of.setdefault(link.score, L(f"{link.score:.3f}", datatype=t["decimal"]))
        for m in link.title_mentions:
            n += 1
            yield from _annotation(t, f"{key}{n}", _node(t, m.concept), p, m.start, m.end, m.exact, score, t["title"])


# A method the paper names as its own contribution ("we propose QORA") is certain evidence.
METHOD_SCORE_TEXT = "1.000"


def _annotation(t: dict, iri: str, body, source, start: int, end: int, exact: str, score, on=None) -> Iterator:
    """An oa:Annotation whose target is the span [start, end) of the paper's abstract (or of the property `on`: dcterms:title)."""
    import pyoxigraph as ox

    N, L, T = ox.NamedNode, ox.Literal, ox.Triple
    a, offset = t["a"], t["offsets"]
    ann, target = N(iri), N(f"{iri}-target")
    pos, quote_ = N(f"{iri}-position"), N(f"{iri}-quote")
    yield T(ann, a, t["Annotation"])
    yield T(ann, t["hasBody"], body)
    yield T(ann, t["hasTarget"], target)
    yield T(ann, t["score"], score)
    yield T(target, a, t["SpecificResource"])
    yield T(target, t["hasSource"], source)
    if on is not None:
        yield T(target, t["onProperty"], on)
    yield T(target, t["hasSelector"], pos)
    yield T(target, t["hasSelector"], quote_)
    yield T(pos, a, t["PositionSelector"])
    yield T(pos, t["start"], offset.get(start) or _offset(offset, start, t))
    yield T(pos, t["end"], offset.get(end) or _offset(offset, end, t))
    yield T(quote_, a, t["QuoteSelector"])
    yield T(quote_, t["exact"], L(exact))


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


def format_for(name: str | None, path: str | Path | None = None) -> str:
    """The output format name from an explicit name or a file suffix (Turtle by default)."""
    if name is None and path is not None:
        suffix = Path(path).suffix.lower()
        name = next((k for k, (_, s) in FORMATS.items() if s == suffix), None) or SUFFIX_ALIASES.get(suffix, "ttl")
    name = name or "ttl"
    if name not in FORMATS:
        raise UsageError(f"unknown RDF format {name!r} (available: {', '.join(FORMATS)})")
    return name


def write(triples_: Iterable, stream: IO[bytes], fmt: str = "ttl", *, ns: Namespaces = Namespaces()) -> None:
    """Serialize triples to a binary stream in one of FORMATS."""
    import pyoxigraph as ox

    rdf_format = getattr(ox.RdfFormat, FORMATS[format_for(fmt)][0])
    items: Iterable = triples_
    if rdf_format.supports_datasets:
        items = (ox.Quad(t.subject, t.predicate, t.object) for t in triples_)
    if rdf_format == ox.RdfFormat.RDF_XML:
        items = _xml_checked(items)
    prefixes = ns.prefixes() if rdf_format in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML) else None
    ox.serialize(items, stream, format=rdf_format, prefixes=prefixes)


# Characters XML 1.0 cannot carry (most C0 controls, surrogates, U+FFFE/U+FFFF), and \r,
# which XML parsers turn into \n. Ingest folds them all into spaces; a graph read from
# elsewhere may still hold them, and pyoxigraph would write them raw (invalid XML).
_NOT_XML = re.compile("[^\t\n\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_checked(items: Iterable) -> Iterator:
    """Pass triples through, failing on the first string that RDF/XML cannot carry."""
    for item in items:
        for term in (item.subject, item.object):
            bad = _NOT_XML.search(term.value)
            if bad:
                raise UsageError(
                    f"cannot write RDF/XML: {term.value[:40]!r}… holds U+{ord(bad.group()):04X}, which XML 1.0 cannot carry; "
                    "use ttl, nt or jsonld"
                )
        yield item


def read_triples(path: str | Path) -> list:
    """Parse an RDF file (format from its suffix) into a list of pyoxigraph triples."""
    import pyoxigraph as ox

    path = Path(path)
    rdf_format = getattr(ox.RdfFormat, FORMATS[format_for(None, path)][0])
    try:
        with path.open("rb") as stream:
            return [q.triple for q in ox.parse(stream, format=rdf_format)] if rdf_format.supports_datasets else list(
                ox.parse(stream, format=rdf_format)
            )
    except FileNotFoundError:
        raise InputError(f"{path}: no such graph file; run 'kg build' first or pass the path of a .ttl file") from None
    except SyntaxError as exc:
        raise InputError(f"{path}: not valid RDF ({exc})") from None


GRAPHS_FOLDER = Path("graphs")  # where `kg build` writes graphs by default


def latest_graph(folder: str | Path = GRAPHS_FOLDER) -> Path | None:
    """The most recently written graph file in `folder` (what `kg build` or `kg analyze` wrote last), or None.

    Commands that take a graph default to it, so after `kg build my.jsonl` a query answers about
    my.jsonl, not about the bundled sample.
    """
    suffixes = {s for _, s in FORMATS.values()}
    try:
        found = [p for p in Path(folder).iterdir() if p.suffix.lower() in suffixes and p.is_file()]
    except OSError:
        return None
    return max(found, key=lambda p: (p.stat().st_mtime_ns, p.name)) if found else None


def load(path: str | Path):  # -> rdflib.Graph
    """Open an RDF file as an rdflib.Graph backed by an in-memory Oxigraph store."""
    import pyoxigraph as ox
    from oxrdflib import OxigraphStore
    from rdflib import Graph
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    store = ox.Store()
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object) for t in read_triples(path))
    # The triples sit in the store's default graph; rdflib must be told to look there.
    graph = Graph(store=OxigraphStore(store=store), identifier=DATASET_DEFAULT_GRAPH_ID)
    for prefix, iri in Namespaces().prefixes().items():
        graph.bind(prefix, iri)
    return graph
