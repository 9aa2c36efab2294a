"""What a `kg serve` query worker runs, and the HTTP replies it and the server give.

A worker confines itself (kg.endpoint.sandbox), opens the version of the graph the server pinned (its store and
query index, kg.endpoint.snapshot) once, then answers jobs: one named or ad-hoc query each, capped and serialized
in the format negotiated from the request, as a `Reply`. The WSGI application (kg.endpoint.app) routes requests
and hands the jobs to the workers (kg.endpoint.workers).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kg.core.defaults import SERVE_MAX_BYTES
from kg.core.errors import KgError
from kg.endpoint import guard
from kg.endpoint.pages import iri_page, one_page, result_page
from kg.graph.handle import GraphFile
from kg.sparql.results import GRAPH_FORMATS, MEDIA_TYPES, html_table

if TYPE_CHECKING:
    from kg.endpoint.snapshot import Snapshot

_ACCEPT: dict[str, str] = {
    "application/sparql-results+json": "json", "application/json": "json",
    "application/sparql-results+xml": "xml", "application/xml": "xml", "text/xml": "xml",
    "text/csv": "csv", "text/tab-separated-values": "tsv", "text/html": "html",
    "text/turtle": "ttl", "application/x-turtle": "ttl", "application/n-triples": "nt", "text/plain": "plain",
}
_FOR_KIND = {"select": ("json", "xml", "csv", "tsv", "html", "table"), "ask": ("json", "xml", "csv", "tsv", "html", "table"),
             "graph": (*GRAPH_FORMATS, "html")}


@dataclass(frozen=True)
class Reply:
    """An HTTP answer."""

    status: int
    content_type: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


def negotiate(accept: str, kind: str, explicit: str | None = None) -> str | None:
    """The output format for a result kind: `explicit` (format=…) if it fits, else the best Accept match."""
    allowed = _FOR_KIND[kind]
    if explicit:
        return explicit if explicit in allowed else None
    ranked: list[tuple[float, int, str]] = []
    for i, part in enumerate((accept or "*/*").split(",")):
        media, _, rest = part.strip().partition(";")
        q = 1.0
        for p in rest.split(";"):
            k, _, v = p.strip().partition("=")
            if k == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
        ranked.append((-q, i, media.strip().lower()))
    for negq, _, media in sorted(ranked):
        if negq == 0:
            break
        if media in ("*/*", "application/*", "text/*") or not media:
            return allowed[0] if media != "text/*" else ("csv" if kind != "graph" else "ttl")
        fmt = _ACCEPT.get(media)
        if fmt == "plain":
            fmt = "table" if kind != "graph" else "nt"
        if fmt in allowed:
            return fmt
    return None


def text_reply(status: int, message: str, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(status, "text/plain; charset=utf-8", (message + "\n").encode("utf-8"), headers)


REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 413: "Payload Too Large", 415: "Unsupported Media Type", 429: "Too Many Requests",
            500: "Internal Server Error",
            503: "Service Unavailable"}


# ---- what runs inside a worker process -------------------------------------------------------


def confined(graph: str | Snapshot, max_rows: int, memory: bool, limits: tuple[int, int], nice: int = 0) -> tuple:
    """`open_state` in a query worker that first bars itself from opening network sockets and caps its
    memory (kg.endpoint.sandbox; `limits`: MB of address space, bytes of one response), at niceness `nice` (the
    threads it starts too)."""
    import os

    from kg.endpoint.sandbox import memory_limit, no_network

    no_network()
    memory_limit(limits[0])
    if nice:
        os.nice(nice)
    return open_state(graph, max_rows, memory, limits[1])


def open_state(graph: str | Snapshot, max_rows: int, memory: bool, max_bytes: int = SERVE_MAX_BYTES) -> tuple:
    """A worker's state: its own store (in memory, or the persisted one read-only), the row cap, an open connection
    to the graph's query index (kg.graph.index_file; None when stale) and the byte cap.

    `graph`: the version the server pinned (kg.endpoint.snapshot), whose store and index are opened once and kept, so
    that named and ad-hoc queries are answered from that version; or a graph file by its path.
    """
    from kg.endpoint.snapshot import Snapshot, open_snapshot
    from kg.sparql.sanitise import check

    if not isinstance(graph, Snapshot):
        graph = Snapshot(Path(graph), GraphFile(Path(graph)).fresh_index())
    store, index = open_snapshot(graph, memory=memory)
    check("ASK {}")  # load the query checker now, not during the first request
    return store, max_rows, index, max_bytes


def answer(state: tuple, job: dict) -> Reply:
    """Run one query job in a worker: the named or ad-hoc query, capped, serialized as negotiated."""
    from kg.sparql.run import run_store

    store, max_rows, index, max_bytes = state
    if job.get("untrusted"):
        refused = guard.refused(job["query"].text, job["query"].name)
        if refused is not None:
            return text_reply(*refused)
    try:
        results = run_store(store, job["query"], job.get("params") or {}, max_rows=max_rows, index=index)
    except KgError as exc:
        if job.get("format") == "html":  # the query page: the error above the query as the user typed it
            return Reply(400, "text/html; charset=utf-8", result_page(job, f"<p class='error'>{html.escape(str(exc))}</p>").encode())
        return Reply(400, "text/plain; charset=utf-8", f"{exc}\n".encode())
    fmt = negotiate(job.get("accept", ""), results.kind, job.get("format"))
    if fmt is None:
        offered = ", ".join(_FOR_KIND[results.kind])
        return Reply(406, "text/plain; charset=utf-8", f"no acceptable format for this {results.kind.upper()} result (available: {offered}; or pass format=…)\n".encode())
    if fmt == "html" and results.kind == "select":
        shown, pages = one_page(results, job)
        body = result_page(job, pages + html_table(shown, iri_page).decode(), results.kind).encode()
        headers: tuple[tuple[str, str], ...] = (("X-Kg-Truncated", f"true; max-rows={max_rows}"),) if results.truncated else ()
        return Reply(200, MEDIA_TYPES[fmt], body, headers)
    rows = len(results)
    try:
        body, results = guard.fit(results, fmt, max_bytes)
    except KgError as exc:  # e.g. characters the format cannot carry
        return Reply(406, "text/plain; charset=utf-8", f"{exc}\n".encode())
    if fmt == "html":
        body = result_page(job, body.decode(), results.kind).encode()
    headers = ()
    if len(results) < rows:
        headers = (("X-Kg-Truncated", f"true; max-bytes={max_bytes}"),)
    elif results.truncated:
        headers = (("X-Kg-Truncated", f"true; max-rows={max_rows}"),)
    return Reply(200, MEDIA_TYPES[fmt], body, headers)
