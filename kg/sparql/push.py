"""`kg push`: load a graph file (or a sharded graph folder) into a SPARQL 1.1 store.

Two ways in, both plain HTTP:
- the SPARQL 1.1 Graph Store HTTP Protocol (`store`): each request POSTs a chunk of N-Triples to
  `STORE?graph=IRI` (or `STORE?default`); the store parses and loads it natively (Oxigraph `/store`,
  Fuseki `/DATASET/data`, GraphDB `/repositories/REPO/rdf-graphs/service`). With `bulk`, the
  requests go to the store's bulk loader (Oxigraph's `no_transaction`), which skips the
  per-request transaction: several times faster, but a failed request may leave part of itself loaded;
- SPARQL 1.1 Update (`endpoint`): batched `INSERT DATA`, for stores without the protocol.

The graph is read as a stream and sent in chunks of `batch` triples, so a graph of any size is sent
with bounded memory and in requests a server accepts. Into the Graph Store Protocol, N-Triples (kg's
shards, `.nt` files) are sent as the bytes they are, cut at line ends: the store parses them as
N-Triples, data that cannot hold a command. A SPARQL Update holds only text kg wrote itself: every
triple parsed (pyoxigraph) and written again term by term, so no line of a file can close the
INSERT DATA block and add an update of its own; other formats are parsed and written the same way.
Graph IRIs are checked by an IRI parser (pyoxigraph's) and written as N-Triples terms, never pasted.
`replace` loads into a temporary graph and swaps it in with one `MOVE` (a single update, atomic in
the store): an interrupted or failed push leaves the target graph as it was. The one exception is a
graph that fits one transactional request without an update URL: a Graph Store PUT, one transaction.
A bulk PUT is never used (it empties the graph, then loads without a transaction), and a `replace`
whose update URL is on another server than its store URL is refused. Redirects are not followed.
Every failure says what the store holds afterwards. Why these defaults:
docs/decisions/0024-push-through-the-bulk-loader.md.
"""

from __future__ import annotations

import io
import itertools
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kg.core.defaults import PUSH_BATCH, PUSH_TIMEOUT
from kg.core.defaults import PUSH_BULK_BATCH as BULK_BATCH
from kg.core.defaults import PUSH_STORE_BATCH as STORE_BATCH
from kg.core.errors import InputError, QueryError, UsageError
from kg.graph.files import rdf_format
from kg.graph.handle import GraphFile
from kg.sparql.deadline import limit, started
from kg.sparql.remote import redirected, request, urlopen

BATCH = PUSH_BATCH  # triples per INSERT DATA request (kg.core.defaults)
BULK_IN_FLIGHT = 2  # bulk requests under way at once: the next one is parsed while the last is written (measured +16 % on 2 cores)
BULK = {"oxigraph": "no_transaction"}  # the Graph Store Protocol URL parameter of each store's bulk loader, by Server header
UPDATE_TYPE = "application/sparql-update; charset=utf-8"
NT_TYPE = "application/n-triples"


class PushError(QueryError):
    """A push that stopped part way; the message says what the store holds now."""


def graph_term(iri: str):  # -> pyoxigraph.NamedNode
    """The NamedNode of a graph IRI, checked by an IRI parser; UsageError when it is not an absolute IRI."""
    import pyoxigraph as ox

    try:
        return ox.NamedNode(iri)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--graph {iri!r} is not an absolute IRI ({exc}); give one such as https://example.org/graph/icml2024") from None


