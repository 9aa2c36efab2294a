"""A persisted pyoxigraph store beside each graph file, so queries do not parse the Turtle again.

`graphs/icml2024.ttl` gets `graphs/icml2024.oxigraph/`, stamped with the size and modification
time of the Turtle it was loaded from; a changed file rebuilds it. The store is built in a
temporary folder and renamed into place, so a failed or concurrent build never leaves a half store.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from . import __version__
from .errors import InputError
from .rdf import FORMATS, format_for
from .stats import VERSION as STATS_VERSION

STAMP = "kg-source.json"
TEXT_INDEX = "text.sqlite"  # kg.textindex, beside the database in the store folder


def store_dir(graph: str | Path) -> Path:
    """Where the persisted store of a graph file lives: beside it, suffix `.oxigraph`."""
    graph = Path(graph)
    return graph.with_name(graph.stem + ".oxigraph")


def _stamp(graph: Path) -> dict:
    st = graph.stat()
    # `stats`: a store without the current kg.stats counts is rebuilt (its queries would be slow).
    return {"source": graph.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "kg": __version__, "stats": STATS_VERSION}


def is_fresh(graph: str | Path) -> bool:
    """True when the persisted store exists and was loaded from the graph file as it is now."""
    graph = Path(graph)
    try:
        return json.loads((store_dir(graph) / STAMP).read_text(encoding="utf-8")) == _stamp(graph)
    except (OSError, ValueError):
        return False


def ensure_store(graph: str | Path) -> Path:
    """Build (or rebuild, when the graph file changed) the persisted store and return its folder."""
    from concurrent.futures import ThreadPoolExecutor

    import pyoxigraph as ox

    from .stats import add as add_stats, count_file
    from .tables import FILE as TABLES, write as write_tables
    from .textindex import read_texts, write as write_text_index

    graph = Path(graph)
    if not graph.is_file():
        raise InputError(f"{graph}: no such graph file; build one with 'kg build YOUR_PAPERS.jsonl' (or 'kg build' for the bundled sample), or pass --graph FILE.ttl")
    target = store_dir(graph)
    if is_fresh(graph):
        return target
    stamp = _stamp(graph)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=graph.parent))
    try:
        store = ox.Store(str(tmp / "db"))
        fmt = getattr(ox.RdfFormat, FORMATS[format_for(None, graph)][0])
        # bulk_load releases the GIL, so the counts of kg.stats are made from a second parse of the
        # file in a thread meanwhile (21k papers: 26 s -> 23 s for load and counts).
        with ThreadPoolExecutor(max_workers=1) as pool:
            counting = pool.submit(count_file, str(graph), fmt)
            try:
                store.bulk_load(path=str(graph), format=fmt)
                counted, facts = counting.result()
            except SyntaxError as exc:
                raise InputError(f"{graph}: not valid RDF ({exc})") from None
        add_stats(store, counted)
        # Compact what bulk_load left as dozens of level-0 files, each of which every read had to
        # check: at 100k papers the portable queries ran 5-9x faster afterwards (search 23 s -> 5 s,
        # papers-by-concept 13 s -> 1.8 s), for 18 s once here.
        store.optimize()
        # The trigram index of titles and abstracts that narrows `search` (kg.textindex), read after
        # the compaction (100k papers: 4 s, against 15 s before it) and written beside the database.
        texts = read_texts(store)
        if texts is not None:
            write_text_index(tmp / TEXT_INDEX, texts)
        # The long listings' answers (kg.tables): the default runs of the queries, and tables for three listings.
        write_tables(tmp / TABLES, store, facts)
        store.flush()
        del store  # closes the database before the folder moves
        (tmp / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
        _swap_in(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@contextmanager
def scratch_sqlite(path: Path) -> Iterator[sqlite3.Connection]:
    """A new SQLite file in a store's temporary folder (kg.textindex, kg.tables), committed and closed at the end.

    The folder is thrown away if the build fails, so the file is written without journal or fsync.
    """
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        yield db
        db.commit()
    finally:
        db.close()


def _swap_in(new: Path, target: Path) -> None:
    """Rename `new` to `target`; an old store is moved aside first (a folder cannot be renamed over)."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
    try:
        os.replace(new, target)
    except OSError:
        if old is not None and not target.exists():
            os.replace(old, target)  # someone else's store won or ours failed: keep a working one
            old = None
        if not is_fresh_dir(target):
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def is_fresh_dir(target: Path) -> bool:
    return (target / STAMP).is_file()


def fresh_folder(graph: str | Path) -> Path | None:
    """The folder of the graph's persisted store when it is fresh (for its side files, see kg.query.run_store), else None."""
    return store_dir(graph) if is_fresh(graph) else None


def open_store(graph: str | Path, *, memory: bool = False):  # -> pyoxigraph.Store
    """A pyoxigraph store for a graph file: the persisted one (read-only), or the file loaded in memory.

    Memory when asked (queries ran 2-7x faster in memory at 21k papers, but loading took 4.7 s
    against 0.02 s to open the persisted store), or when the folder beside the graph cannot be
    written (a read-only checkout).
    """
    import pyoxigraph as ox

    from .stats import add as add_stats

    graph = Path(graph)
    if not graph.is_file():
        raise InputError(f"{graph}: no such graph file; build one with 'kg build YOUR_PAPERS.jsonl' (or 'kg build' for the bundled sample), or pass --graph FILE.ttl")
    try:
        if memory:
            raise OSError("in memory")
        folder = ensure_store(graph)
        return ox.Store.read_only(str(folder / "db"))
    except InputError:
        raise
    except OSError:
        store = ox.Store()
        try:
            store.bulk_load(path=str(graph), format=getattr(ox.RdfFormat, FORMATS[format_for(None, graph)][0]))
        except SyntaxError as exc:
            raise InputError(f"{graph}: not valid RDF ({exc})") from None
        add_stats(store)
        return store
