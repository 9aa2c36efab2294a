"""`kg serve`: a read-only SPARQL 1.1 Protocol endpoint at /sparql, and a small HTML page at /.

`make_app` is a plain WSGI application (tests call it without a socket; any WSGI server can host
it); `serve` runs it on the standard library's threading server, on loopback unless told
otherwise. Queries run in killable worker processes (kg.endpoint.workers) under a time limit and a row cap, where
kg.endpoint.answer opens the pinned graph and answers each job.
"""

from __future__ import annotations

import errno
import html
import json
import socket
import sys
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from kg.core import progress
from kg.core.defaults import (
    SERVE_BUFFERED,
    SERVE_BUFFERED_PER_CLIENT,
    SERVE_CACHE_MB,
    SERVE_HOST,
    SERVE_MAX_BYTES,
    SERVE_MAX_REQUEST_BYTES,
    SERVE_MAX_ROWS,
    SERVE_MEMORY_MB,
    SERVE_MEMORY_PER_MB,
    SERVE_PORT,
    SERVE_STORE_NICE,
    SERVE_TIMEOUT,
    SERVE_WORKERS,
)
from kg.core.errors import InputError, KgError, UsageError
from kg.endpoint import guard
from kg.endpoint.answer import REASONS, Reply, answer, confined, text_reply
from kg.endpoint.cache import Answers, cut_at_bytes, deterministic
from kg.endpoint.pages import offset_of, page, query_form
from kg.graph.handle import GraphFile
from kg.sparql import index as qindex
from kg.sparql.results import MEDIA_TYPES

if TYPE_CHECKING:
    pass

# ---- the WSGI application --------------------------------------------------------------------

POOL_WAIT = 5.0  # seconds an admitted job waits for a started worker of its pool