def push(
    graph: str | Path,
    endpoint: str | None = None,
    *,
    store: str | None = None,
    graph_iri: str | None = None,
    replace: bool = False,
    batch: int | None = None,
    bulk: bool = False,
    timeout: float = PUSH_TIMEOUT,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Load a graph file or shard folder into a store; return the triples sent.

    `store` is a Graph Store Protocol URL (the fast way), `endpoint` a SPARQL Update URL (batched
    INSERT DATA, and the `MOVE` that makes `replace` atomic when `store` is given too). `graph_iri`
    puts the triples in that named graph (else the default graph); `replace` swaps its content for
    the file's. `bulk` sends the requests to the store's bulk loader (the store must name itself
    Oxigraph). `progress` is called with the number of triples sent so far.
    """
    size = _checked_options(endpoint, store, replace, batch, bulk)
    target = graph_term(graph_iri) if graph_iri is not None else None
    chunks = _chunks_of(graph, size, update=store is None)
    if bulk:
        assert store is not None
        store = _bulk_url(store, timeout)
    first = next(chunks, None)
    if first is None:
        raise InputError(f"{graph}: holds no triples; nothing to push")
    following = next(chunks, None)
    chunks = itertools.chain([first], [following] if following is not None else [], chunks)
    if replace and store is not None and following is None and endpoint is None:
        _put_whole(graph, store, target, first, timeout)
        if progress is not None:
            progress(first[0])
        return first[0]
    if replace and endpoint is None:
        raise UsageError(
            f"--replace through --store in {size}-triple requests needs --endpoint UPDATE_URL too, for the atomic swap (a SPARQL MOVE); "
            "or raise --batch so that the graph fits one request"
        )
    return _load(graph, chunks, endpoint, store, target, replace, bulk, timeout, progress)


def _checked_options(endpoint: str | None, store: str | None, replace: bool, batch: int | None, bulk: bool) -> int:
    """The triples a request (the batch size), once the options are known to make sense together."""
    if endpoint is None and store is None:
        raise UsageError("name the store: --store GRAPH_STORE_URL (fast) or --endpoint UPDATE_URL (or both)")
    if bulk and store is None:
        raise UsageError("--bulk loads through the Graph Store Protocol: give --store GRAPH_STORE_URL")
    size = ((BULK_BATCH if bulk else STORE_BATCH) if store else BATCH) if batch is None else batch
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise UsageError(f"batch must be a whole number of triples, at least 1 (got {batch!r})")
    for url in (endpoint, store):
        if url is not None and not url.startswith(("http://", "https://")):
            raise UsageError(f"endpoint {url!r} must be an http:// or https:// URL")
    if replace and store is not None and bulk and endpoint is None:
        # A bulk PUT clears the graph and then loads without a transaction: cut off, it leaves the graph empty or part loaded.
        raise UsageError(
            "--replace --bulk needs --endpoint UPDATE_URL too: the bulk loader has no transaction, so the graph is loaded beside the "
            "old one and swapped in by a SPARQL MOVE (Oxigraph: --endpoint http://HOST:PORT/update); or push without --bulk"
        )
    if replace and store is not None and endpoint is not None and not _same_server(store, endpoint):
        raise UsageError(
            f"--replace: --store {store} and --endpoint {endpoint} are on different servers, and the MOVE through the one would not "
            "find the graph loaded through the other; give the two URLs of one store"
        )
    return size


def _chunks_of(graph: str | Path, size: int, *, update: bool) -> Iterator[tuple[int, bytes]]:
    """A graph file or shard folder as N-Triples requests of `size` triples.

    The lines of N-Triples input are copied into Graph Store requests; for a SPARQL Update (`update`) every
    input is parsed and written again, so that the update holds no text kg did not write (decision 0024).
    """
    handle = GraphFile.existing(graph)
    return (_lines if handle.format == "nt" and not update else _chunks)(handle.sources(), size)


def _request(method: str, url: str, body: bytes, content_type: str, timeout: float | None) -> None:
    """One request of a push, answered within `timeout` seconds (None or 0: no limit; kg.sparql.deadline)."""
    request(method, url, body, content_type, "*/*", started(timeout, f"{method} {url}", "the store took longer than kg push allows "
                                                                "one request (kg.push(timeout=SECONDS), 0 = no limit)"))


def _put_whole(graph: str | Path, store: str, target: Any, first: tuple[int, bytes], timeout: float) -> None:
    """Replace the target graph by one Graph Store PUT, which the store applies in one transaction."""
    try:
        _request("PUT", _store_url(store, target), first[1], NT_TYPE, timeout)
    except (QueryError, KeyboardInterrupt) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        where = f"graph {target}" if target is not None else "the default graph"
        raise PushError(f"push of {graph} stopped ({why}); {where} is as it was, or the whole new graph if the store had all of "
                        "the request (a Graph Store PUT is applied in one transaction)") from exc


def _load(graph: str | Path, chunks: Iterator[tuple[int, bytes]], endpoint: str | None, store: str | None, target: Any,
          replace: bool, bulk: bool, timeout: float, progress: Callable[[int], None] | None) -> int:
    """Send every request (into a scratch graph when replacing, then swapped in by a MOVE); return the triples sent."""
    into = graph_term(f"urn:kg:push:{uuid.uuid4().hex}") if replace else target

    def send(body: bytes) -> None:
        if store is not None:
            _request("POST", _store_url(store, into), body, NT_TYPE, timeout)
        else:
            _request("POST", endpoint or "", _insert_data(body, into), UPDATE_TYPE, timeout)

    tally = [0, 0]  # triples loaded, triples of the requests under way when one failed
    try:
        _send_all(chunks, send, BULK_IN_FLIGHT if bulk else 1, tally, progress)
        sent = tally[0]
        if replace:
            assert into is not None and endpoint is not None
            # Not SILENT: a MOVE that does not find the graph (loaded into another store) fails instead of emptying the target.
            swap = f"MOVE GRAPH {into} TO {f'GRAPH {target}' if target is not None else 'DEFAULT'}"
            _request("POST", endpoint, swap.encode("utf-8"), UPDATE_TYPE, timeout)
    except (Exception, KeyboardInterrupt) as exc:
        partly = tally[1] if bulk else 0  # a bulk loader keeps what it loaded of a request that failed
        raise PushError(_state(exc, graph, tally[0], partly, target, into if replace else None, endpoint, timeout)) from exc
    return sent


def _send_all(chunks: Iterator[tuple[int, bytes]], send: Callable[[bytes], None], in_flight: int, tally: list[int],
              progress: Callable[[int], None] | None) -> None:
    """Send each chunk, at most `in_flight` requests at a time, in order; the next chunk is read while requests run.

    `tally[0]` counts the triples of the requests that succeeded; when one fails, `tally[1]` those of the
    requests then under way (which a bulk loader may have loaded in part), and the failure is raised.
    """
    from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

    running: dict[Future[None], int] = {}
    with ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="kg-push") as pool:
        try:
            for n, body in chunks:
                while len(running) >= in_flight:
                    _settle(running, wait(running, return_when=FIRST_EXCEPTION).done, tally, progress)
                running[pool.submit(send, body)] = n
            while running:
                _settle(running, wait(running, return_when=FIRST_EXCEPTION).done, tally, progress)
        except BaseException:
            for future in running:
                future.cancel()
            tally[1] = sum(n for future, n in running.items() if not future.cancelled())
            raise


def _settle(running: dict, done: set, tally: list[int], progress: Callable[[int], None] | None) -> None:
    """Count the requests that finished well; raise the first failure among them (it stays in `running`)."""
    failed = [exc for exc in (f.exception() for f in done) if exc is not None]
    for future in done:
        if future.exception() is None:
            tally[0] += running.pop(future)
    if failed:
        raise failed[0]
    if progress is not None:
        progress(tally[0])


def _state(exc: BaseException, graph: str | Path, sent: int, partly: int, target, scratch, endpoint: str | None, timeout: float) -> str:
    """What went wrong and exactly what the store holds now (dropping the scratch graph of a replace)."""
    why = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
    where = f"graph {target}" if target is not None else "the default graph"
    if scratch is None:
        part = f", and up to {partly} more of the requests under way when one failed (sent to the bulk loader)" if partly else ""
        if sent == 0 and not partly:
            return f"push of {graph} failed before any triple was loaded ({why}); {where} is as it was"
        return (
            f"push of {graph} stopped after {sent} triples were loaded{part} ({why}); {where} holds them in addition to what it had: "
            "push again with --replace to load the graph whole"
        )
    try:
        _request("POST", endpoint or "", f"DROP SILENT GRAPH {scratch}".encode(), UPDATE_TYPE, min(limit(timeout) or 60.0, 60.0))
        left = f"the {sent} triples already sent to the temporary graph {scratch} were dropped"
    except (QueryError, KeyboardInterrupt):
        left = f"the {sent} triples already sent stay in the temporary graph {scratch}: remove them with DROP GRAPH {scratch}"
    return f"push of {graph} stopped ({why}); {where} is as it was (not replaced); {left}"


def _same_server(a: str, b: str) -> bool:
    """Whether two URLs name one server: the same scheme, host and port (the default port of the scheme when none)."""
    one, two = urllib.parse.urlsplit(a), urllib.parse.urlsplit(b)
    ports = {"http": 80, "https": 443}
    return (one.scheme, one.hostname, one.port or ports.get(one.scheme)) == (two.scheme, two.hostname, two.port or ports.get(two.scheme))


def _store_url(store: str, graph) -> str:  # graph: pyoxigraph.NamedNode | None
    """The Graph Store Protocol URL of a graph: STORE?graph=IRI (encoded), or STORE?default."""
    query = urllib.parse.urlencode({"graph": graph.value}) if graph is not None else "default"
    return f"{store}{'&' if '?' in store else '?'}{query}"


def _insert_data(body: bytes, graph) -> bytes:  # graph: pyoxigraph.NamedNode | None
    """An INSERT DATA update of N-Triples, in a GRAPH block when named (the IRI as its N-Triples term)."""
    if graph is None:
        return b"INSERT DATA {\n" + body + b"}\n"
    return b"INSERT DATA { GRAPH " + str(graph).encode("utf-8") + b" {\n" + body + b"} }\n"


def _lines(files: list[Path], size: int) -> Iterator[tuple[int, bytes]]:
    """(count, bytes) of about `size` triples at a time (whole lines) of N-Triples files.

    N-Triples is sent as it is, read in blocks and cut at line ends, not parsed and written again:
    the store parses it anyway. Blank nodes are refused (their labels would be renamed per request).
    """
    parts: list[bytes] = []
    count = 0
    for path in files:
        rest = b""
        with path.open("rb") as stream:
            while block := stream.read(1 << 22):
                block = rest + block
                cut = block.rfind(b"\n") + 1
                parts.append(_checked(block[:cut], path))
                rest = block[cut:]
                count += _count(block[:cut])
                if count >= size:
                    yield count, b"".join(parts)
                    parts, count = [], 0
        if rest.strip():
            parts.append(_checked(rest + b"\n", path))
            count += _count(parts[-1])
    if parts and count:
        yield count, b"".join(parts)


TRIPLE_START = re.compile(rb"(?m)^[ \t]*(?:<|_:)")


def _count(lines: bytes) -> int:
    """The triples in whole lines of N-Triples: one a line that starts a term (not blank, not a comment)."""
    starts = lines.startswith(b"<") + lines.count(b"\n<")
    if starts == lines.count(b"\n"):  # every line starts with an IRI, as kg writes them: the fast count
        return starts
    return len(TRIPLE_START.findall(lines))


def _checked(lines: bytes, path: Path) -> bytes:
    """Lines of N-Triples, refused when they hold a blank node (parsed only when `_:` occurs at all)."""
    if b"_:" not in lines:
        return lines
    import pyoxigraph as ox

    try:
        blank = any(isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode)
                    for t in ox.parse(lines, format=ox.RdfFormat.N_TRIPLES))
    except SyntaxError as exc:
        raise InputError(f"{path}: not valid N-Triples ({exc})") from None
    if blank:
        raise UsageError(f"{path}: has blank nodes, which cannot be pushed in chunks; use the store's bulk loader")
    return lines


def _bulk_url(store: str, timeout: float) -> str:
    """The store URL with its bulk loader's parameter; UsageError for a store kg knows no bulk loader of."""
    name = _server(store, timeout)
    param = BULK.get(name.lower())
    if param is None:
        raise UsageError(
            f"--bulk: {store} answers as {name or 'a server that does not name itself'}, and kg knows the bulk loader of Oxigraph only; "
            "push without --bulk, or load with the store's own loader (Fuseki: tdb2.xloader, GraphDB: importrdf)"
        )
    return f"{store}{'&' if '?' in store else '?'}{param}"


def _server(store: str, timeout: float) -> str:
    """The product a store names in its Server header ('Oxigraph/0.5.13' → 'Oxigraph'), from a HEAD of a graph no one has."""
    url = _store_url(store, graph_term("urn:kg:push:probe"))
    try:
        with urlopen(urllib.request.Request(url, method="HEAD"), limit(timeout)) as resp:
            header = resp.headers.get("Server", "")
    except urllib.error.HTTPError as exc:
        moved = redirected(url, exc)
        if moved is not None:
            raise moved from None
        header = exc.headers.get("Server", "")
    except (urllib.error.URLError, OSError) as exc:
        raise QueryError(f"cannot reach {store} ({getattr(exc, 'reason', exc)}); is the store running?") from None
    return header.split("/")[0].strip()


def _chunks(files: list[Path], size: int) -> Iterator[tuple[int, bytes]]:
    """(count, N-Triples bytes) of up to `size` triples at a time, read as a stream from the files in turn."""
    import pyoxigraph as ox

    def triples() -> Iterator:
        for path in files:
            fmt = rdf_format(path)
            with path.open("rb") as stream:
                try:
                    for item in ox.parse(stream, format=fmt):
                        t = item.triple if fmt.supports_datasets else item
                        if isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode):
                            # Labels would be renamed per request and split across chunks; kg graphs have none.
                            raise UsageError(f"{path}: has blank nodes, which cannot be pushed in chunks; use the store's bulk loader")
                        yield t
                except SyntaxError as exc:
                    raise InputError(f"{path}: not valid RDF ({exc})") from None

    stream = triples()
    while True:
        chunk = list(itertools.islice(stream, size))
        if not chunk:
            return
        out = io.BytesIO()
        ox.serialize(chunk, out, format=ox.RdfFormat.N_TRIPLES)
        yield len(chunk), out.getvalue()
