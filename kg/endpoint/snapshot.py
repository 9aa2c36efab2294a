"""One version of a graph, held together with its query index and SPARQL store, for a server that answers from it.

`kg serve` answers named queries from the query index (kg.sparql.index) and ad-hoc SPARQL from the store
(kg.sparql.store); both are replaced beside the graph when `kg build --update` rewrites it. A server that
opened them by path answered named queries from the new graph and ad-hoc SPARQL from the old one
(issue M8). A snapshot pins one version of all three when the server starts:

* the graph file, its fresh query index and its HTML view (`kg render`, served at /graph) are hard-linked into a folder beside the graph
  (`.x.kg-serve-…/`). kg replaces both by renaming a new file over the old one, never by writing
  into it, so a link keeps the version it was made for, for workers started later too (a worker
  killed after a runaway query is replaced by one that opens the same version);
  a shard folder (kg.graph.shards) is pinned as a folder of the same name holding links to its manifest and
  to the shards that manifest lists: an update adds shards and renames a new manifest over the old one;
* the store version (kg.sparql.store) made from that file is held by this process's reader lock, so no build
  removes it; in-memory workers answer from it while they load the pinned graph (`Warming`).

Every worker opens the pinned files once and keeps them. The folder goes when the server closes; one
left by a killed server is removed by the next snapshot of the same graph (its lock is free). Where
no link can be made (a file system without them, a read-only folder), the snapshot is the graph by
its path, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kg.core.defaults import SERVE_LOAD_NICE
from kg.graph import index_file, shards
from kg.graph.handle import GraphFile
from kg.graph.stamp import stamped
from kg.sparql.store import ensure_store, hold, in_memory, open_folder, open_store

HELD = "held.lock"  # exclusive-locked by the process that holds the snapshot
WARMING = "warming.lock"  # exclusive-locked by the worker loading the pinned graph in memory: one at a time
# An in-memory worker answers from the persisted store while it loads a graph file at least this large (about 2,500
# papers, a few seconds of loading): opening the store costs about 400 MB of the worker's address space (RocksDB),
# which a smaller graph loads in less time than that is worth (`kg serve --max-memory`).
WARM_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Snapshot:
    """A pinned version: the graph file to read, its query index (None: the store answers everything) and store version."""

    graph: Path
    index: Path | None
    store: Path | None = None  # the store version folder (None: none could be made; workers load the graph in memory)
    folder: Path | None = None  # the folder of the links, removed by `release`

    @property
    def page(self) -> Path:
        """The HTML view of the graph (`kg render`) pinned with it: a link beside the pinned graph, or the page by its path."""
        return self.graph.with_suffix(".html")


_LOCKS: dict[Path, IO[bytes]] = {}  # folder of links -> its held.lock, open and locked while this process holds it


def take(graph: str | Path) -> Snapshot:
    """Pin the graph as it is now with its query index and its store version (each made if missing: once per
    version of the graph, not at every start of a server)."""
    graph = Path(graph)
    GraphFile(graph).sources()  # a shard folder whose manifest lists what no reader may read is refused, naming its manifest
    _remove_abandoned(graph)
    for _ in range(3):  # the graph replaced between two steps: pin again
        folder = _folder(graph)
        if folder is None:
            break
        try:
            found = _pin(graph, folder)
        except BaseException:
            _drop(folder)
            raise
        if found is not None:
            return found
        _drop(folder)
    # No links: the graph by its path (its index and store as they are found now)
    return Snapshot(graph, GraphFile(graph).index(), _store(graph, graph))


def _pin(graph: Path, folder: Path) -> Snapshot | None:
    """Link the graph and its index into `folder` and find its store version; None if the graph changed meanwhile
    or no link can be made there."""
    pinned = folder / graph.name
    try:
        _link(graph, pinned)
        with contextlib.suppress(FileNotFoundError):  # no page: /graph says how to draw one
            os.link(graph.with_suffix(".html"), pinned.with_suffix(".html"))
        index = GraphFile(graph).index()
        if index is not None:
            os.link(index, index_file.index_path(pinned))
    except OSError:
        return None
    if _changed(graph, pinned):  # the index found is of another version (kg replaces a graph by rename, never in place)
        return None
    version = _store(graph, pinned)
    if version is None and _changed(graph, pinned):
        return None  # (else no store can be made there: the workers load the pinned graph in memory)
    return Snapshot(pinned, index_file.index_path(pinned) if index is not None else None, version, folder)


def _link(graph: Path, pinned: Path) -> None:
    """Link the graph file to `pinned`; a shard folder: its manifest first, then the shards that manifest lists."""
    if not GraphFile(graph).sharded:
        os.link(graph, pinned)
        return
    pinned.mkdir()
    os.link(graph / shards.MANIFEST, pinned / shards.MANIFEST)
    for entry in shards.read(pinned).shards:  # each a plain name, a file of the graph's folder itself (kg.graph.shards.path_of)
        os.link(shards.path_of(graph, entry.file, graph / shards.MANIFEST), pinned / entry.file)
        if (pinned / entry.file).stat().st_size != entry.bytes:  # the shard was written again since that manifest
            raise OSError(f"{graph / entry.file}: not the shard its manifest lists")


def release(snapshot: Snapshot) -> None:
    """Remove the snapshot's links (the workers that still have the files open keep reading them)."""
    if snapshot.folder is not None:
        _drop(snapshot.folder)


