"""Running a named query (queries/*.rq), a .rq file or SPARQL text on a graph file or a remote endpoint.

A query's text and parameters are read by kg.sparql.catalog. One rule says where a query on a graph file
runs: a shipped named query that has `queries/NAME.sql` runs in the graph's query index (kg.sparql.index)
when the index is fresh (an index that cannot be read is made again, else passed over, with a
warning on stderr); any other query runs in the engine (kg.sparql.engine) on the graph's persisted
pyoxigraph store (kg.sparql.store), which is built the first time one needs it. kg.sparql.remote runs queries on
a SPARQL endpoint.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Mapping

from kg.core.defaults import GRAPH, QUERY_TIMEOUT
from kg.graph import index_file
from kg.graph.handle import GraphFile
from kg.sparql import engine
from kg.sparql import index as qindex
from kg.sparql.catalog import PARAM_TYPES, NamedQuery, Param, bind, catalog, from_text, parse_header, resolve, syntax_message
from kg.sparql.results import Results

__all__ = ["PARAM_TYPES", "NamedQuery", "Param", "bind", "catalog", "default_graph", "from_text", "parse_header", "query", "resolve",
           "run_store", "syntax_message"]


def run_store(
    store, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None,
    index: Path | sqlite3.Connection | None = None
) -> Results:
    """Run a query on a pyoxigraph store with its parameters bound as RDF terms.

    `index`: the graph's fresh query index (kg.graph.index_file.fresh, or a connection to it that the caller keeps), which answers
    the queries that have a NAME.sql;
    one that cannot be read (a damaged file whose stamp still matches) is passed over for the store, with a warning.
    """
    if index is not None and qindex.answers(q):
        try:
            return qindex.answer(index, q, params, max_rows=max_rows)
        except sqlite3.DatabaseError as exc:
            if not index_file.damaged(exc):
                raise
            index_file.unreadable(index, exc, "answering from the graph's SPARQL store")
    return engine.run(store, q, params, max_rows=max_rows)


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

    timeout: seconds the query may run, locally or remotely (None or 0: no limit on a local graph).

    >>> kg.query("papers-by-concept", {"concept": "reinforcement learning"}).to_dataframe()
    """
    q = _resolve_any(name_or_text)
    if endpoint is not None:
        from kg.sparql.remote import run_remote

        answer = run_remote(endpoint, q, params or {}, graph_iri=graph_iri, timeout=timeout or QUERY_TIMEOUT)
        return answer if max_rows is None or len(answer) <= max_rows else replace(answer.head(max_rows), truncated=True)
    from kg.sparql.deadline import with_deadline

    graph = graph if graph is not None else default_graph()
    if qindex.answers(q) and Path(graph).is_file():
        index = GraphFile(Path(graph)).index()
        for again in (False, True):
            if index is None:
                break
            try:
                # The thread keeps Ctrl-C at hand; the progress handler stops the SQL itself at the time limit.
                return with_deadline(partial(qindex.answer, index, q, params, max_rows=max_rows, timeout=timeout), timeout, q.name)
            except sqlite3.DatabaseError as exc:
                if not index_file.damaged(exc):
                    raise
                index_file.unreadable(index, exc, "answering from the graph's SPARQL store" if again else f"making it again from {graph}")
                index = None if again else GraphFile(Path(graph)).remake_index()
    from kg.sparql.store import open_store

    store = open_store(graph)  # building the store the first time is not the query: no deadline
    return with_deadline(lambda: engine.run(store, q, params, max_rows=max_rows), timeout, q.name)


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
