"""The three places a query runs (the query index, the engine, a remote endpoint), behind one small interface.

kg.sparql.run binds a query's parameters once and hands them to one of them:

- `Index`: the graph's query index (kg.sparql.index), SQL for the shipped named queries having `queries/NAME.sql`;
- `Engine`: pyoxigraph on a store (kg.sparql.engine), for any query;
- `Remote`: a SPARQL endpoint (kg.sparql.remote).

A backend is opened for one query and its deadline (`opened`; kg.sparql.deadline: one per query, which the look-ups
and the query share, each backend stopping there in the one way it can): it refuses there what it will not run,
before any parameter is bound, and gives what answers the parameters' look-ups (`lookup`: the internal queries queries/_NAME, which
kg.sparql.catalog.bind asks) and the query itself, its parameters bound as RDF terms (`run`). Terms bound by one
backend's look-ups are valid in another: an RDF term names the same thing in the index, the engine and a store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Protocol

from kg.sparql import engine
from kg.sparql import index as qindex
from kg.sparql.catalog import NamedQuery
from kg.sparql.deadline import Deadline
from kg.sparql.results import Results, Term


class Answering(Protocol):
    """A backend opened for one query."""

    def lookup(self, name: str, bound: dict[str, Term]) -> Results:
        """The rows of the internal query queries/_NAME with its parameters bound (kg.sparql.catalog.Lookup)."""
        ...

    def run(self, q: NamedQuery, terms: Mapping[str, Term], max_rows: int | None) -> Results:
        """The query's answer, its parameters bound as `terms`; past `max_rows` rows, the first ones, marked truncated."""
        ...


class Backend(Protocol):
    def opened(self, q: NamedQuery, deadline: Deadline) -> AbstractContextManager[Answering]:
        """Ready to answer `q` by `deadline` (QueryError for a query this backend will not run), for as long as the block lasts."""
        ...


@dataclass(frozen=True)
class Index:
    """The graph's fresh query index: the file, or a connection to it that the caller keeps (a kg serve worker's).
    Its SQL, look-ups included, stops itself at the query's deadline."""

    index: Path | sqlite3.Connection

    @contextmanager
    def opened(self, q: NamedQuery, deadline: Deadline) -> Iterator[Answering]:
        with qindex.reading(self.index, deadline) as db:
            yield _Sql(db)


@dataclass(frozen=True)
class _Sql:
    db: sqlite3.Connection

    def lookup(self, name: str, bound: dict[str, Term]) -> Results:
        return qindex.lookup(self.db, name, bound)

    def run(self, q: NamedQuery, terms: Mapping[str, Term], max_rows: int | None) -> Results:
        return qindex.answer(self.db, q, terms, max_rows=max_rows)


@dataclass(frozen=True)
class Engine:
    """A pyoxigraph store (the graph's persisted one, or one in memory). The engine cannot be stopped from inside: the
    caller waits for it on another thread until the deadline (kg.sparql.deadline.with_deadline)."""

    store: Any

    @contextmanager
    def opened(self, q: NamedQuery, deadline: Deadline) -> Iterator[Answering]:
        engine.refuse(q)
        yield _Oxigraph(self.store, q.name)


@dataclass(frozen=True)
class _Oxigraph:
    store: Any
    query: str

    def lookup(self, name: str, bound: dict[str, Term]) -> Results:
        return engine.lookup(self.store, name, bound, self.query)

    def run(self, q: NamedQuery, terms: Mapping[str, Term], max_rows: int | None) -> Results:
        return engine.run(self.store, q, terms, max_rows=max_rows)


@dataclass(frozen=True)
class Remote:
    """A SPARQL endpoint; `graph_iri` the graph asked (default-graph-uri). Each request's socket waits at most what is
    left of the deadline, and the answer is read and parsed by it."""

    endpoint: str
    graph_iri: str | None = None

    @contextmanager
    def opened(self, q: NamedQuery, deadline: Deadline) -> Iterator[Answering]:
        from kg.sparql import remote  # urllib and ssl: only for a query sent away

        remote.refuse(q)
        yield _Sent(self, q.name, deadline)


@dataclass(frozen=True)
class _Sent:
    to: Remote
    query: str
    deadline: Deadline

    def lookup(self, name: str, bound: dict[str, Term]) -> Results:
        from kg.sparql import remote

        return remote.lookup(self.to.endpoint, name, bound, graph_iri=self.to.graph_iri, deadline=self.deadline)

    def run(self, q: NamedQuery, terms: Mapping[str, Term], max_rows: int | None) -> Results:
        from kg.sparql import remote

        return remote.run(self.to.endpoint, q, terms, self.deadline, graph_iri=self.to.graph_iri, max_rows=max_rows)
