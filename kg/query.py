"""Running a named query (queries/*.rq), a .rq file or SPARQL text on a graph file or a remote endpoint.

A query's text and parameters are read by kg.catalog; kg.engine runs it on a pyoxigraph store,
kg.remote on a SPARQL endpoint. On a persisted store the side files beside it answer faster with the
same rows: the text index narrows `search` (kg.textindex), the tables answer the long listings (kg.tables).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from . import engine
from .catalog import PARAM_TYPES, NamedQuery, Param, bind, catalog, from_text, parse_header, resolve, syntax_message
from .defaults import GRAPH, QUERY_TIMEOUT
from .errors import QueryError
from .results import Results, Term

__all__ = ["PARAM_TYPES", "NamedQuery", "Param", "bind", "catalog", "default_graph", "from_text", "parse_header", "query", "resolve",
           "run_store", "syntax_message"]


def run_store(
    store, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None, folder: Path | None = None
) -> Results:
    """Run a query on a pyoxigraph store with its parameters bound as RDF terms.

    `folder`: the folder of the store's version (`kg.store.open_version`), whose side files answer faster
    with the same rows: the text index narrows `search` (kg.textindex), the tables answer the long
    listings (kg.tables).
    """
    if folder is None:
        return engine.run(store, q, params, max_rows=max_rows)
    from .sparql import is_update
    from .store import TEXT_INDEX
    from .tables import FILE, answer

    if is_update(q.text):
        raise QueryError(f"query {q.name!r} is a SPARQL Update; kg only reads graphs (use 'kg push' to load data into a store)")
    terms = engine.terms(store, q, params)
    text = engine.bound(_narrowed(store, q, engine.fast_text(store, q), terms, folder / TEXT_INDEX), terms)
    found = answer(folder / FILE, q.name, text, terms, max_rows, listing=engine.shipped(q))
    return found if found is not None else engine.execute(store, text, max_rows, q.name)


def _narrowed(store, q: NamedQuery, text: str, terms: dict[str, Term], index: Path) -> str:
    """The shipped `search` limited to the papers the text index finds for its phrase; else `text` unchanged."""
    from .textindex import candidates, restrict

    words = terms.get("words")
    if q.name != "search" or words is None or not engine.shipped(q) or not index.is_file():
        return text
    found = candidates(store, index, words.value)
    return (restrict(text, found) if found is not None else None) or text


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
        from .remote import run_remote

        return run_remote(endpoint, q, params or {}, graph_iri=graph_iri, timeout=timeout or QUERY_TIMEOUT)
    from .deadline import with_deadline
    from .store import open_version

    graph = graph if graph is not None else default_graph()
    store, folder = open_version(graph)  # building the store the first time is not the query: no deadline
    return with_deadline(lambda: run_store(store, q, params, max_rows=max_rows, folder=folder), timeout, q.name)


def _resolve_any(name_or_text: str | Path | NamedQuery) -> NamedQuery:
    if isinstance(name_or_text, NamedQuery):
        return name_or_text
    text = str(name_or_text)
    if any(c in text for c in "{}\n") or re.match(r"\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", text, re.I):
        return from_text(text)
    return resolve(text)


def default_graph() -> Path:
    """The graph used when none is named: the most recently written graph in graphs/ (kg.graphio.latest_graph),
    else the one `kg build` writes for the bundled sample, graphs/icml2024.ttl."""
    from .graphio import latest_graph

    return latest_graph() or GRAPH
