"""A persisted pyoxigraph store beside each graph file, so queries do not parse the Turtle again.

`graphs/icml2024.ttl` gets `graphs/icml2024.oxigraph/`, which holds versions of the store, each
stamped with the stamp of the graph file it was loaded from (kg.graph.stamp: size, modification time and
a hash of its content; a reader records the verified file's identity in `kg-seen.json`, so the file
is hashed again only after it changed), and `current`, a symbolic link to the newest. A changed
graph file gets a new version:

* Building is locked (`.build.lock`, kg.graph.atomic.locked): of several processes that find no fresh store, one builds
  and the others wait for it and then use its store.
* A version is built in a temporary folder and published by replacing the `current` link in one
  rename, so a failed build leaves no half store and a reader sees a whole version or none.
* A reader opens one version and holds a shared lock on it (`readers.lock`) while it reads: a
  `kg serve --on-disk` worker answers from the version it opened until it restarts. A build removes
  older versions that no reader holds.

The store answers ad-hoc SPARQL and the named queries that have no NAME.sql; the others run in the
graph's query index (kg.sparql.index), which needs no store.
"""

from __future__ import annotations

import fcntl
import functools
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from kg.core import progress
from kg.core.errors import InputError, OutputError
from kg.graph.atomic import locked
from kg.graph.files import load_into, parse
from kg.graph.handle import GraphFile, store_dir  # store_dir: where the store of a graph lives (x.ttl: x.oxigraph/)
from kg.graph.stamp import derived, describes, stamp
from kg.sparql.deadline import started, with_deadline

STAMP = "kg-source.json"
SEEN = "kg-seen.json"  # the identity of the graph file a reader last verified against STAMP (kg.graph.stamp.current)
# Raised when what a store holds changes, so that stores built before are rebuilt (9: no counts graph, no side files).
VERSION = 9
CURRENT = "current"  # the link to the newest version
# Triples handed to pyoxigraph's bulk loader at once: its memory grows with them (1.5 GB for the 2.7M triples of
# 21k papers in one load; about 150 MB a batch of 200,000), its time does not (decision 0048).
BATCH = 200_000
READERS = "readers.lock"  # shared-locked by each process reading a version
_HELD: dict[str, IO[bytes]] = {}  # version folder -> its readers.lock, open (and shared-locked) for this process


def _stamp(graph: Path) -> dict:
    return derived(stamp(graph), "store", VERSION)


def _current(graph: Path) -> Path | None:
    """The folder of the newest version when it was loaded from the graph file as it is now, else None."""
    try:
        version = (store_dir(graph) / CURRENT).resolve(strict=True)
        recorded = json.loads((version / STAMP).read_text(encoding="utf-8"))
        known = json.loads((version / SEEN).read_text(encoding="utf-8")) if (version / SEEN).is_file() else None
    except (OSError, ValueError):
        return None
    same, seen = describes(graph, recorded, "store", VERSION, known)
    if same and seen is not None:
        tmp = version / f".{SEEN}.{os.getpid()}"
        try:
            tmp.write_text(json.dumps(seen), encoding="utf-8")
            os.replace(tmp, version / SEEN)
        except OSError:  # a folder this reader cannot write: the next one hashes again
            tmp.unlink(missing_ok=True)
    return version if same else None


def ensure_store(graph: str | Path) -> Path:
    """Build (or rebuild, when the graph file changed) the persisted store; return the folder of the fresh version."""
    graph = GraphFile.existing(graph).path
    found = _current(graph)
    if found is not None:
        return found
    base = store_dir(graph)
    if base.is_dir() and not (base / CURRENT).is_symlink() and (base / STAMP).exists():
        shutil.rmtree(base)  # a store of the layout before versions
    base.mkdir(exist_ok=True)
    with locked(base / "build"):  # another process building the same store: wait for it (kg.graph.atomic's one lock)
        found = _current(graph)  # ... and use what it built
        if found is None:
            try:
                found = _build(graph, base)
            except BaseException:
                if not (base / CURRENT).is_symlink():
                    shutil.rmtree(base, ignore_errors=True)  # a first build failed: leave no store folder
                raise
        _remove_unread(base, keep=found)
    return found


