"""Remote SPARQL 1.1 stores: run named queries there (loading a graph into one is kg.sparql.push).

Plain urllib and the SPARQL 1.1 Protocol, so any store works: Oxigraph, Fuseki, GraphDB, Virtuoso.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from dataclasses import replace
from email.message import Message
from typing import IO, TYPE_CHECKING, Mapping

from kg.core.errors import QueryError, UsageError
from kg.sparql.deadline import Deadline
from kg.sparql.results import Results, Term

if TYPE_CHECKING:
    from kg.sparql.catalog import NamedQuery


def _post(url: str, body: bytes, content_type: str, accept: str, deadline: Deadline) -> tuple[bytes, str]:
    """POST and return (body, content type); HTTP and network failures become QueryError."""
    return request("POST", url, body, content_type, accept, deadline)


REDIRECTS = (301, 302, 303, 307, 308)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow no redirect: urllib would send a POST on as a GET without its body (a push or query that
    'succeeds' having sent nothing) and another method not at all. The answer comes back as an HTTPError."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: Message,
                         newurl: str) -> urllib.request.Request | None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def urlopen(req: urllib.request.Request, timeout: float | None):  # -> http.client.HTTPResponse
    """urllib's urlopen, except that a redirect is an HTTPError (see `redirected`), not followed."""
    return _OPENER.open(req, timeout=timeout)


def redirected(url: str, exc: urllib.error.HTTPError) -> QueryError | None:
    """The error for a redirect answer, naming where it points; None for any other answer."""
    if exc.code not in REDIRECTS:
        return None
    to = urllib.parse.urljoin(url, exc.headers.get("Location", ""))
    return QueryError(f"{url} answered {exc.code} {exc.reason}: redirects to {to}; kg follows no redirect: give the URL it points to, "
                      "if that is the store's")


def request(method: str, url: str, body: bytes, content_type: str, accept: str, deadline: Deadline) -> tuple[bytes, str]:
    """Send one HTTP request and return (body, content type); HTTP and network failures, and redirects, become QueryError.

    The whole answer must have come by `deadline` (kg.sparql.deadline): the socket waits at most what is left of it,
    and a socket that times out is the deadline passed (its error), not a store that cannot be reached."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"endpoint {url!r} must be an http:// or https:// URL")
    req = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": content_type, "Accept": accept})
    try:
        with urlopen(req, deadline.left()) as resp:
            return _bounded(resp, url, deadline), resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        moved = redirected(url, exc)
        if moved is not None:
            exc.close()
            raise moved from None
        detail = exc.read().decode("utf-8", "replace").strip().splitlines()
        raise QueryError(f"{url} answered {exc.code} {exc.reason}: {detail[0][:300] if detail else ''}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) and deadline.seconds is not None:
            raise deadline.error() from None
        raise QueryError(f"cannot reach {url} ({reason}); is the store running?") from None


def _bounded(resp: IO[bytes], url: str, deadline: Deadline) -> bytes:
    """The answer's body, read by `deadline` and REMOTE_MAX_BYTES at most: the socket timeout alone bounds each
    read, so a server that trickles a byte a second, or sends without end, held kg for ever or filled the
    machine's memory."""
    from kg.core import defaults

    most = defaults.REMOTE_MAX_BYTES
    chunks, size = [], 0
    while chunk := resp.read1(1 << 20) if hasattr(resp, "read1") else resp.read(1 << 20):
        size += len(chunk)
        if size > most:
            raise QueryError(f"{url} sent more than {most >> 20} MB in one answer; kg stops reading there "
                             "(ask for fewer rows: LIMIT, or a narrower query)")
        if deadline.passed():
            raise deadline.error()
        chunks.append(chunk)
    return b"".join(chunks)


def refuse(q: NamedQuery) -> None:
    """QueryError for a query kg does not send to a store, said before any parameter is bound: a SPARQL Update."""
    from kg.sparql.lexer import is_update

    if is_update(q.text):
        raise QueryError(f"query {q.name!r} is a SPARQL Update; use 'kg push' to change a store")


def lookup(endpoint: str, name: str, terms: Mapping[str, Term], *, graph_iri: str | None, deadline: Deadline) -> Results:
    """The rows of the internal query queries/_NAME.rq on the endpoint, its parameters bound (kg.sparql.catalog's
    look-ups for the query whose `deadline` it is)."""
    from kg.graph.resources import internal_query
    from kg.sparql.lexer import with_values

    text = with_values(internal_query(name), {k: t.n3() for k, t in terms.items()})
    return send(endpoint, text, deadline, graph_iri=graph_iri)


def run(endpoint: str, q: NamedQuery, terms: Mapping[str, Term], deadline: Deadline, *, graph_iri: str | None = None,
        max_rows: int | None = None) -> Results:
    """Run a named query on a SPARQL endpoint, its parameters bound as RDF terms by a VALUES block
    (kg.sparql.run binds them, with `lookup`); past `max_rows` rows, the first ones, marked truncated."""
    from kg.sparql.lexer import form, with_values

    text = with_values(q.text, {k: t.n3() for k, t in terms.items()})
    graph = form(text) in ("CONSTRUCT", "DESCRIBE")
    answer = send(endpoint, text, deadline, graph_iri=graph_iri, name=q.name, graph=graph)
    return answer if max_rows is None or len(answer) <= max_rows else replace(answer.head(max_rows), truncated=True)


def send(endpoint: str, text: str, deadline: Deadline, *, graph_iri: str | None = None, name: str = "query", graph: bool = False) -> Results:
    """POST one query (form-encoded, as the SPARQL 1.1 Protocol says) and parse the answer, all by `deadline`."""
    import pyoxigraph as ox

    from kg.sparql import results_json

    fields = [("query", text)] + ([("default-graph-uri", graph_iri)] if graph_iri else [])
    accept = "application/n-triples" if graph else "application/sparql-results+json"
    body, ctype = _post(endpoint, urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded", accept, deadline)
    try:
        if graph:
            return Results("graph", triples=tuple(ox.parse(body, format=ox.RdfFormat.N_TRIPLES)), name=name)
        return results_json.read(body, deadline, name)
    except (ValueError, SyntaxError) as exc:
        raise QueryError(f"{endpoint} answered query {name!r} with something that is not {accept} ({ctype}): {exc}") from None