class App:
    """The WSGI application of `kg serve` for one graph file."""

    def __init__(self, graph: str | Path, *, workers: int = SERVE_WORKERS, timeout: float = SERVE_TIMEOUT,
                 max_rows: int = SERVE_MAX_ROWS, max_request_bytes: int = SERVE_MAX_REQUEST_BYTES, memory: bool = True,
                 max_bytes: int = SERVE_MAX_BYTES, memory_mb: int | None = None, queue_wait: float | None = None,
                 hosts: Iterable[str] = (), max_buffered: int = SERVE_BUFFERED,
                 max_buffered_per_client: int = SERVE_BUFFERED_PER_CLIENT, cache_mb: int = SERVE_CACHE_MB) -> None:
        from kg.endpoint.admission import Admission, Buffers
        from kg.endpoint.snapshot import loading, release, take
        from kg.endpoint.workers import Pool

        self.graph = GraphFile.existing(graph).path
        # One version of the graph, its query index and its store (made here if missing, once per version of the
        # graph), pinned for every worker (kg.endpoint.snapshot)
        try:
            progress.stage("the graph's store and query index")
            self.snapshot = take(self.graph)
        except InputError as exc:  # e.g. a graph that does not parse
            raise InputError(f"{self.graph}: cannot serve it ({exc})") from None
        self.timeout, self.max_rows, self.max_request_bytes = timeout, max_rows, max_request_bytes
        try:
            self.memory_mb = memory_mb = memory_mb if memory_mb is not None else worker_memory_mb(self.graph)
            self.hosts = guard.host_names(hosts)
            # A request waits for a worker at most half the time limit: behind a runaway it is told "busy" soon.
            wait = queue_wait if queue_wait is not None else max(1.0, timeout / 2)
            self.pool = Pool(confined, (self.snapshot, max_rows, memory, (memory_mb, max_bytes)), answer, size=workers, spare=True)
            # Heavy clients, and new ones while new prefixes send runaways (kg.endpoint.admission), are answered by
            # workers of their own that read the persisted store: a runaway ends one of those, opened again in a second,
            # never a worker that holds the graph in memory (a load of 20-40 s at 21k papers, which runaways from many
            # prefixes repeated every few seconds). With workers that read the store anyway, one pool serves all. They run
            # at a lower priority: a runaway there takes the processor from the known clients' queries last (decision 0058).
            self.quarantine = (Pool(confined, (self.snapshot, max_rows, False, (memory_mb, max_bytes), SERVE_STORE_NICE), answer,
                                    size=workers)
                               if memory and self.snapshot.store is not None else None)
            # A long query while a worker loads the graph into memory is excused once a minute (decision 0058)
            warming = (lambda: loading(self.snapshot)) if self.quarantine is not None else None
            self.admission = Admission(workers, wait=wait, limit=timeout, ready=(self.quarantine or self.pool).ready, loading=warming)
            self.buffers = Buffers(max_buffered, max_buffered_per_client)  # answers held for clients still reading them
            # Answers given again without a worker; a request waits for the same one in flight as long as that can take
            self.answers = Answers(cache_mb << 20, follow=wait + POOL_WAIT + timeout + 1.0)
            progress.stage(f"starting the query workers ({'loading the graph into memory' if memory else 'opening the store'})")
            problem = self.pool.started()
            if problem is None and self.quarantine is not None and self.quarantine.started() is not None:
                self.quarantine.close()  # e.g. the store does not fit --max-memory: the main pool answers everyone
                self.quarantine = None
                self.admission.ready = self.pool.ready
        except BaseException:  # a bad option, Ctrl-C or SIGTERM while the workers start: the pinned version goes too
            if hasattr(self, "pool"):
                self.pool.close()
            quarantine = getattr(self, "quarantine", None)
            if quarantine is not None:
                quarantine.close()
            release(self.snapshot)
            raise
        if problem is not None:
            self.close()
            raise InputError(f"{self.graph}: cannot serve it ({problem})")

    def close(self) -> None:
        """Stop the worker processes and let go of the pinned version of the graph."""
        from kg.endpoint.snapshot import release

        self.pool.close()
        if self.quarantine is not None:
            self.quarantine.close()
        release(self.snapshot)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        try:
            reply = self.route(environ)
        except Exception as exc:  # never a traceback to the client; one line on stderr for the operator
            print(f"kg serve: {type(exc).__name__}: {exc}", file=sys.stderr)
            reply = text_reply(500, "internal error; see the server log")
        from kg.endpoint.admission import Held

        client = environ.get("REMOTE_ADDR") or "?"
        refused = self.buffers.take(client, len(reply.body))
        if refused is not None:  # the answer is dropped: too much is held for clients still reading
            if refused[0] == 429:
                self.admission.penalize(client)
            reply = text_reply(*refused, (("Retry-After", "1"),))
        headers = [("Content-Type", reply.content_type), ("Content-Length", str(len(reply.body))),
                   ("X-Content-Type-Options", "nosniff"), *reply.headers]
        start_response(f"{reply.status} {REASONS.get(reply.status, 'Error')}", headers)
        return Held(reply.body, None if refused else lambda: self.buffers.give(client, len(reply.body)))

    def route(self, environ: dict) -> Reply:
        """Dispatch one request by path and method."""
        path = environ.get("PATH_INFO", "/") or "/"
        method = environ.get("REQUEST_METHOD", "GET").upper()
        refused = guard.foreign(environ, method, self.hosts)
        if refused is not None:
            return text_reply(*refused)
        if path == "/":
            return Reply(200, "text/html; charset=utf-8", self.home().encode())
        if path == "/graph":
            return self.rendered()
        if path == "/sparql":
            if method not in ("GET", "POST"):
                return text_reply(405, "use GET or POST", (("Allow", "GET, POST"),))
            return self.sparql(environ, method)
        if path.startswith("/queries/") and method == "GET":
            return self.named(environ, urllib.parse.unquote(path[len("/queries/"):]))
        if path == "/queries":
            return self.listing()
        return text_reply(404, f"no page {path}; try / or /sparql")

    def sparql(self, environ: dict, method: str) -> Reply:
        """The SPARQL 1.1 Protocol: GET query=, POST form-encoded, POST application/sparql-query."""
        from kg.sparql.lexer import is_update, uses_service
        from kg.sparql.run import from_text
        from kg.sparql.sanitise import bounded

        args = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        if method == "POST":
            ctype = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                return text_reply(400, "bad Content-Length")
            if length < 0:
                return text_reply(400, f"bad Content-Length {length}")
            if length > self.max_request_bytes:
                return text_reply(413, f"request of {length} bytes is over the limit of {self.max_request_bytes}")
            body = environ["wsgi.input"].read(length) if length else b""
            if ctype == "application/sparql-update":
                return text_reply(403, "this endpoint is read-only: SPARQL Update is refused")
            if ctype == "application/x-www-form-urlencoded":
                form = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
                for k, v in form.items():
                    args.setdefault(k, []).extend(v)
            elif ctype == "application/sparql-query":
                args.setdefault("query", []).append(body.decode("utf-8", "replace"))
            else:
                return text_reply(415, f"unsupported Content-Type {ctype!r}: use application/x-www-form-urlencoded or application/sparql-query")
        if "update" in args:
            return text_reply(403, "this endpoint is read-only: SPARQL Update is refused")
        texts = args.get("query", [])
        if len(texts) != 1 or not texts[0].strip():
            return text_reply(400, "pass exactly one query, as query=… (GET or a form POST) or as an application/sparql-query body")
        text = texts[0]
        if len(text.encode()) > self.max_request_bytes:
            return text_reply(413, f"query of {len(text.encode())} bytes is over the limit of {self.max_request_bytes}")
        q = from_text(text, "request")  # line endings made LF (kg.sparql.sanitise) before any scan reads it
        try:  # a text too deep or too long for a parser never reaches a worker
            bounded(q.text)
        except KgError as exc:
            return text_reply(400, f"query 'request': {exc}")
        if is_update(q.text):
            return text_reply(403, "this endpoint is read-only: SPARQL Update is refused")
        if uses_service(q.text):
            return text_reply(403, "SERVICE (federated query) is refused: this endpoint does not fetch other endpoints")
        return self.run(q, {}, environ, args, untrusted=True, typed=text)

    def named(self, environ: dict, name: str) -> Reply:
        """GET /queries/NAME?param=value&format=…: run a named query."""
        from kg.sparql.run import catalog

        named = catalog()
        if name not in named:
            return text_reply(404, f"query {name!r} not found (available: {', '.join(named)})")
        args = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        params = {k: v[-1] for k, v in args.items() if k not in ("format", "offset") and v and v[-1] != ""}
        return self.run(named[name], params, environ, args)

    def run(self, q: Any, params: dict, environ: dict, args: dict, *, untrusted: bool = False, typed: str | None = None) -> Reply:
        """Send one job to the worker pool, fairly between clients (kg.endpoint.admission), and turn its outcome into a reply
        (`typed`: the query text as sent, kept on the page). The same request again is answered from the answers kept
        (kg.endpoint.cache): the server pins one version, so its answer cannot change."""
        fmt = (args.get("format") or [None])[-1] or None
        if fmt is not None and fmt not in MEDIA_TYPES:
            return text_reply(400, f"unknown format {fmt!r} (available: {', '.join(MEDIA_TYPES)})")
        job = {"query": q, "params": params, "accept": environ.get("HTTP_ACCEPT", "*/*"), "format": fmt, "untrusted": untrusted,
               "typed": typed, "offset": offset_of(args)}
        client = environ.get("REMOTE_ADDR") or "?"
        bounded = not untrusted and self.snapshot.index is not None and qindex.answers(q)  # the index answers it: it cannot run away
        if not deterministic(q.text):
            return self.asked(job, client, bounded)
        key = (q.name, q.text, tuple(sorted(params.items())), job["accept"], fmt, untrusted, typed, job["offset"])
        return self.answers.answer(key, lambda: self.asked(job, client, bounded))

    def asked(self, job: dict, client: str, bounded: bool) -> Reply:
        """Run one job in a worker, admitted fairly between clients, and turn its outcome into a reply."""
        from kg.endpoint.admission import Busy

        try:
            with self.admission.slot(client, bounded) as risky:
                outcome = (self.quarantine if risky and self.quarantine is not None else self.pool).run(job, self.timeout, wait=POOL_WAIT)
        except Busy as exc:
            return text_reply(exc.status, str(exc), (("Retry-After", "1"),))
        if outcome.ok:
            if cut_at_bytes(outcome.value):
                self.admission.penalize(client)
            return outcome.value
        if outcome.kind in ("timeout", "crash"):
            self.admission.penalize(client, timed_out=outcome.kind == "timeout")
        message = outcome.message
        if outcome.kind == "crash":
            message += f"; a query worker may use {self.memory_mb} MB (kg serve --max-memory)"
        status = {"timeout": 503, "busy": 503, "crash": 503}.get(outcome.kind, 500)
        return text_reply(status, message, (("Retry-After", "1"),) if outcome.kind == "busy" else ())

    def listing(self) -> Reply:
        """GET /queries: the named queries as JSON."""
        from kg.sparql.run import catalog

        items = [{"name": q.name, "purpose": q.purpose, "example": q.example,
                  "parameters": [{"name": p.name, "type": p.type, "required": p.required, "default": p.default, "doc": p.doc} for p in q.params]}
                 for q in catalog().values()]
        return Reply(200, "application/json", json.dumps(items, indent=1).encode())

    def rendered(self) -> Reply:
        """GET /graph: the HTML view `kg build` / `kg render` wrote beside the graph, pinned with the version the
        answers come from (kg.endpoint.snapshot)."""
        try:
            return Reply(200, "text/html; charset=utf-8", self.snapshot.page.read_bytes())
        except (FileNotFoundError, IsADirectoryError):
            page = self.graph.with_suffix(".html")
            return text_reply(404, f"{page} does not exist for the version of the graph served; run 'kg render {self.graph}' and start kg serve again")

    def home(self) -> str:
        """The HTML page at /: a query box, the named queries, and a link to the rendered graph."""
        from kg.sparql.run import catalog

        e = html.escape
        items = []
        for q in catalog().values():
            inputs = "".join(
                f"<label>{e(p.name)} <input name='{e(p.name)}' value='{e(p.default or '')}' placeholder='{e(p.type)}'"
                f"{' required' if p.required else ''} title='{e(p.doc)}'></label> " for p in q.params)
            items.append(
                f"<li><form action='/queries/{e(q.name)}' method='get'><b>{e(q.name)}</b> — {e(q.purpose)}<br>"
                f"{inputs}<input type='hidden' name='format' value='html'><button>run</button></form></li>")
        example = ("SELECT ?label (COUNT(?paper) AS ?papers) WHERE {\n  ?paper dcterms:subject ?c .\n  ?c skos:prefLabel ?label .\n}\n"
                   "GROUP BY ?label ORDER BY DESC(?papers) ?label")
        body = (
            f"<p>Graph <code>{e(self.graph.name)}</code> — <a href='/graph'>rendered graph</a> · "
            f"SPARQL endpoint: <code>/sparql</code> (read-only; {self.timeout:g} s and {self.max_rows} rows per query)</p>"
            f"{query_form(example)}"
            f"<h2>Named queries</h2><ul>{''.join(items)}</ul>")
        return page("kg SPARQL", body)


