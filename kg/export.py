"""The `export` verb: convert a graph file to another RDF serialization, or to GraphML/GEXF for graph tools."""

from __future__ import annotations

import io
from pathlib import Path

from . import rdf
from .atomic import atomic_write
from .errors import UsageError

# Formats for graph tools (Gephi, Cytoscape, yEd): a networkx view written by networkx.
NETWORK_FORMATS: dict[str, str] = {"graphml": ".graphml", "gexf": ".gexf"}


def format_for(fmt: str | None, path: str | Path | None = None) -> str:
    """The export format from an explicit name or a file suffix: an RDF format or a NETWORK_FORMATS name."""
    if fmt is None and path is not None:
        suffix = Path(path).suffix.lower()
        fmt = next((k for k, s in NETWORK_FORMATS.items() if s == suffix), None)
        known = sorted({s for _, s in rdf.FORMATS.values()} | set(rdf.SUFFIX_ALIASES) | set(NETWORK_FORMATS.values()))
        if fmt is None and suffix not in known:
            # Writing Turtle into papers.csv would look like success and give a file no CSV reader can open.
            raise UsageError(
                f"cannot tell the export format of {path} from its suffix {suffix or '(none)'}: use one of "
                f"{', '.join(known)}, or pass --format ({', '.join([*rdf.FORMATS, *NETWORK_FORMATS])})"
            )
    if fmt in NETWORK_FORMATS:
        return fmt
    try:
        return rdf.format_for(fmt, path)
    except UsageError:
        raise UsageError(f"unknown export format {fmt!r} (available: {', '.join([*rdf.FORMATS, *NETWORK_FORMATS])})") from None


def export_bytes(graph: str | Path, fmt: str = "ttl", view: str = "papers") -> bytes:
    """The graph file `graph` serialized as `fmt`: an RDF format, or GraphML/GEXF of a networkx `view`."""
    fmt = format_for(fmt)
    buffer = io.BytesIO()
    if fmt in NETWORK_FORMATS:
        _write_network(graph, buffer, fmt, view)
    else:
        rdf.write(rdf.read_triples(graph), buffer, fmt)
    return buffer.getvalue()


def export(graph: str | Path, out: str | Path, fmt: str | None = None, view: str = "papers") -> Path:
    """Write the graph file `graph` to `out` as `fmt` (or the format of out's suffix), atomically."""
    data = export_bytes(graph, format_for(fmt, out), view)
    with atomic_write(out) as stream:
        stream.write(data)
    return Path(out)


def _write_network(graph: str | Path, stream: io.BytesIO, fmt: str, view: str) -> None:
    import networkx as nx
    from networkx.readwrite.gexf import GEXFWriter

    from .network import to_networkx

    g = to_networkx(graph, view)
    if fmt == "graphml":
        nx.write_graphml(g, stream, encoding="utf-8")
        return
    writer = GEXFWriter(encoding="utf-8", prettyprint=True)
    # networkx stamps today's date into <meta>; the build time keeps the same input byte-identical.
    writer.xml.find("meta").set("lastmodifieddate", rdf.build_time().date().isoformat())
    writer.add_graph(g)
    writer.write(stream)
