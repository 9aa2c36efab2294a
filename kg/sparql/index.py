"""The query index of a graph: one SQLite file beside it that answers the named queries having `queries/NAME.sql`.

`graphs/x.ttl` gets `graphs/x.kg-query.sqlite`, written by `kg build`, `kg build --update` and
`kg analyze` from the triples they hand over as they write the graph (kg.sparql.index_build says what it holds),
or made from a parse of the file when a named query first finds none. It is stamped with the
graph's stamp (kg.graph.stamp: size, modification time, a hash of its content), kg's version and `SCHEMA`;
any other stamp makes it stale, and a stale index is never read.

The dispatch rule (kg.query): a shipped named query (its text as shipped) whose `NAME.sql` exists
runs in SQL when the index is fresh; anything else goes to the engine. SQL output columns are term
ids, except `NAME__integer` / `NAME__string` / `NAME__boolean` (computed values), a pair
`NAME__type`, `NAME__value` (a term inline) and the bound parameters (`:NAME_term`, a negative id).
The order is the .rq's ORDER BY on STR() keys: SQLite compares TEXT by UTF-8 bytes, which is code
point order, as the engines compare strings, and NULLs sort first as unbound values do. tests/test_qindex.py holds every NAME.sql to its NAME.rq.
"""

from __future__ import annotations

import gc
import sqlite3
import sys
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from kg.core.defaults import VERSION
from kg.graph.resources import data_path
from kg.graph.stamp import GraphIndex, current
from kg.graph.vocabulary import FABIO, FOAF, PROV, XSD
from kg.sparql.catalog import NamedQuery
from kg.sparql.deadline import too_slow
from kg.sparql.results import Results, Term

SUFFIX = ".kg-query.sqlite"
SCHEMA = 7  # raised when the tables change: an index of another schema is stale


def index_path(graph: str | Path) -> Path:
    """Where the query index of a graph file lives: beside it, `x.ttl` -> `x.kg-query.sqlite`."""
    graph = Path(graph)
    return graph.with_name(graph.stem + SUFFIX)


def stamp_text(graph: Path, graph_stamp: dict) -> str:
    """What an index of `graph` (whose file has `graph_stamp`) records: the graph's stamp, kg's version, the schema."""
    import json

    return json.dumps({"graph": graph_stamp, "kg": VERSION, "schema": SCHEMA}, sort_keys=True)


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
    if not isinstance(stored, dict) or (stored.get("kg"), stored.get("schema")) != (VERSION, SCHEMA) or not isinstance(stored.get("graph"), dict):
        return None
    same, seen = current(graph, stored["graph"], known if isinstance(known, dict) else None)
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


# ---- answering ------------------------------------------------------------------------------------------------


@cache
def _shipped(name: str) -> tuple[str | None, str | None]:
    """The text of the shipped `NAME.rq` and of its `NAME.sql` (None where kg ships none)."""
    folder = data_path("queries")
    rq, sql = folder / f"{name}.rq", folder / f"{name}.sql"
    return (rq.read_text(encoding="utf-8") if rq.is_file() else None, sql.read_text(encoding="utf-8") if sql.is_file() else None)


def answers(q: NamedQuery) -> bool:
    """True when the query is a shipped one, as shipped (not a user's file that shares its name), with a NAME.sql."""
    text, sql = _shipped(q.name)
    return sql is not None and text == q.text


@contextmanager
def reading(index: Path | sqlite3.Connection, name: str, timeout: float | None = None) -> Iterator[sqlite3.Connection]:
    """A connection to a fresh index for answering one query (`name`) that `answers`: its look-ups and its SQL.

    `index`: the index file (opened here, closed after), or a connection to it that the caller keeps (`connect`).
    `timeout`: seconds the SQL may run in all (None or 0: no limit); SQLite's progress handler stops it there, as
    the engine's time limit stops a query.
    """
    import time

    db = index if isinstance(index, sqlite3.Connection) else sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    collecting = gc.isenabled()
    gc.disable()  # rows and terms are hundreds of thousands of new objects, none garbage: collecting them doubled the time
    if timeout:
        deadline = time.monotonic() + timeout
        db.set_progress_handler(lambda: time.monotonic() > deadline, PROGRESS_STEPS)
    try:
        yield db
    except sqlite3.OperationalError as exc:
        if timeout and "interrupted" in str(exc):
            raise too_slow(name, timeout) from None
        raise
    finally:
        if timeout:
            db.set_progress_handler(None, 0)
        if collecting:
            gc.enable()
        if db is not index:
            db.close()


