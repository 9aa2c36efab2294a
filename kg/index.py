"""What `kg build --update` must know of a graph file, and the stamp that says which version of a file an index describes.

The update reads the papers already in a graph (their ids and abstract hashes, the builds, authors,
venues and scheme versions) from the graph's query index (kg.qindex.known), which every build and
update writes; with no fresh index (one is made by parsing the file), from one streaming pass over
the graph (`scan`). The stamp is the graph file's size, modification time and a hash of its last
64 KiB: an index made for another version of the file is stale and never read.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from . import graphio
from .errors import InputError
from .facts import digest, of_triples

TAIL = 1 << 16  # bytes at the end of the graph hashed into the stamp: appends and edits there change it


@dataclass(frozen=True)
class GraphIndex:
    """The papers, builds, authors, venues and scheme versions of one graph file."""

    digests: dict[str, str] = field(default_factory=dict)  # paper IRI -> sha256 of its dcterms:abstract
    ids: dict[str, str] = field(default_factory=dict)  # dcterms:identifier -> paper IRI
    builds: tuple[str, ...] = ()  # prov:Activity IRIs, in file order
    authors: frozenset[str] = frozenset()  # foaf:Person IRIs
    venues: frozenset[str] = frozenset()  # fabio:ConferenceProceedings IRIs
    versions: frozenset[str] = frozenset()  # kg:schemeVersion values


def scan(graph: str | Path) -> GraphIndex:
    """What a graph file holds, by one streaming pass over it (kg.facts reads the triples)."""
    import pyoxigraph as ox

    graph = Path(graph)
    rdf_format = graphio.rdf_format(graph)
    try:
        facts = of_triples(ox.parse(path=str(graph), format=rdf_format))
    except FileNotFoundError:
        raise InputError(f"{graph}: no such graph file; build it first with 'kg build INPUT -o {graph}'") from None
    except SyntaxError as exc:
        raise InputError(f"{graph}: not valid RDF ({exc})") from None
    return GraphIndex({iri: digest(text) for iri, text in facts.abstracts.items()}, dict(facts.identifiers), facts.builds,
                      facts.authors, facts.venues, facts.versions)


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
