"""What `kg serve` refuses before and after running a query, as (HTTP status, message) pairs.

Before: requests from another site (a Host that is no name of this server: DNS rebinding; a
browser's cross-site POST), and ad-hoc queries that would make the server fetch something or
write (kg.sparql.sanitise.check, on the parsed query). After: a response longer than the byte cap is cut
to the rows that fit.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
import urllib.parse
from collections.abc import Iterable
from typing import Any

from kg.core.errors import KgError

Refusal = tuple[int, str]


def host_names(extra: Iterable[str]) -> frozenset[str]:
    """Host names a request may carry: loopback names, this machine's names, and the given ones (lower case)."""
    names = {"localhost", socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names | {h.strip().strip("[]").lower() for h in extra if h.strip()})


def foreign(environ: dict, method: str, hosts: frozenset[str]) -> Refusal | None:
    """A refusal for a request from another site, or None for a request that may go on.

    A Host header naming no address of this server is a web page whose domain was made to resolve to
    this machine (DNS rebinding); an IP address literal cannot be rebound and is accepted. A request
    that runs a query (a POST, a GET of /sparql or /queries/NAME) that a browser marks as cross-site
    (Sec-Fetch-Site) or sends from another origin comes from another page, unless it is a link the
    user followed.
    """
    host = environ.get("HTTP_HOST", "")
    if host:
        name = (urllib.parse.urlsplit(f"//{host}").hostname or "").lower()
        try:
            ipaddress.ip_address(name)
        except ValueError:
            if name not in hosts:
                return 403, f"Host {host!r} is not a name of this server; start it with --allow-host {name} to accept it"
    path = environ.get("PATH_INFO", "/") or "/"
    runs_query = method == "POST" or path == "/sparql" or path.startswith("/queries/")
    # A link the user followed (a navigation the user started) may open a query; a page's own fetches, images,
    # scripts and frames may not: any web page could make its visitors' endpoint run runaway queries.
    followed = environ.get("HTTP_SEC_FETCH_MODE", "").lower() == "navigate" and environ.get("HTTP_SEC_FETCH_USER") == "?1"
    if runs_query and not (method == "GET" and followed):
        if environ.get("HTTP_SEC_FETCH_SITE", "").lower() in ("cross-site", "same-site"):
            return 403, "cross-site requests are refused: send the query from this server's page or a non-browser client"
        origin = environ.get("HTTP_ORIGIN", "")
        if origin and (origin == "null" or urllib.parse.urlsplit(origin).netloc.lower() != host.lower()):
            return 403, f"a {method} from origin {origin} is refused: send the query from this server's page or a non-browser client"
    return None


def refused(text: str, name: str = "request") -> Refusal | None:
    """The refusal of an ad-hoc query (kg.sparql.sanitise.check), or None when it may run. Runs in a query worker.

    A text the check cannot read is refused with the check's own message: it is not given to the
    engine's parser to find a better one (a text too deep for the check can overflow the engine's stack).
    """
    from kg.sparql.sanitise import check

    try:
        checked = check(text)
    except KgError as exc:
        return 400, f"query {name!r}: {exc}"
    if checked.unreadable is not None:
        return 400, f"query {name!r}: {checked.unreadable}; the endpoint runs only queries it can check (SPARQL 1.1)"
    return None if checked.refusal is None else (403, checked.refusal)


def fit(results: Any, fmt: str, max_bytes: int) -> tuple[bytes, Any]:
    """The serialized results, cut to the first rows that fit in `max_bytes` (the row cap counts rows, not bytes)."""
    body = results.serialize(fmt)
    field = "rows" if results.kind == "select" else "triples"
    items = getattr(results, field)
    keep = len(items)
    while len(body) > max_bytes and keep > 0:
        keep = max(0, min(keep - 1, int(keep * max_bytes / len(body) * 0.9)))
        results = dataclasses.replace(results, **{field: items[:keep]}, truncated=True)
        body = results.serialize(fmt)
    return body, results