def worker_memory_mb(graph: Path) -> int:
    """The default address space of a query worker, in MB: a base, and room to load the graph file (kg.core.defaults)."""
    return SERVE_MEMORY_MB + SERVE_MEMORY_PER_MB * -(-GraphFile(graph).size() // (1 << 20))


@progress.stepped("starting the endpoint for {graph}")
def make_app(graph: str | Path, **options: Any) -> App:
    """The WSGI app for a graph file (options: workers, timeout, max_rows, max_request_bytes, memory,
    max_bytes, memory_mb, queue_wait, hosts: the host names a request's Host header may carry,
    max_buffered and max_buffered_per_client: bytes of answers held for clients still reading them, cache_mb:
    megabytes of answers kept and given again without a worker)."""
    return App(graph, **options)


def make_server(app: App, host: str = "127.0.0.1", port: int = 0, *, quiet: bool = False):  # -> WSGIServer
    """A threading HTTP server for the app (port 0 picks a free port: see server.server_port)."""
    import socket
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer
    from wsgiref.simple_server import make_server as wsgi_server

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        allow_reuse_address = True
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        request_queue_size = 64

    class Handler(WSGIRequestHandler):
        timeout = 30  # a client that stops sending is dropped, not waited on forever

        def log_message(self, format: str, *args: Any) -> None:
            if not quiet:
                super().log_message(format, *args)

    return wsgi_server(host, port, app, server_class=Server, handler_class=Handler)


def serve(graph: str | Path, host: str = SERVE_HOST, port: int = SERVE_PORT, **options: Any) -> None:
    """Serve a graph at http://HOST:PORT/sparql until interrupted by Ctrl-C or SIGTERM (prints the address to stderr)."""
    GraphFile.existing(graph)  # the one error for a missing graph, before anything starts
    with _sigterm_ends_it():
        _serve(graph, host, port, **options)


@contextmanager
def _sigterm_ends_it() -> Iterator[None]:
    """SIGTERM (a service manager stopping the server, `kill PID`) is Ctrl-C to the server: a KeyboardInterrupt in the main
    thread, so its workers are stopped and its pinned version released (kg.endpoint.snapshot's folder of links removed).
    Python's default for SIGTERM ended the process at once and left the folder behind. A second SIGTERM does not cut the
    cleanup short. Not in the main thread (a host embedding the app): as it was."""
    import signal
    import threading

    def stop(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _serve(graph: str | Path, host: str, port: int, **options: Any) -> None:
    from kg.endpoint.sandbox import give_back_large_blocks

    give_back_large_blocks()  # answers held for slow readers are given back to the system once sent (kg.endpoint.admission.Buffers)
    app = make_app(graph, hosts=(host, *options.pop("hosts", ())), **options)
    # Everything after the app holds its pinned version is inside this try: a SIGTERM sent as soon as the address
    # is printed (a service manager, a test) came before the serve loop's try once, and left the pin folder behind.
    try:
        try:
            server = make_server(app, host, port)
        except OSError as exc:
            # a name that resolves to nothing, or an address this machine does not have, is the host's fault
            wrong_host = isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL
            raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}); {'check --host' if wrong_host else 'pick another --port'}") from None
        try:
            if host not in ("127.0.0.1", "localhost", "::1"):
                print(f"warning: listening on {host}, reachable from other machines", file=sys.stderr)
            shown = f"[{host}]" if ":" in host else host
            print(f"kg serve: http://{shown}:{server.server_port}/ (SPARQL at /sparql); Ctrl-C to stop", file=sys.stderr)
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    finally:
        app.close()
