"""`kg push`: load a graph file (or a sharded graph folder) into a SPARQL 1.1 store.

Two ways in, both plain HTTP:
- the SPARQL 1.1 Graph Store HTTP Protocol (`store`): each request POSTs a chunk of N-Triples to
  `STORE?graph=IRI` (or `STORE?default`); the store parses and loads it natively, which is many
  times faster than an update (Oxigraph `/store`, Fuseki `/DATASET/data`, GraphDB
  `/repositories/REPO/rdf-graphs/service`);
- SPARQL 1.1 Update (`endpoint`): batched `INSERT DATA`, for stores without the protocol.

The graph is read as a stream and sent in chunks of `batch` triples, so a graph of any size is sent
with bounded memory and in requests a server accepts. Graph IRIs are checked by an IRI parser
(pyoxigraph's) and written as N-Triples terms, never pasted. `replace` loads into a temporary graph
and swaps it in with one `MOVE` (a single update, atomic in the store): an interrupted or failed
push leaves the target graph as it was. Every failure says what the store holds afterwards.
"""

from __future__ import annotations

import io
import itertools
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from . import shards
from .defaults import PUSH_BATCH, PUSH_TIMEOUT
from .errors import InputError, QueryError, UsageError
from .remote import request

BATCH = PUSH_BATCH  # triples per INSERT DATA request (kg.defaults)
STORE_BATCH = 500_000  # triples per Graph Store Protocol request: about 70 MB of N-Triples
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
    timeout: float = PUSH_TIMEOUT,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Load a graph file or shard folder into a store; return the triples sent.

    `store` is a Graph Store Protocol URL (the fast way), `endpoint` a SPARQL Update URL (batched
    INSERT DATA, and the `MOVE` that makes `replace` atomic when `store` is given too). `graph_iri`
    puts the triples in that named graph (else the default graph); `replace` swaps its content for
    the file's. `progress` is called with the number of triples sent so far.
    """
    if endpoint is None and store is None:
        raise UsageError("name the store: --store GRAPH_STORE_URL (fast) or --endpoint UPDATE_URL (or both)")
    size = (STORE_BATCH if store else BATCH) if batch is None else batch
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise UsageError(f"batch must be a whole number of triples, at least 1 (got {batch!r})")
    target = graph_term(graph_iri) if graph_iri is not None else None
    for url in (endpoint, store):
        if url is not None and not url.startswith(("http://", "https://")):
            raise UsageError(f"endpoint {url!r} must be an http:// or https:// URL")
    chunks = _lines(shards.files(graph), size) if Path(graph).is_dir() else _chunks(_sources(graph), size)
    first = next(chunks, None)
    if first is None:
        raise InputError(f"{graph}: holds no triples; nothing to push")
    following = next(chunks, None)
    chunks = itertools.chain([first], [following] if following is not None else [], chunks)
    if replace and store is not None and following is None and endpoint is None:
        # One request holds the whole graph: a Graph Store PUT replaces it in one step.
        request("PUT", _store_url(store, target), first[1], NT_TYPE, "*/*", timeout)
        if progress is not None:
            progress(first[0])
        return first[0]
    if replace and endpoint is None:
        raise UsageError(
            f"--replace through --store in {size}-triple requests needs --endpoint UPDATE_URL too, for the atomic swap (a SPARQL MOVE); "
            "or raise --batch so that the graph fits one request"
        )
    into = graph_term(f"urn:kg:push:{uuid.uuid4().hex}") if replace else target
    sent = 0
    try:
        for n, body in chunks:
            if store is not None:
                request("POST", _store_url(store, into), body, NT_TYPE, "*/*", timeout)
            else:
                request("POST", endpoint or "", _insert_data(body, into), UPDATE_TYPE, "*/*", timeout)
            sent += n
            if progress is not None:
                progress(sent)
        if replace:
            assert into is not None and endpoint is not None
            swap = f"MOVE SILENT GRAPH {into} TO {f'GRAPH {target}' if target is not None else 'DEFAULT'}"
            request("POST", endpoint, swap.encode("utf-8"), UPDATE_TYPE, "*/*", timeout)
    except (Exception, KeyboardInterrupt) as exc:
        raise PushError(_state(exc, graph, sent, target, into if replace else None, endpoint, timeout)) from exc
    return sent


def _state(exc: BaseException, graph: str | Path, sent: int, target, scratch, endpoint: str | None, timeout: float) -> str:
    """What went wrong and exactly what the store holds now (dropping the scratch graph of a replace)."""
    why = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
    where = f"graph {target}" if target is not None else "the default graph"
    if scratch is None:
        if sent == 0:
            return f"push of {graph} failed before any triple was loaded ({why}); {where} is as it was"
        return (
            f"push of {graph} stopped after {sent} triples were loaded ({why}); {where} holds them in addition to what it had: "
            "push again with --replace to load the graph whole"
        )
    try:
        request("POST", endpoint or "", f"DROP SILENT GRAPH {scratch}".encode(), UPDATE_TYPE, "*/*", min(timeout, 60.0))
        left = f"the {sent} triples already sent to the temporary graph {scratch} were dropped"
    except (QueryError, KeyboardInterrupt):
        left = f"the {sent} triples already sent stay in the temporary graph {scratch}: remove them with DROP GRAPH {scratch}"
    return f"push of {graph} stopped ({why}); {where} is as it was (not replaced); {left}"


def _store_url(store: str, graph) -> str:  # graph: pyoxigraph.NamedNode | None
    """The Graph Store Protocol URL of a graph: STORE?graph=IRI (encoded), or STORE?default."""
    query = urllib.parse.urlencode({"graph": graph.value}) if graph is not None else "default"
    return f"{store}{'&' if '?' in store else '?'}{query}"


def _insert_data(body: bytes, graph) -> bytes:  # graph: pyoxigraph.NamedNode | None
    """An INSERT DATA update of N-Triples, in a GRAPH block when named (the IRI as its N-Triples term)."""
    if graph is None:
        return b"INSERT DATA {\n" + body + b"}\n"
    return b"INSERT DATA { GRAPH " + str(graph).encode("utf-8") + b" {\n" + body + b"} }\n"


def _sources(graph: str | Path) -> list[Path]:
    """The files of a graph file (one)."""
    path = Path(graph)
    if not path.is_file():
        raise InputError(f"{path}: no such graph file; run 'kg build' first or pass the path of a .ttl file")
    return [path]


def _lines(files: list[Path], size: int) -> Iterator[tuple[int, bytes]]:
    """(count, bytes) of about `size` lines at a time (whole lines) of N-Triples shards kg wrote.

    kg's shards hold one triple a line and no blank nodes, so they are sent as they are, read in
    blocks, not parsed and written again: the store parses them anyway.
    """
    parts: list[bytes] = []
    count = 0
    for path in files:
        rest = b""
        with path.open("rb") as stream:
            while block := stream.read(1 << 22):
                block = rest + block
                cut = block.rfind(b"\n") + 1
                parts.append(block[:cut])
                rest = block[cut:]
                count += block.count(b"\n", 0, cut)
                if count >= size:
                    yield count, b"".join(parts)
                    parts, count = [], 0
        if rest.strip():
            parts.append(rest + b"\n")
            count += 1
    if parts and count:
        yield count, b"".join(parts)


def _chunks(files: list[Path], size: int) -> Iterator[tuple[int, bytes]]:
    """(count, N-Triples bytes) of up to `size` triples at a time, read as a stream from the files in turn."""
    import pyoxigraph as ox

    from .graphio import FORMATS, format_for

    def triples() -> Iterator:
        for path in files:
            rdf_format = getattr(ox.RdfFormat, FORMATS[format_for(None, path)][0])
            with path.open("rb") as stream:
                try:
                    for item in ox.parse(stream, format=rdf_format):
                        t = item.triple if rdf_format.supports_datasets else item
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
