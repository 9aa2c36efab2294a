"""The `export` verb: convert a graph file to another RDF serialization."""

from __future__ import annotations

import io
from pathlib import Path

from . import rdf
from .atomic import atomic_write


def export_bytes(graph: str | Path, fmt: str = "ttl") -> bytes:
    """The graph file `graph` serialized as `fmt` (see rdf.FORMATS)."""
    fmt = rdf.format_for(fmt)
    buffer = io.BytesIO()
    rdf.write(rdf.read_triples(graph), buffer, fmt)
    return buffer.getvalue()


def export(graph: str | Path, out: str | Path, fmt: str | None = None) -> Path:
    """Write the graph file `graph` to `out` as `fmt` (or the format of out's suffix), atomically."""
    data = export_bytes(graph, rdf.format_for(fmt, out))
    with atomic_write(out) as stream:
        stream.write(data)
    return Path(out)