class Loading:
    """A store that another process is loading (`load_aside`): `wait` for its folder, or `stop` it."""

    def __init__(self, graph: Path, process: subprocess.Popen, errors: IO[bytes]) -> None:
        self.graph, self.process, self.errors = graph, process, errors

    def wait(self) -> Path:
        """The folder of the fresh version, once the loading process has made it; its failure as a KgError."""
        try:
            out, _ = self.process.communicate()
            self.errors.seek(0)
            said = self.errors.read().decode("utf-8", "replace").strip().splitlines()
        finally:
            self.errors.close()
        if self.process.returncode == 0:
            return Path(out.decode().strip())
        if self.process.returncode == 130:
            raise KeyboardInterrupt
        if said and said[0].startswith(_FAILED):
            raise InputError(said[0].removeprefix(_FAILED))
        raise OutputError(f"{self.graph}: loading its SPARQL store failed ({said[-1] if said else f'exit status {self.process.returncode}'}); "
                          "the graph and its query index are written, and the first ad-hoc query loads the store again")

    def stop(self) -> None:
        """End the loading process if it still runs (the build failed or was interrupted): no store is published."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()
        self.errors.close()


_FAILED = "kg-store-error: "
_ASIDE = f"""import sys
from kg.core.errors import KgError
from kg.sparql.store import ensure_store
try:
    print(ensure_store(sys.argv[1]))
except KgError as exc:
    print({_FAILED!r} + str(exc), file=sys.stderr)
    raise SystemExit(1)
except KeyboardInterrupt:
    raise SystemExit(130)
"""


def load_aside(graph: str | Path) -> Loading:
    """Start loading the store of a written graph file in another process (`ensure_store` there), so that the
    caller goes on with other work (kg build: the page) on another core; `wait` for it.

    A process of its own, not a thread: pyoxigraph's bulk loader holds the GIL while it takes Python triples, and
    its memory is returned to the system when the process ends (decision 0048)."""
    errors = tempfile.TemporaryFile()
    process = subprocess.Popen([sys.executable, "-c", _ASIDE, str(graph)], stdout=subprocess.PIPE, stderr=errors,
                               stdin=subprocess.DEVNULL)
    return Loading(Path(graph), process, errors)


def _build(graph: Path, base: Path) -> Path:
    """Load the graph into a new version folder and make it the current one."""
    import pyoxigraph as ox

    stamped = _stamp(graph)
    tmp = Path(tempfile.mkdtemp(prefix="v-", suffix=".tmp", dir=base))
    try:
        store = ox.Store(str(tmp / "db"))
        with progress.step(f"loading {graph} into its SPARQL store (once per version of the graph)"):
            with_deadline(functools.partial(_load, store, graph, compact=True), started(None, f"loading {graph.name}"))  # Ctrl-C ends it at once
        del store  # closes the database before the folder is published
        (tmp / STAMP).write_text(json.dumps(stamped), encoding="utf-8")
        (tmp / READERS).touch()
        version = tmp.with_name(tmp.name.removesuffix(".tmp"))
        os.rename(tmp, version)
        link = base / f".{CURRENT}.{os.getpid()}"
        link.unlink(missing_ok=True)
        link.symlink_to(version.name)
        os.replace(link, base / CURRENT)  # the switch: one rename
        return version
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_unread(base: Path, keep: Path) -> None:
    """Remove the versions other than `keep` that no process reads (called under the build lock).

    Compared as resolved paths: `keep` found through the `current` link is absolute, while a graph named by a relative
    path has a relative `base`, and a waiter removed the version another process had just published for it."""
    base, keep = base.resolve(), keep.resolve()
    for folder in base.iterdir():
        if folder == keep or not folder.is_dir() or folder.is_symlink() or not folder.name.startswith("v-"):
            continue
        if str(folder) in _HELD:
            continue
        try:
            with (folder / READERS).open("ab") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)
        except BlockingIOError:
            continue  # a reader still has it open: the next build removes it
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)  # a failed build's leftovers


def hold(version: Path) -> None:
    """Take a shared lock on a version, so no build removes it while this process reads it.

    One version of a store is held per process: opening a newer one lets go of the older (a process
    that keeps a store open, a `kg serve` worker, opens it once).
    """
    version = version.resolve()  # one key a version, however the graph was named
    if str(version) in _HELD:
        return
    for other in [v for v in _HELD if Path(v).parent == version.parent]:
        _HELD.pop(other).close()
    stream = (version / READERS).open("ab")
    fcntl.flock(stream, fcntl.LOCK_SH)
    _HELD[str(version)] = stream


def open_folder(version: Path):  # -> pyoxigraph.Store
    """The store of one version folder (from `ensure_store`), read-only and held for this process."""
    import pyoxigraph as ox

    hold(version)
    return ox.Store.read_only(str(version / "db"))


def fresh_folder(graph: str | Path) -> Path | None:
    """The folder of the graph's fresh store version, else None."""
    return _current(Path(graph))


