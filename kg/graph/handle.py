"""One graph file and the query index derived from it, behind one handle: `GraphFile`.

Every write of a graph is a transaction: `GraphFile.transaction` holds the graph's lock (a second writer waits,
bounded), stamps the graph the run reads before it reads it, and hands out a `Writing` whose write, append or copy
replaces nothing that changed since; the files derived from the graph are made in it, under the same lock: the
query index with the graph, then the page and the store the command asked for. Build, update, analyze and the
cluster build write through it; none locks on its own.

A `Writing` writes through `GraphFile.write` or `GraphFile.append`: the file is written
atomically (kg.graph.atomic), its stamp taken from the open file before it is renamed
(kg.graph.stamp), and its query index (kg.graph.index_writer) written from the same triples as
they stream past, or from a copy of the source's index when only triples are added. A build, an
update and an analysis differ only in which triples they hand over. What an update must know of
a graph it adds to comes from `known`: the query index when it is fresh (made by one parse when
it is missing), else one streaming pass over the file.

A shard folder (kg.graph.shards, written by `kg build --engine dask`) is a graph to every reader, behind the same
handle: it parses as its listed shards in manifest order (N-Triples), its stamp is its manifest's, and its query
index and store sit beside the folder. kg writes one only through the cluster build: `write` and `append` refuse it.

`refuse_overwrite` is the one check of a run's outputs against its inputs, here because it must know what belongs to
a graph: a shard folder's files, its query index and its store (`store_dir`) beside it.
"""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Sequence

from kg.core import progress
from kg.core.errors import InputError, KgError, UsageError
from kg.graph import files, index_file, index_writer, shards, stamp
from kg.graph.annotations import Annotated
from kg.graph.atomic import atomic_write, locked
from kg.graph.stamp import GraphIndex
from kg.graph.vocabulary import Namespaces

APPENDABLE = ("ttl", "nt")  # the formats triples are appended to (others are written whole)
Derive = Callable[[Path], Any]  # makes one file derived from the graph at a path (its page, its store), from the version written
STORE_SUFFIX = ".oxigraph"  # the folder of a graph's SPARQL store (kg.sparql.store), beside it


def store_dir(graph: str | Path) -> Path:
    """Where the persisted SPARQL store of a graph lives (kg.sparql.store): `x.ttl` -> `x.oxigraph/`, a shard folder `x`: `x.oxigraph/`."""
    return stamp.beside(graph, STORE_SUFFIX)


def refuse_overwrite(output: str | Path, inputs: Iterable[str | Path]) -> None:
    """Refuse to write `output` over one of `inputs` or over what belongs to one: the same path once resolved, or the same
    file through a link; inside a shard folder (its shards, manifest and sidecars: only the cluster build writes there);
    the query index or inside the SPARQL store of an input. The output would replace the input (or what kg reads in
    its place) before anyone sees that the run read it. The one check of outputs against inputs of every command."""
    out = Path(output)
    for given in inputs:
        source = Path(given)
        found = next((what for what, path in ((str(source), source), (f"the query index of {source}", index_file.index_path(source)))
                      if _same(out, path)), None)
        if found is None and shards.is_sharded(source) and _within(out, source):
            found = f"in the shard folder {source}"
        if found is None and _within(out, store_dir(source)):
            found = f"in the SPARQL store of {source}"
        if found is not None:
            raise UsageError(f"{out}: is also an input of this run ({found}); write the output to another file")


def _same(one: Path, other: Path) -> bool:
    """The same path once resolved, or the same file through a link."""
    if one.resolve() == other.resolve():
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist (yet)
        return False


