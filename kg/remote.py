"""Remote SPARQL 1.1 stores: load a graph into one (`push`) and run named queries there.

Plain urllib and the SPARQL 1.1 Protocol, so any store works: Oxigraph, Fuseki, GraphDB, Virtuoso.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Mapping

from .defaults import PUSH_BATCH, PUSH_TIMEOUT, QUERY_TIMEOUT
from .errors import QueryError, UsageError
from .results import Results, from_sparql_json

BATCH = PUSH_BATCH


def _post(url: str, body: bytes, content_type: str, accept: str, timeout: float) -> tuple[bytes, str]:
    """POST and return (body, content type); HTTP and network failures become QueryError."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"endpoint {url!r} must be an http:// or https:// URL")
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": content_type, "Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read(), resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace").strip().splitlines()
        raise QueryError(f"{url} answered {exc.code} {exc.reason}: {detail[0][:300] if detail else ''}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise QueryError(f"cannot reach {url} ({reason}); is the store running?") from None


def push(
    graph: str | Path,
    endpoint: str,
    *,
    graph_iri: str | None = None,
    replace: bool = False,
    batch: int = BATCH,
    timeout: float = PUSH_TIMEOUT,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Load a graph file into a SPARQL 1.1 store with batched INSERT DATA; return the triples sent.

    `graph_iri` puts the triples in that named graph (else the default graph); `replace` empties it first.
    """
    import pyoxigraph as ox

    from .graphio import read_triples

    if graph_iri is not None and not graph_iri.partition(":")[0].isalpha():
        raise UsageError(f"--graph {graph_iri!r} must be an absolute IRI such as https://example.org/graph/icml2024")
    triples = read_triples(graph)
    if any(type(x).__name__ == "BlankNode" for t in triples for x in (t.subject, t.object)):
        # Blank-node labels would be renamed per request and split across batches; kg graphs have none.
        raise UsageError(f"{graph}: has blank nodes, which cannot be pushed in batches; use the store's bulk loader")
    open_, close = (f"GRAPH <{graph_iri}> {{\n", "}\n") if graph_iri else ("", "")
    if replace:
        clear = f"DROP SILENT GRAPH <{graph_iri}>" if graph_iri else "DROP SILENT DEFAULT"
        _post(endpoint, clear.encode(), "application/sparql-update", "*/*", timeout)
    for i in range(0, len(triples), batch):
        chunk = io.BytesIO()
        ox.serialize(triples[i : i + batch], chunk, format=ox.RdfFormat.N_TRIPLES)
        update = b"INSERT DATA {\n" + open_.encode() + chunk.getvalue() + close.encode() + b"}\n"
        _post(endpoint, update, "application/sparql-update; charset=utf-8", "*/*", timeout)
        if progress is not None:
            progress(min(i + batch, len(triples)))
    return len(triples)


def run_remote(
    endpoint: str,
    q: Any,  # NamedQuery
    params: Mapping[str, Any],
    *,
    graph_iri: str | None = None,
    timeout: float = QUERY_TIMEOUT,
) -> Results:
    """Run a named query on a SPARQL endpoint, its parameters bound by a VALUES block."""
    from .catalog import bind
    from .sparql import form, is_update, with_values

    if is_update(q.text):
        raise QueryError(f"query {q.name!r} is a SPARQL Update; use 'kg push' to change a store")

    def lookup(text: str, terms: dict) -> Results:
        bound = with_values(text, {k: t.n3() for k, t in terms.items()})
        return send(endpoint, bound, graph_iri=graph_iri, timeout=timeout, name=q.name)

    terms = bind(q, params, lookup)
    text = with_values(q.text, {k: t.n3() for k, t in terms.items()})
    if form(text) in ("CONSTRUCT", "DESCRIBE"):
        return send(endpoint, text, graph_iri=graph_iri, timeout=timeout, name=q.name, graph=True)
    return send(endpoint, text, graph_iri=graph_iri, timeout=timeout, name=q.name)


def send(
    endpoint: str, text: str, *, graph_iri: str | None = None, timeout: float = QUERY_TIMEOUT, name: str = "query", graph: bool = False
) -> Results:
    """POST one query (form-encoded, as the SPARQL 1.1 Protocol says) and parse the answer."""
    import pyoxigraph as ox

    fields = [("query", text)] + ([("default-graph-uri", graph_iri)] if graph_iri else [])
    accept = "application/n-triples" if graph else "application/sparql-results+json"
    body, ctype = _post(endpoint, urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded", accept, timeout)
    try:
        if graph:
            return Results("graph", triples=tuple(ox.parse(body, format=ox.RdfFormat.N_TRIPLES)), name=name)
        return from_sparql_json(json.loads(body))
    except (ValueError, SyntaxError) as exc:
        raise QueryError(f"{endpoint} answered query {name!r} with something that is not {accept} ({ctype}): {exc}") from None
