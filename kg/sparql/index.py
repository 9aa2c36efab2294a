"""Answering the named queries that have `queries/NAME.sql` from a graph's query index (kg.graph.index_file).

`graphs/x.ttl` gets `graphs/x.kg-query.sqlite`, written by `kg build`, `kg build --update` and
`kg analyze` from the triples they hand over as they write the graph (kg.graph.index_writer says what it holds),
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
from contextlib import contextmanager
from functools import cache
from itertools import repeat
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from kg.graph.index_file import lowercase, nul_free
from kg.graph.resources import data_path
from kg.graph.vocabulary import XSD
from kg.sparql.catalog import NamedQuery
from kg.sparql.deadline import Deadline
from kg.sparql.results import Results, Term

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
def reading(index: Path | sqlite3.Connection, deadline: Deadline) -> Iterator[sqlite3.Connection]:
    """A connection to a fresh index for answering one query that `answers`: its look-ups and its SQL.

    `index`: the index file (opened here, closed after), or a connection to it that the caller keeps (`connect`).
    `deadline`: the query's (kg.sparql.deadline); SQLite's progress handler stops the SQL there, as the engine's
    waiting thread gives up a query.
    """
    db = index if isinstance(index, sqlite3.Connection) else sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    collecting = gc.isenabled()
    gc.disable()  # rows and terms are hundreds of thousands of new objects, none garbage: collecting them doubled the time
    limited = deadline.seconds is not None
    if limited:
        db.set_progress_handler(deadline.passed, PROGRESS_STEPS)
    try:
        if limited and deadline.passed():  # SQL of fewer than PROGRESS_STEPS steps is never looked at: stop it here
            raise sqlite3.OperationalError("interrupted")
        yield db
    except sqlite3.OperationalError as exc:
        if limited and "interrupted" in str(exc):
            raise deadline.error() from None
        raise
    finally:
        if limited:
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


_NEW = tuple.__new__  # _NEW(Term, (kind, value, datatype, lang)): a Term without a Python call


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
        if len(set(code)) == 1:  # one type (a column of papers' IRIs, of their titles): its parts repeated, no look-ups
            return map(_NEW, repeat(Term), zip(repeat(kinds(code[0])), value, repeat(datatypes(code[0])), repeat(langs(code[0]))))
        return map(_NEW, repeat(Term), zip(map(kinds, code), value, map(datatypes, code), map(langs, code)))

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
