"""What `kg build --update` must know of a graph file, and the stamp that says which version of a file an index describes.

The update reads the papers already in a graph (their ids and abstract hashes, the builds, authors,
venues and scheme versions) from the graph's query index (kg.graph.index_file.known), which every build and
update writes; with no fresh index (one is made by parsing the file), from one streaming pass over
the graph (`scan`).

The stamp is the graph file's size, modification time and a SHA-256 of its whole content: an index
made for another version of the file is stale and never read. (A hash of the file's last 64 KiB
missed an edit in the middle that kept the size, its mtime set back.) Hashing reads the file, about
0.2 s for the 124 MB of a 21k-paper graph, so `current` hashes only when it must: a reader records
the file's identity (device, inode, size, mtime and ctime, which no program can set back) beside a
stamp it has verified, and while that identity holds the file is the one hashed. As git does with
racily clean files, a file changed in the last SETTLE seconds is hashed every time: an edit within
the same tick of a coarse ctime would keep the identity.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kg.core.defaults import VERSION
from kg.graph import files, shards
from kg.graph.facts import digest, of_triples

SETTLE = 2.0  # seconds after its last change before a file's identity stands for its verified content
_BLOCK = 1 << 20


@dataclass(frozen=True)
class GraphIndex:
    """The papers, builds, authors, venues and scheme versions of one graph file."""

    digests: dict[str, str] = field(default_factory=dict)  # paper IRI -> sha256 of its dcterms:abstract
    ids: dict[str, str] = field(default_factory=dict)  # dcterms:identifier -> paper IRI
    builds: tuple[str, ...] = ()  # prov:Activity IRIs, in file order
    authors: frozenset[str] = frozenset()  # foaf:Person IRIs
    venues: frozenset[str] = frozenset()  # fabio:ConferenceProceedings IRIs
    versions: frozenset[str] = frozenset()  # kg:schemeVersion values
    dois: dict[str, str] = field(default_factory=dict)  # bibo:doi -> paper IRI (from the query index; a scan leaves it empty)


def scan(graph: str | Path) -> GraphIndex:
    """What a graph file holds, by one streaming pass over it (kg.graph.files.parse, kg.graph.facts reads the triples)."""
    facts = of_triples(files.parse(graph))
    return GraphIndex({iri: digest(text) for iri, text in facts.abstracts.items()}, dict(facts.identifiers), facts.builds,
                      facts.authors, facts.venues, facts.versions)


def stamped(graph: Path) -> Path:
    """The file whose stamp is a graph's: the graph file, or a shard folder's manifest (kg.graph.shards).

    A cluster build writes each shard once, atomically, and the manifest last, atomically, on every build and
    update; the manifest lists each shard with its size in bytes. So a new version of the folder is a new
    manifest, and the manifest's stamp (with the folder's name as `source`) stands for the folder.
    """
    return graph / shards.MANIFEST if shards.is_sharded(graph) else graph


def stamp(graph: Path) -> dict:
    """Size, modification time and a hash of the whole content of a graph file (of a shard folder: of its manifest,
    `stamped`): what an index is valid for."""
    with stamped(graph).open("rb") as stream:
        return _stamp_fd(stream.fileno(), graph.name)


def stamp_written(stream: IO[bytes], graph: str | Path) -> dict | None:
    """The stamp of a graph being written through `stream` (from kg.graph.atomic.atomic_write), taken before it is renamed.

    Taken from the open file, not the path: another process replacing the graph at the same moment
    cannot lend its stamp to this index. None where the platform cannot read the file back (no pread).
    """
    stream.flush()  # later writes would change the mtime; fsync and the rename do not
    if not hasattr(os, "pread"):
        return None
    return _stamp_fd(stream.fileno(), Path(graph).name)


def current(graph: Path, recorded: dict, known: dict | None) -> tuple[bool, dict | None]:
    """Whether the graph file is still the one `recorded` (a stamp) describes, and the identity to record as
    known for the next reader (None: nothing new to record).

    `known`: the identity a reader recorded after verifying the same stamp. While the file has that
    identity it is not read again; otherwise it is hashed.
    """
    try:
        st = os.stat(stamped(graph))
    except OSError:
        return False, None
    if (recorded.get("source"), recorded.get("size"), recorded.get("mtime_ns")) != (graph.name, st.st_size, st.st_mtime_ns):
        return False, None
    found = identity(st)
    if known is not None and known == found:
        return True, None
    try:
        same = stamp(graph) == recorded
    except OSError:
        return False, None
    settled = time.time_ns() - st.st_ctime_ns > SETTLE * 1e9
    return same, found if same and settled else None


def beside(graph: str | Path, suffix: str) -> Path:
    """Where a file derived from a graph lives: beside it, `x.ttl` -> `x{suffix}` (a shard folder `x`: `x{suffix}`)."""
    graph = Path(graph)
    return graph.with_name((graph.name if graph.is_dir() else graph.stem) + suffix)


def derived(graph_stamp: dict | None, kind: str, version: int) -> dict:
    """What a file derived from a graph (its query index, its SPARQL store) records: the graph file's stamp, kg's
    version, and the derived file's own format version under `kind`. Any other record makes the derived file stale."""
    return {"graph": graph_stamp, "kg": VERSION, kind: version}


def describes(graph: Path, recorded: object, kind: str, version: int, known: object = None) -> tuple[bool, dict | None]:
    """Whether a derived file that recorded `recorded` (a `derived` record) describes the graph file as it is now, and
    the identity to record as known for the next reader (see `current`; `known`: the one recorded before, if any)."""
    if not isinstance(recorded, dict) or (recorded.get("kg"), recorded.get(kind)) != (VERSION, version) or not isinstance(recorded.get("graph"), dict):
        return False, None
    return current(graph, recorded["graph"], known if isinstance(known, dict) else None)


def identity(st: os.stat_result) -> dict:
    """What changes whenever a file's content may have: its device, inode, size, mtime and ctime."""
    return {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def _stamp_fd(fd: int, name: str) -> dict:
    st = os.fstat(fd)
    digest = hashlib.sha256()
    if hasattr(os, "pread"):
        done = 0
        while block := os.pread(fd, _BLOCK, done):
            digest.update(block)
            done += len(block)
    else:  # pragma: no cover - not POSIX
        with open(fd, "rb", closefd=False) as stream:
            stream.seek(0)
            while block := stream.read(_BLOCK):
                digest.update(block)
    return {"source": name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest.hexdigest()}
