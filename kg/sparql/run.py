"""Running a named query (queries/*.rq), a .rq file or SPARQL text on a graph file or a remote endpoint: the one query path.

A query's text and parameters are read by kg.sparql.catalog. The query goes to one of three backends
(kg.sparql.backends: the graph's query index, the engine on a store, a remote endpoint), which binds its
parameters ONCE, here (`_Call`), with that backend's look-ups, and then runs it with them.

One rule says where a query on a graph runs, for `kg query` (`query`) and for kg serve's workers and kg render
(`run_store`) alike (`_local`): a shipped named query that has `queries/NAME.sql` runs in the graph's fresh query
index (kg.sparql.index); any other query runs in the engine (kg.sparql.engine) on the graph's pyoxigraph store
(kg.sparql.store), which is built the first time one needs it. An index that cannot be read is made again once
(`kg query`), else passed over for the store, with a warning on stderr; the terms already bound go with the query.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

from kg.core.defaults import GRAPH, QUERY_TIMEOUT
from kg.graph import index_file
from kg.graph.handle import GraphFile
from kg.sparql import index as qindex
from kg.sparql.backends import Backend, Engine, Index, Remote
from kg.sparql.catalog import PARAM_TYPES, NamedQuery, Param, bind, catalog, from_text, parse_header, resolve, syntax_message
from kg.sparql.deadline import Deadline, start, with_deadline
from kg.sparql.results import Results, Term

__all__ = ["PARAM_TYPES", "NamedQuery", "Param", "bind", "catalog", "default_graph", "from_text", "parse_header", "query", "resolve",
           "run_on", "run_store", "syntax_message"]


@dataclass
class _Call:
    """A query and its parameters, bound once: by the first backend that completes the binding; a backend the query
    falls back to after that gets the same terms (RDF terms, valid in every backend), not a binding of its own."""

    q: NamedQuery
    params: Mapping[str, Any]
    terms: dict[str, Term] | None = None

    def on(self, backend: Backend, max_rows: int | None, deadline: Deadline) -> Results:
        with backend.opened(self.q, deadline) as answering:
            if self.terms is None:
                self.terms = bind(self.q, dict(self.params), answering.lookup)  # the one place kg binds parameters
            return answering.run(self.q, self.terms, max_rows)


def run_on(backend: Backend, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None,
           timeout: float | None = None) -> Results:
    """Run a query on one backend (kg.sparql.backends), its parameters bound with that backend's look-ups: no choice
    of backend, no fallback. `timeout` (None or 0: no limit) is held by the backend itself: the index and an endpoint
    stop there; the engine cannot (`query` waits for it on another thread)."""
    return _Call(q, params or {}).on(backend, max_rows, start(timeout, q.name))


def run_store(
    store, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None,
    index: Path | sqlite3.Connection | None = None, timeout: float | None = None, wait: bool = False
) -> Results:
    """Run a query on an open pyoxigraph store (kg serve's workers, kg render), by the rule `query` follows.

    `index`: the graph's fresh query index (kg.graph.index_file.fresh, or a connection to it that the caller keeps), which answers
    the queries that have a NAME.sql; one that cannot be read (a damaged file whose stamp still matches) is passed over
    for the store, with a warning. `timeout` (None or 0: none; a kg serve worker has its own) and `wait` (on another
    thread, which gives the query up at the deadline and which Ctrl-C interrupts) as `query` holds them (kg render).
    """
    return _local(_Call(q, params or {}), lambda: index, lambda: store, max_rows=max_rows, wait=wait, timeout=timeout)


def query(
    name_or_text: str | Path | NamedQuery,
    params: Mapping[str, Any] | None = None,
    *,
    graph: str | Path | None = None,
    endpoint: str | None = None,
    graph_iri: str | None = None,
    max_rows: int | None = None,
    timeout: float | None = QUERY_TIMEOUT,
) -> Results:
    """Run a named query, a .rq file or SPARQL text on a graph file or a remote endpoint; return rows.

    timeout: seconds the query may run, locally or remotely (None or 0: no limit; kg.sparql.deadline.limit).

    >>> kg.query("papers-by-concept", {"concept": "reinforcement learning"}).to_dataframe()
    """
    q = _resolve_any(name_or_text)
    if endpoint is not None:
        return run_on(Remote(endpoint, graph_iri), q, params, max_rows=max_rows, timeout=timeout)
    from kg.sparql.store import open_store

    path = Path(graph if graph is not None else default_graph())
    return _local(_Call(q, params or {}), lambda: GraphFile(path).index(), lambda: open_store(path),
                  max_rows=max_rows, remake=path, wait=True, timeout=timeout)


def _local(call: _Call, index: Callable[[], Path | sqlite3.Connection | None], store: Callable[[], Any], *,
           max_rows: int | None, remake: Path | None = None, wait: bool = False, timeout: float | None = None) -> Results:
    """The one rule for a query on a graph here (module docstring): the index (`index()`, asked only for a query it
    answers) or the engine on the store (`store()`, opened only when the engine runs the query).

    `remake`: the graph file whose index is made again once when it cannot be read (else it is passed over for the
    store at once). `timeout`: the query's deadline (kg.sparql.deadline), at which the index's SQL stops itself;
    `wait`: run on a thread that gives the query up at that deadline, which Ctrl-C interrupts at once. Making
    the index again and opening the store happen outside the time limit: they are not the query, and the query's
    deadline starts when it is handed to the backend that runs it.
    """
    found = index() if qindex.answers(call.q) else None
    backend: Backend = Index(found) if found is not None else Engine(store())
    while True:
        limit = start(timeout, call.q.name)
        try:
            if not wait:
                return call.on(backend, max_rows, limit)
            return with_deadline(partial(call.on, backend, max_rows, limit), limit)
        except sqlite3.DatabaseError as exc:
            if not isinstance(backend, Index) or not index_file.damaged(exc):
                raise
            if remake is not None:
                index_file.unreadable(backend.index, exc, f"making it again from {remake}")
                found, remake = GraphFile(remake).remake_index(), None
                backend = Index(found) if found is not None else Engine(store())
            else:
                index_file.unreadable(backend.index, exc, "answering from the graph's SPARQL store")
                backend = Engine(store())


def _resolve_any(name_or_text: str | Path | NamedQuery) -> NamedQuery:
    if isinstance(name_or_text, NamedQuery):
        return name_or_text
    text = str(name_or_text)
    if any(c in text for c in "{}\n") or re.match(r"\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", text, re.I):
        return from_text(text)
    return resolve(text)


def default_graph() -> Path:
    """The graph used when none is named: the most recently written graph in graphs/ (kg.graph.files.latest_graph),
    else the one `kg build` writes for the bundled sample, graphs/icml2024.ttl."""
    from kg.graph.files import latest_graph

    return latest_graph() or GRAPH