def lookup(db: sqlite3.Connection, name: str, bound: Mapping[str, Term]) -> Results:
    """The rows of the internal query queries/_NAME.sql with its parameters bound (kg.sparql.catalog's look-ups)."""
    return _run(db, name, _internal(name), bound, None)


def answer(db: sqlite3.Connection, q: NamedQuery, terms: Mapping[str, Term], *, max_rows: int | None = None) -> Results:
    """The rows of a query that `answers`, its parameters bound as RDF terms (kg.sparql.run binds them, with `lookup`),
    on a connection from `reading`."""
    return _run(db, q.name, _shipped(q.name)[1] or "", terms, max_rows, [p.name for p in q.params])


PROGRESS_STEPS = 10_000  # SQLite virtual-machine steps between looks at the clock (well under a millisecond)


@cache
def _internal(name: str) -> str:
    return (data_path("queries") / f"_{name}.sql").read_text(encoding="utf-8")


def _run(db: sqlite3.Connection, name: str, sql: str, terms: Mapping[str, Term], max_rows: int | None, declared: Iterable[str] = ()) -> Results:
    values: dict[str, Any] = {p: None for p in declared} | {f"{p}_term": None for p in declared}
    for i, (key, t) in enumerate(terms.items()):
        values[f"{key}_term"] = -1 - i
        if t.kind == "literal" and t.datatype == XSD + "integer":
            values[key] = int(t.value)
        else:
            values[key] = t.value
        if t.kind == "literal":
            (lowered,) = lowercase([t.value])
            values[f"{key}_lower"] = lowered
            phrase = nul_free(lowered)
            grams = sorted({phrase[k : k + 3] for k in range(len(phrase) - 2)})
            values[f"{key}_match"] = " AND ".join('"' + g.replace('"', '""') + '"' for g in grams) or None
    cursor = db.execute(sql, values)
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchmany(max_rows + 1) if max_rows is not None else cursor.fetchall()
    truncated = max_rows is not None and len(rows) > max_rows
    rows = rows[:max_rows] if truncated else rows
    variables = tuple(c.split("__")[0] for c in columns if not c.endswith("__value"))
    return Results("select", variables, _decode(db, columns, rows, list(terms.values())), truncated=truncated, name=name)


_TERM = partial(tuple.__new__, Term)


def _decode(db: sqlite3.Connection, columns: list[str], rows: list, bound: list[Term]) -> tuple[tuple[Term | None, ...], ...]:
    """Rows of term ids (and typed values) as rows of Terms: column by column, each distinct term read and made once.

    A column `NAME__type` followed by `NAME__value` is a term given inline (term_row's type and value, never NULL):
    the wide listings give their papers' terms so, which saves looking up every distinct term a second time.
    """
    if not rows:
        return ()
    cells = list(zip(*rows))
    suffix = {i: c.split("__")[1] for i, c in enumerate(columns) if "__" in c}
    terms: dict[Any, Term | None] = {None: None, **{-1 - i: t for i, t in enumerate(bound)}}
    ids = set().union(*(cells[i] for i in range(len(columns)) if i not in suffix)).difference(terms)
    found = db.execute("SELECT t.id, t.type, t.value FROM json_each(?) AS j CROSS JOIN term_row AS t ON t.id = j.value",
                       (str(list(ids)),)).fetchall()
    types = db.execute("SELECT id, kind, datatype, lang FROM term_type").fetchall()
    kinds, datatypes, langs = ({row[0]: row[k] for row in types}.__getitem__ for k in (1, 2, 3))

    def made(code: tuple, value: tuple) -> Any:  # C-level zips and maps: no Python call per term
        return map(_TERM, zip(map(kinds, code), value, map(datatypes, code), map(langs, code)))

    if found:
        key, code, value = zip(*found)
        terms.update(zip(key, made(code, value)))
    out: list[Any] = []
    for i, cell in enumerate(cells):
        kind = suffix.get(i)
        if kind is None:
            out.append(map(terms.__getitem__, cell))
        elif kind == "type":
            out.append(made(cell, cells[i + 1]))
        elif kind != "value":  # a computed value: a literal of the column's type
            datatype = XSD + kind
            out.append(map({v: None if v is None else Term("literal", str(v), datatype) for v in set(cell)}.__getitem__, cell))
    return tuple(zip(*out))
