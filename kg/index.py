"""The sidecar index of a graph file: what `kg build --update` must know about the papers already in it.

`graphs/x.ttl` gets `graphs/x.kg-index.json`, written by every build and update of a Turtle or
N-Triples graph, just after the graph itself. It is stamped with the size, modification time and a
hash of the last 64 KiB of the graph it describes, so an index that no longer matches its graph
(the file was edited, replaced, or written by another tool) is ignored. An update reads the index
instead of parsing the whole graph (2.4 million triples, ~9 s at 21k papers); with no usable index
it makes one streaming pass over the graph, keeping only the few predicates it needs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Sequence

from . import __version__, rdf
from .atomic import atomic_write
from .errors import InputError, KgError
from .extract import Extraction
from .ingest import Paper
from .scheme import Scheme

SUFFIX = ".kg-index.json"
FORMAT = 1  # bump when the fields change: an index of another format is ignored
TAIL = 1 << 16  # bytes at the end of the graph hashed into the stamp: appends and edits there change it
INDEXED = ("ttl", "nt")  # the formats an update appends to (others are rewritten whole anyway)


@dataclass(frozen=True)
class GraphIndex:
    """The papers, builds, authors, venues, scheme versions and annotation counts of one graph file."""

    digests: dict[str, str] = field(default_factory=dict)  # paper IRI -> sha256 of its dcterms:abstract
    ids: dict[str, str] = field(default_factory=dict)  # dcterms:identifier -> paper IRI
    builds: tuple[str, ...] = ()  # prov:Activity IRIs, in file order
    authors: frozenset[str] = frozenset()  # foaf:Person IRIs
    venues: frozenset[str] = frozenset()  # fabio:ConferenceProceedings IRIs
    versions: frozenset[str] = frozenset()  # kg:schemeVersion values
    background: dict[str, int] = field(default_factory=dict)  # annotation body -> papers annotated with it

    def merged(self, more: GraphIndex) -> GraphIndex:
        """This index followed by that of triples appended after it (papers disjoint from this one's)."""
        background = Counter(self.background)
        background.update(more.background)
        return GraphIndex(
            {**self.digests, **more.digests},
            {**self.ids, **more.ids},
            (*self.builds, *more.builds),
            self.authors | more.authors,
            self.venues | more.venues,
            self.versions | more.versions,
            dict(background),
        )


def digest(abstract: str) -> str:
    """The content hash that tells an unchanged paper from a changed one."""
    return hashlib.sha256(abstract.encode("utf-8")).hexdigest()


def index_path(graph: str | Path) -> Path:
    """Where the index of a graph file lives: beside it, `x.ttl` → `x.kg-index.json`."""
    graph = Path(graph)
    return graph.with_name(graph.stem + SUFFIX)


def of_triples(triples: Iterable) -> GraphIndex:
    """The index of a stream of triples (or quads), in one pass, keeping only what it needs."""
    a, abstract, version = rdf.RDF + "type", rdf.DCTERMS + "abstract", rdf.KG + "schemeVersion"
    identifier = rdf.DCTERMS + "identifier"
    body, target, source = rdf.OA + "hasBody", rdf.OA + "hasTarget", rdf.OA + "hasSource"
    activity, person, proceedings = rdf.PROV + "Activity", rdf.FOAF + "Person", rdf.FABIO + "ConferenceProceedings"
    digests: dict[str, str] = {}
    ids: dict[str, str] = {}
    builds: list[str] = []
    authors: set[str] = set()
    venues: set[str] = set()
    versions: set[str] = set()
    bodies: dict[str, str] = {}
    targets: dict[str, str] = {}
    sources: dict[str, str] = {}
    titled: set[str] = set()  # targets in a title (kg:onProperty): the background counts abstracts, as extraction does
    on_property = rdf.KG + "onProperty"
    for t in triples:
        p = t.predicate.value
        if p == abstract:
            digests[t.subject.value] = digest(t.object.value)
        elif p == identifier:
            ids[t.object.value] = t.subject.value
        elif p == body:
            bodies[t.subject.value] = t.object.value
        elif p == target:
            targets[t.subject.value] = t.object.value
        elif p == source:
            sources[t.subject.value] = t.object.value
        elif p == on_property:
            titled.add(t.subject.value)
        elif p == a:
            kind = t.object.value
            if kind == activity:
                builds.append(t.subject.value)
            elif kind == person:
                authors.add(t.subject.value)
            elif kind == proceedings:
                venues.add(t.subject.value)
        elif p == version:
            versions.add(t.object.value)
    pairs = {(sources.get(targets.get(ann, ""), ""), concept) for ann, concept in bodies.items() if targets.get(ann) not in titled}
    background = Counter(concept for paper, concept in pairs if paper)
    return GraphIndex(digests, ids, tuple(builds), frozenset(authors), frozenset(venues), frozenset(versions), dict(background))


def of_papers(
    papers: Sequence[Paper], extractions: Sequence[Extraction], scheme: Scheme, ns: rdf.Namespaces = rdf.Namespaces()
) -> GraphIndex:
    """The index of the graph a full build writes, from its papers and extractions (no triples parsed).

    It must equal `of_triples` of that graph (tested): the IRIs are made as kg.rdf makes them.
    """
    segments = rdf.paper_slugs(p.id for p in papers)
    digests: dict[str, str] = {}
    ids: dict[str, str] = {}
    authors: set[str] = set()
    venues: set[str] = set()
    background: Counter = Counter()
    for paper, ex in zip(papers, extractions, strict=True):
        iri = f"{ns.base}paper/{segments[paper.id]}"
        digests[iri] = digest(paper.abstract)
        ids[paper.id] = iri
        authors.update(f"{ns.base}author/{rdf.slug(name)}" for name in paper.authors)
        if paper.venue:
            venues.add(f"{ns.base}venue/{rdf.slug(paper.venue)}")
        # Every mention and every proposed method is an annotation of the paper (see rdf._paper).
        bodies = {m.concept for link in ex.links for m in link.mentions}
        bodies.update(f"{ns.base}method/{rdf.slug(m.name)}" for m in ex.methods)
        background.update(bodies)
    # The scheme's own triples are few: scan them rather than assume what they hold.
    build = rdf.build_node(papers, ns).value
    built = GraphIndex(digests, ids, (build,), frozenset(authors), frozenset(venues), frozenset(scheme.versions), dict(background))
    return of_triples(scheme.triples).merged(built)


def scan(graph: str | Path) -> GraphIndex:
    """The index of a graph file by one streaming pass over it (no list of all its triples)."""
    import pyoxigraph as ox

    graph = Path(graph)
    rdf_format = getattr(ox.RdfFormat, rdf.FORMATS[rdf.format_for(None, graph)][0])
    try:
        return of_triples(ox.parse(path=str(graph), format=rdf_format))
    except FileNotFoundError:
        raise InputError(f"{graph}: no such graph file; build it first with 'kg build INPUT -o {graph}'") from None
    except SyntaxError as exc:
        raise InputError(f"{graph}: not valid RDF ({exc})") from None


def read(graph: str | Path) -> GraphIndex | None:
    """The index beside a graph file if it was written for the file as it is now; else None."""
    graph = Path(graph)
    try:
        data = json.loads(index_path(graph).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("stamp") != stamp(graph):
            return None
        return GraphIndex(
            dict(data["digests"]),
            dict(data["ids"]),
            tuple(data["builds"]),
            frozenset(data["authors"]),
            frozenset(data["venues"]),
            frozenset(data["versions"]),
            {concept: int(n) for concept, n in data["background"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, unreadable or not ours: the caller scans the graph


def load(graph: str | Path) -> tuple[GraphIndex, dict | None]:
    """The index of a graph file: from its sidecar when fresh, else by scanning the file.

    With a scanned index comes the stamp of the file as it was before the scan, to write the index
    with (a file that changes during the scan then gets a stale index, not a wrong one); None when
    the sidecar was fresh.
    """
    found = read(graph)
    if found is not None:
        return found, None
    before = stamp(Path(graph)) if Path(graph).is_file() else None
    return scan(graph), before


def write(graph: str | Path, index: GraphIndex, stamped: dict | None) -> Path | None:
    """Write the index of a graph file, with the stamp of that file as it was indexed; None if not written.

    Best effort: the index only saves time, so a folder that takes the graph but not the index (a
    full disk) must not fail the build; the next update then scans the graph.
    """
    graph = Path(graph)
    path = index_path(graph)
    if stamped is None or rdf.format_for(None, graph) not in INDEXED:
        return None
    data = {
        "format": FORMAT,
        "kg": __version__,
        "stamp": stamped,
        "builds": list(index.builds),
        "versions": sorted(index.versions),
        "ids": index.ids,
        "digests": index.digests,
        "authors": sorted(index.authors),
        "venues": sorted(index.venues),
        "background": dict(sorted(index.background.items())),
    }
    try:
        with atomic_write(path) as stream:
            stream.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (KgError, OSError):
        return None
    return path


def stamp(graph: Path) -> dict:
    """Size, modification time and a hash of the tail of a graph file: what an index is valid for."""
    with graph.open("rb") as stream:
        return _stamp_fd(stream.fileno(), graph.name)


def stamp_written(stream: IO[bytes], graph: str | Path) -> dict | None:
    """The stamp of a graph being written through `stream` (from kg.atomic.atomic_write), taken before it is renamed.

    Taken from the open file, not the path: another process replacing the graph at the same moment
    cannot lend its stamp to this index. None where the platform cannot read the file back (no pread).
    """
    stream.flush()  # later writes would change the mtime; fsync and the rename do not
    if not hasattr(os, "pread"):
        return None
    return _stamp_fd(stream.fileno(), Path(graph).name)


def _stamp_fd(fd: int, name: str) -> dict:
    st = os.fstat(fd)
    tail = os.pread(fd, TAIL, max(0, st.st_size - TAIL)) if hasattr(os, "pread") else b""
    return {"source": name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "tail": hashlib.sha256(tail).hexdigest()}