def open_store(graph: str | Path, *, memory: bool = False):  # -> pyoxigraph.Store
    """A pyoxigraph store for a graph file: the persisted one (read-only), or the file loaded in memory."""
    return open_version(graph, memory=memory)[0]


def open_version(graph: str | Path, *, memory: bool = False) -> tuple[Any, Path | None]:
    """A pyoxigraph store for a graph file and the folder of the version it reads (None in memory).

    The persisted store (read-only, one version held for this process), or the file loaded in
    memory: when asked (queries ran 2-7x faster in memory at 21k papers, but loading took 4.7 s
    against 0.02 s to open the persisted store), or when the folder beside the graph cannot be
    written (a read-only checkout).
    """
    import pyoxigraph as ox

    graph = GraphFile.existing(graph).path
    try:
        if memory:
            raise OSError("in memory")
        for _ in range(3):  # a build may remove a version between finding and holding it: find again
            version = ensure_store(graph)
            hold(version)
            if (version / STAMP).is_file():
                return ox.Store.read_only(str(version / "db")), version
        raise OSError(f"{store_dir(graph)}: versions keep changing")
    except InputError:
        raise
    except OSError:
        store = ox.Store()
        with progress.step(f"loading {graph} into memory"):
            with_deadline(lambda: load_into(store, graph), started(None, f"loading {graph.name}"))
        return store, None


def in_memory(graph: Path):  # -> pyoxigraph.Store
    """The graph file loaded into a new in-memory store by pyoxigraph's own reader (a parse error names the file)."""
    import pyoxigraph as ox

    store = ox.Store()
    load_into(store, graph)
    return store


def _load(store: Any, graph: Path, compact: bool = False) -> None:
    """Load a graph file (a shard folder: its listed shards in turn) into a store, BATCH triples at a time (a parse
    error names the file), and with `compact` merge what the batches left as dozens of level-0 files, each of which
    every read had to check: at 100k papers the queries ran 5-9x faster afterwards.

    One bulk load of the whole file held 1.5 GB at 21k papers (pyoxigraph sorts a million quads a batch, two batches
    at once, and takes no limit); batches of BATCH triples held under 200 MB for the same CPU time (decision 0048)."""
    parsed = parse(graph, graphs=True)
    while True:
        batch = itertools.islice(parsed, BATCH)
        first = next(batch, None)
        if first is None:
            break
        store.bulk_extend(itertools.chain((first,), batch))
    if compact:
        store.optimize()
        store.flush()