def _within(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies inside it, once both are resolved."""
    return path.resolve().is_relative_to(folder.resolve())


@dataclass(frozen=True)
class Known:
    """What a graph holds (its papers, builds, authors, venues, scheme versions) and its fresh query index, if any."""

    facts: GraphIndex
    index: Path | None


@dataclass(frozen=True)
class GraphFile:
    """A graph file: where it is, its format, its stamp, and the only way kg writes one (with its query index)."""

    path: Path

    @classmethod
    def existing(cls, path: str | Path) -> GraphFile:
        """The handle of a graph file or shard folder that is there (else kg.graph.files.no_such_graph, the one error for it)."""
        found = cls(Path(path))
        if not found.exists:
            raise files.no_such_graph(found.path)
        return found

    @property
    def exists(self) -> bool:
        """Whether the graph is there: a file, or a folder with a shard manifest."""
        return self.path.is_file() or self.sharded

    @property
    def sharded(self) -> bool:
        """Whether the graph is a shard folder (kg.graph.shards), which only the cluster build writes."""
        return shards.is_sharded(self.path)

    @property
    def format(self) -> str:
        """The format name of the file, from its suffix (Turtle by default); N-Triples for a shard folder."""
        return "nt" if self.sharded else files.format_for(None, self.path)

    def sources(self) -> list[Path]:
        """The files the graph is read from, in order: the file, or the shards its manifest lists (kg.graph.files.sources)."""
        return files.sources(self.path)

    def size(self) -> int:
        """The bytes of the graph: of the file, or of the shards its manifest lists."""
        return sum(source.stat().st_size for source in self.sources())

    def refuse_sharded(self) -> None:
        """Refuse a shard folder as a graph that a command other than the cluster build writes, saying what to do."""
        if self.sharded:
            raise UsageError(f"{self.path}: is a sharded graph, a folder only 'kg build --engine dask' writes: add papers with "
                             f"'kg build --engine dask --update {self.path} INPUT...', or write to a graph file (-o FILE.ttl)")

    def stamp(self) -> dict:
        """Size, modification time and a hash of the content: the version of the file a derived file describes."""
        return stamp.stamp(self.path)

    def parse(self) -> Iterator:
        """Stream the file's triples."""
        return files.parse(self.path)

    def read_triples(self) -> list:
        return files.read_triples(self.path)

    @contextmanager
    def transaction(self, source: GraphFile | None = None, *, doing: str = "updated", derived: Sequence[Derive] = (),
                    kept: Sequence[Derive] = (), placed: Sequence[Derive] = ()) -> Iterator[Writing]:
        """Begin the one write of this graph a command makes: hold its lock (kg.graph.atomic.locked: a second
        writer waits, bounded), and, when the write is made from `source` (the graph this run reads; often this
        one), take its stamp now, before it is read, so the `Writing` replaces nothing that changed since.
        `doing`: what the run does to the source, for the message when it changed ("updated", "analysed").
        `derived`: what makes the other files derived from the graph (its HTML page, its SPARQL store), each called
        with the graph's path once it was written, still under the lock, so they describe the version written; `kept`:
        what makes those that must be there when the transaction writes nothing (an up-to-date graph's store), likewise;
        `placed`: what starts as soon as the graph file is in place, before its query index's tables are made (kg build:
        the store's load in another process, which reads only the file, and letting the papers go)."""
        with locked(self.path):
            if source is not None:
                source = GraphFile.existing(source.path)  # still there once the lock is held
            writing = Writing(self, source, source.stamp() if source is not None else None, doing, placed=list(placed))
            yield writing
            for make in derived if writing.written else kept:
                make(self.path)

    def fresh_index(self) -> Path | None:
        """The query index of the file if it was made from the file as it is now (none is made)."""
        return index_file.fresh(self.path)

    def index(self) -> Path | None:
        """The fresh query index of the file, made from a parse of it when missing or stale; None when it cannot be made."""
        found = self.fresh_index()
        if found is not None or not self.exists:
            return found
        for source in self.sources():  # a file no reader may parse (a broken manifest) is refused here, not after the engine or kg serve's workers start
            files.rdf_format(source)
        return self.remake_index(f"indexing {self.path} for the named queries (once per version of the graph)")

    def remake_index(self, label: str | None = None) -> Path | None:
        """The query index made again from a parse of the file (over one that is stale or cannot be read); None if it cannot be."""
        try:
            with progress.step(label or f"indexing {self.path} again", unit="triples") as tick:
                return index_writer.write(self.path, progress.counted(self.parse(), tick), self.stamp())
        except KgError:
            return None  # not a readable graph: the engine gives the message

    def known(self) -> Known:
        """What an update must know of the graph: from its fresh query index (made by one parse if missing), else a scan."""
        index = self.index()
        if index is not None:
            try:
                return Known(index_file.known(index), index)
            except sqlite3.DatabaseError as exc:  # a damaged index whose stamp still matches: read the graph, write a new index
                if not index_file.damaged(exc):
                    raise
                index_file.unreadable(index, exc, f"reading {self.path} instead")
        return Known(stamp.scan(self.path), None)

    def unchanged(self, before: dict, doing: str = "updated") -> None:
        """Fail if the file is no longer the one whose stamp was `before` (another writer replaced or edited it)."""
        if stamp.stamp(self.path) != before:
            raise InputError(f"{self.path} changed while it was being {doing} (another kg or another program wrote it); "
                             "nothing was written, run it again")

    def write(self, triples: Iterable, added: Iterable = (), *, ns: Namespaces, fmt: str | None = None, label: str | None = None,
              base: Path | None = None, keep_base: Callable[[], bool] = lambda: True,
              source: GraphFile | None = None, before: dict | None = None, doing: str = "updated",
              placed: Callable[[], Any] = lambda: None) -> Path:
        """Write `triples` then `added` to this file, atomically, and its query index from them (`placed`: called once
        the file is in place, before the index's tables are made). Among `triples`, a build's annotations may come
        whole (kg.graph.annotations.Annotated): their triples are written, and the index takes their rows from them.

        `base`: a fresh index of exactly `triples`, copied and given only `added` (`keep_base()`, asked after the
        triples streamed past, says whether it still holds: else no index is written, and the next query makes one).
        `source` and `before`: the graph these triples were read from and its stamp then; if it changed since,
        nothing is written.
        """
        self.refuse_sharded()
        name = files.format_for(fmt, self.path)
        writer = index_writer.writer(self.path, base)

        def stream_() -> Iterator:
            indexed = writer if base is None else None
            for t in triples:
                if indexed is not None:
                    indexed.add(t)
                if type(t) is Annotated:
                    yield from t.triples
                else:
                    yield t
            yield from index_writer.kept(added, writer)

        try:
            with atomic_write(self.path) as out:
                files.write(stream_(), out, name, ns=ns, label=label)
                stamped = self._finish(out, source, before, doing)
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        try:
            placed()
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        if writer is not None:
            if base is not None and not keep_base():
                writer.abort()
            else:
                with progress.step(f"indexing {self.path} for the named queries"):
                    writer.close(stamped)
        return self.path

    def append(self, source: GraphFile, added: list, *, ns: Namespaces, before: dict, base: Path, doing: str = "updated") -> Path:
        """Write `source`'s bytes, then `added`, as a block that stands on its own; its index: `base` (source's) plus `added`.

        The block declares its own @prefix lines again: the prefixes in force at the end of the file
        are whatever the file last declared (a graph ending in `@prefix paper: <http://elsewhere/>`
        would otherwise move every appended paper there), and Turtle lets a later declaration win.
        """
        self.refuse_sharded()
        source.refuse_sharded()
        buffer = io.BytesIO()
        files.write(added, buffer, self.format, ns=ns)
        with atomic_write(self.path) as out:
            size = source.copy_into(out)
            if size and not source._ends_with_newline(size):
                out.write(b"\n")
            out.write(buffer.getvalue())
            stamped = self._finish(out, source, before, doing)
        index_writer.write(self.path, added, stamped, base=base)
        return self.path

    def copy_from(self, source: GraphFile, index: Path | None) -> Path:
        """This file as a byte copy of `source`, with a copy of its fresh index (`index`, if any)."""
        self.refuse_sharded()
        source.refuse_sharded()
        with atomic_write(self.path) as out:
            source.copy_into(out)
            stamped = stamp.stamp_written(out, self.path)
        if index is not None:
            index_writer.write(self.path, (), stamped, base=index)
        return self.path

    def _finish(self, out: IO[bytes], source: GraphFile | None, before: dict | None, doing: str) -> dict | None:
        """The stamp of the file being written, once its source is known to be the file that was read."""
        if source is not None and before is not None:
            source.unchanged(before, doing)
        return stamp.stamp_written(out, self.path)

    def copy_into(self, stream: IO[bytes]) -> int:
        """Copy the file's bytes to the start of a freshly opened binary stream; return how many.

        The kernel copies (copy_file_range, a reflink where the file system can): reading the 124 MB
        of a 21k-paper graph into Python and writing it out again took 0.7 s, the kernel copy 0.08 s.
        """
        with self.path.open("rb") as source:
            size = os.fstat(source.fileno()).st_size
            stream.flush()
            done = 0
            try:
                while done < size:
                    n = os.copy_file_range(source.fileno(), stream.fileno(), size - done)
                    if n == 0:
                        break
                    done += n
            except (AttributeError, OSError):  # not Linux, or file systems that cannot: the rest in Python
                source.seek(done)
                stream.seek(done)
                shutil.copyfileobj(source, stream, 1 << 20)
            stream.seek(0, os.SEEK_END)  # the buffered stream goes on where the copy ended
            return size

    def _ends_with_newline(self, size: int) -> bool:
        with self.path.open("rb") as stream:
            stream.seek(size - 1)
            return stream.read(1) == b"\n"


@dataclass(frozen=True)
class Writing:
    """One write of a graph, begun by `GraphFile.transaction` under the graph's lock: the graph file and its query
    index written (or copied) at most once, and only over a source still as it was when the run began to read it."""

    target: GraphFile
    source: GraphFile | None  # the graph the written triples were read from (None: nothing was read)
    before: dict | None  # its stamp when the transaction began
    doing: str = "updated"
    done: list[Path] = field(default_factory=list)  # the graph once written (then the derived files are made)
    placed: list[Derive] = field(default_factory=list)  # started once the graph file is in place (then emptied)

    @property
    def written(self) -> bool:
        """Whether the graph was written (not left as it was)."""
        return bool(self.done)

    def unchanged(self) -> None:
        """Fail if the source is no longer the version this run read (kg.core.errors.InputError): nothing is written."""
        if self.source is not None and self.before is not None:
            self.source.unchanged(self.before, self.doing)

    def write(self, triples: Iterable, added: Iterable = (), **options: Any) -> Path:
        """`GraphFile.write` of the target, checked against the source (options: those of `GraphFile.write`)."""
        return self._did(self.target.write(triples, added, source=self.source, before=self.before, doing=self.doing,
                                           placed=self._place, **options))

    def append(self, added: list, *, ns: Namespaces, base: Path) -> Path:
        """`GraphFile.append` of `added` to the source's bytes, checked against the source."""
        assert self.source is not None and self.before is not None, "an append is made from a graph that was read"
        return self._did(self.target.append(self.source, added, ns=ns, before=self.before, base=base, doing=self.doing))

    def copy(self, index: Path | None) -> Path:
        """`GraphFile.copy_from` the source (with its fresh index `index`), checked against it."""
        assert self.source is not None, "a copy is made from a graph that was read"
        self.unchanged()
        return self._did(self.target.copy_from(self.source, index))

    def _place(self) -> None:
        """Start what waits only for the graph file to be in place (each once)."""
        while self.placed:
            self.placed.pop(0)(self.target.path)

    def _did(self, path: Path) -> Path:
        self._place()  # an append or a copy: its file is in place now
        self.done.append(path)
        return path