def open_snapshot(snapshot: Snapshot, *, memory: bool) -> tuple[Any, sqlite3.Connection | None]:
    """In a worker: the store and an open connection to the pinned query index, both kept for the worker's life.

    The store: in memory, the graph loaded there (a large graph answers from the pinned store version until it
    is loaded: `Warming`); else the pinned store version read-only; or, a graph by its path, its persisted store.
    """
    if memory and (snapshot.store is None or GraphFile(snapshot.graph).size() < WARM_BYTES):
        store = open_store(snapshot.graph, memory=True)
    elif snapshot.store is not None:
        store = open_folder(snapshot.store)
        if memory:
            store = Warming(store, snapshot.graph, snapshot.folder / WARMING if snapshot.folder is not None else None)
    else:  # a pinned graph has no store of its own beside its link: it is loaded in memory
        store = open_store(snapshot.graph, memory=memory or snapshot.folder is not None)
    index = None
    if snapshot.index is not None:
        try:
            index = index_file.connect(snapshot.index)
        except sqlite3.Error:
            index = None  # the store answers the named queries too
    return store, index


def loading(snapshot: Snapshot) -> bool:
    """Is a worker of the server that holds `snapshot` loading its graph into memory now (`Warming`: it holds the
    folder's WARMING lock while it loads)? The queries answered meanwhile come from the store, beside the load."""
    if snapshot.folder is None:
        return False
    try:
        with (snapshot.folder / WARMING).open("ab") as turn:
            fcntl.flock(turn, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # the folder gone (the server closing)
        return False
    return False


class Warming:
    """A store that answers from the persisted store of a version until the same version, loaded in memory in
    a thread, takes over: a worker answers in a second instead of after the load (43 s at 21k papers), and
    at the in-memory speed (2-5x faster for heavy queries at 21k papers) from then on.

    `lock`: a file the workers of one server lock while they load, so they load one at a time. Three workers
    (two and the spare) loading 21k papers at once on two cores took 60-130 s, during which every query
    competed with the loads for the processor (issue 36 M4: the legitimate mix ran past half the time limit,
    and its clients were held as heavy); one at a time, the first worker answers from memory after one load,
    and the loads take at most one core. A replacement for a killed worker waits its turn too. The loading thread
    runs at a lower priority (SERVE_LOAD_NICE): the queries answered meanwhile go first (decision 0052)."""

    def __init__(self, disk: Any, graph: Path, lock: Path | None = None) -> None:
        self.store = disk
        self.loaded = threading.Event()
        threading.Thread(target=self._load, args=(graph, lock), daemon=True).start()

    def _load(self, graph: Path, lock: Path | None) -> None:
        import time

        try:
            with contextlib.suppress(OSError, AttributeError):  # Linux: this thread yields the processor to the queries
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SERVE_LOAD_NICE)
            with contextlib.ExitStack() as held:
                if lock is not None:
                    turn = held.enter_context(lock.open("ab"))
                    fcntl.flock(turn, fcntl.LOCK_EX)  # released when the load ends, or with the process
                started = time.monotonic()
                self.store = in_memory(graph)  # one assignment: a query running on the persisted store finishes there
            print(f"kg serve: a query worker answers from memory now (loaded {graph.name} in {time.monotonic() - started:.0f} s)",
                  file=sys.stderr, flush=True)
        except Exception as exc:  # the persisted store keeps answering; say why once
            print(f"kg serve: a worker answers from the persisted store; loading {graph.name} in memory failed ({exc})",
                  file=sys.stderr, flush=True)
        finally:
            self.loaded.set()

    def query(self, *args: Any, **kwargs: Any) -> Any:
        """pyoxigraph's Store.query, on the store answering now."""
        return self.store.query(*args, **kwargs)


def _store(graph: Path, pinned: Path) -> Path | None:
    """The store version of the graph as pinned, held by this process (built if missing); None if none can be
    built there or the graph changed meanwhile."""
    try:
        version = ensure_store(graph)
        hold(version)
    except OSError:
        return None
    if pinned == graph or not _changed(graph, pinned):  # the graph found fresh was the pinned file
        return version
    return None


def _changed(graph: Path, pinned: Path) -> bool:
    """True when the graph file is no longer the version pinned."""
    try:
        return os.stat(stamped(graph)).st_ino != os.stat(stamped(pinned)).st_ino
    except OSError:
        return True


def _folder(graph: Path) -> Path | None:
    """A new folder for the links beside the graph, locked by this process; None where none can be made."""
    try:
        folder = Path(tempfile.mkdtemp(prefix=f".{graph.stem}.kg-serve-", dir=graph.parent))
    except OSError:
        return None
    try:
        lock = (folder / HELD).open("ab")
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    fcntl.flock(lock, fcntl.LOCK_EX)
    _LOCKS[folder] = lock
    return folder


def _drop(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    lock = _LOCKS.pop(folder, None)
    if lock is not None:
        lock.close()


def _remove_abandoned(graph: Path) -> None:
    """Remove the link folders of servers of this graph that ended without removing theirs (killed)."""
    try:
        folders = [p for p in graph.parent.iterdir() if p.name.startswith(f".{graph.stem}.kg-serve-") and p.is_dir()]
    except OSError:
        return
    for folder in folders:
        try:
            with (folder / HELD).open("ab") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # held by a running server (BlockingIOError), or not ours to remove
            continue
