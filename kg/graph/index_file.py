"""The query index of a graph: one SQLite file beside it, derived from the graph and stamped with its version.

`graphs/x.ttl` gets `graphs/x.kg-query.sqlite`, written by `kg build`, `kg build --update` and `kg analyze` from
the triples they hand over as they write the graph (kg.graph.index_writer says what it holds), or made from a
parse of the file when a named query first finds none. It is stamped with the graph's stamp (kg.graph.stamp:
size, modification time, a hash of its content), kg's version and `SCHEMA`; any other stamp makes it stale,
and a stale index is never read. kg.sparql.index answers the named queries that have `queries/NAME.sql` from it;
`known` tells `kg build --update` what the graph holds.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

from kg.graph.stamp import GraphIndex, beside, derived, describes
from kg.graph.vocabulary import FABIO, FOAF, PROV

SUFFIX = ".kg-query.sqlite"
SCHEMA = 9  # raised when the tables change: an index of another schema is stale


def index_path(graph: str | Path) -> Path:
    """Where the query index of a graph file lives: beside it, `x.ttl` -> `x.kg-query.sqlite` (a shard folder `x`: `x.kg-query.sqlite`)."""
    return beside(graph, SUFFIX)


def stamp_text(graph: Path, graph_stamp: dict | None) -> str:
    """What an index of `graph` (whose file has `graph_stamp`) records: kg.graph.stamp.derived, its version `SCHEMA`."""
    import json

    return json.dumps(derived(graph_stamp, "schema", SCHEMA), sort_keys=True)


def fresh(graph: str | Path) -> Path | None:
    """The index of a graph file when it was made from the file as it is now, else None.

    The graph is hashed unless the index records that a reader verified it as the file it is now
    (kg.graph.stamp.current); a verification is recorded in the index (`seen`), where it can be written.
    """
    import json

    graph, path = Path(graph), index_path(graph)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, OSError):
        return None
    try:
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('stamp', 'seen')").fetchall())
        stored, known = json.loads(meta["stamp"]), json.loads(meta.get("seen", "null"))
    except (sqlite3.Error, OSError, KeyError, ValueError, TypeError):
        return None
    finally:
        db.close()
    same, seen = describes(graph, stored, "schema", SCHEMA, known)
    if same and seen is not None:
        _record(path, json.dumps(seen, sort_keys=True))
    return path if same else None


def connect(index: Path) -> sqlite3.Connection:
    """A read-only connection to an index, which a process may keep: it reads the file it opened, also after
    a new index is renamed over its path (a `kg serve` worker answers from one version of the graph)."""
    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    db.execute("SELECT 1 FROM meta LIMIT 1")  # open the file now, not at the first query
    return db


def _record(path: Path, seen: str) -> None:
    """Record in the index the identity of the graph file a reader verified (nothing where it cannot be written)."""
    try:
        db = sqlite3.connect(path, timeout=0.5)
        try:
            with db:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('seen', ?)", (seen,))
        finally:
            db.close()
    except (sqlite3.Error, OSError):
        pass


def damaged(exc: sqlite3.DatabaseError) -> bool:
    """True when an error reading an index says the file is damaged (not busy or locked by a writer), so that
    making the index again, or answering without it, is the remedy."""
    return getattr(exc, "sqlite_errorcode", None) not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT)


_WARNED: set[tuple[str, str]] = set()


def unreadable(index: Path | sqlite3.Connection, exc: Exception, then: str) -> None:
    """Say on stderr, in one line, that an index cannot be read and what is done instead (`then`); once per index
    and remedy in a process (a kg serve worker would otherwise say it at every query)."""
    if isinstance(index, sqlite3.Connection):
        index = Path(index.execute("PRAGMA database_list").fetchone()[2])
    if (str(index), then) not in _WARNED:
        _WARNED.add((str(index), then))
        print(f"kg: warning: the query index {index} cannot be read ({exc}); {then}", file=sys.stderr, flush=True)


def known(index: Path) -> GraphIndex:
    """What `kg build --update` must know of the graph of a fresh index: its papers, builds, authors, venues, scheme versions."""
    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        def values(sql: str, *args: str) -> list:
            return db.execute(sql, args).fetchall()

        typed = "SELECT t.value FROM a JOIN term AS t ON t.id = a.s JOIN term AS k ON k.id = a.o WHERE k.value = ? ORDER BY a.s"
        return GraphIndex(
            dict(values("SELECT t.value, d.sha256 FROM digest AS d JOIN term AS t ON t.id = d.paper")),
            dict(values("SELECT i.value, p.value FROM identifier JOIN term AS i ON i.id = identifier.o JOIN term AS p ON p.id = identifier.s")),
            tuple(v for (v,) in values(typed, PROV + "Activity")),
            frozenset(v for (v,) in values(typed, FOAF + "Person")),
            frozenset(v for (v,) in values(typed, FABIO + "ConferenceProceedings")),
            frozenset(v for (v,) in values("SELECT t.value FROM scheme_version JOIN term AS t ON t.id = scheme_version.o")),
            dict(values("SELECT d.value, p.value FROM doi JOIN term AS d ON d.id = doi.o JOIN term AS p ON p.id = doi.s")),
        )
    finally:
        db.close()


def nul_free(text: str) -> str:
    """NUL as U+FFFD: FTS5 stops tokenizing at a NUL and refuses one in a query (the same on both sides)."""
    return text.replace("\x00", "\ufffd")


def lowercase(texts: list[str]) -> list[str]:
    """Each text lowercased as the query engine's LCASE does it.

    pyoxigraph follows a newer Unicode than Python's str.lower (55 characters differ), so only ASCII
    texts are lowered in Python; the others are lowered by pyoxigraph itself, in one query.
    """
    out = [t.lower() if t.isascii() else None for t in texts]
    todo = [i for i, t in enumerate(out) if t is None]
    if todo:
        import pyoxigraph as ox

        store = ox.Store()
        p = ox.NamedNode("urn:kg:text")
        store.extend([ox.Quad(ox.NamedNode(f"urn:kg:{i}"), p, ox.Literal(texts[i])) for i in todo])
        solutions: Any = store.query("SELECT ?s (LCASE(?o) AS ?l) WHERE { ?s <urn:kg:text> ?o }")
        for row in solutions:
            out[int(row[0].value[7:])] = row[1].value
    return [t if t is not None else "" for t in out]
