"""The `export` verb: convert a graph file to another RDF serialization, or to GraphML/GEXF for graph tools."""

from __future__ import annotations

import io
from pathlib import Path

from . import graphio, progress, triples
from .atomic import atomic_write, refuse_overwrite
from .errors import UsageError
from .vocabulary import DEFAULT_BASE, RDF, Namespaces

# Formats for graph tools (Gephi, Cytoscape, yEd): a networkx view written by networkx.
NETWORK_FORMATS: dict[str, str] = {"graphml": ".graphml", "gexf": ".gexf"}


def format_for(fmt: str | None, path: str | Path | None = None) -> str:
    """The export format from an explicit name or a file suffix: an RDF format or a NETWORK_FORMATS name."""
    if fmt is None and path is not None:
        suffix = Path(path).suffix.lower()
        fmt = next((k for k, s in NETWORK_FORMATS.items() if s == suffix), None)
        known = sorted({s for _, s in graphio.FORMATS.values()} | set(graphio.SUFFIX_ALIASES) | set(NETWORK_FORMATS.values()))
        if fmt is None and suffix not in known:
            # Writing Turtle into papers.csv would look like success and give a file no CSV reader can open.
            raise UsageError(
                f"cannot tell the export format of {path} from its suffix {suffix or '(none)'}: use one of "
                f"{', '.join(known)}, or pass --format ({', '.join([*graphio.FORMATS, *NETWORK_FORMATS])})"
            )
    if fmt in NETWORK_FORMATS:
        return fmt
    try:
        return graphio.format_for(fmt, path)
    except UsageError:
        raise UsageError(f"unknown export format {fmt!r} (available: {', '.join([*graphio.FORMATS, *NETWORK_FORMATS])})") from None


@progress.stepped("converting {graph} to {fmt}")
def export_bytes(graph: str | Path, fmt: str = "ttl", view: str = "papers") -> bytes:
    """The graph file `graph` serialized as `fmt`: an RDF format, or GraphML/GEXF of a networkx `view`."""
    fmt = format_for(fmt)
    buffer = io.BytesIO()
    if fmt in NETWORK_FORMATS:
        _write_network(graph, buffer, fmt, view)
    elif fmt == "jsonld":
        graphio.write(graphio.read_triples(graph), buffer, fmt)
        progress.stage("compacting the JSON-LD")
        return compact_jsonld(buffer.getvalue())
    else:
        graphio.write(graphio.read_triples(graph), buffer, fmt)
    return buffer.getvalue()


def compact_jsonld(expanded: bytes, base: str = DEFAULT_BASE) -> bytes:
    """Expanded JSON-LD (as pyoxigraph writes it) made readable: a @context of kg's prefixes, compact IRIs
    ("dcterms:title", "paper:x") as keys, ids and types, and plain strings for xsd:string literals.

    Only the spelling changes: a JSON-LD processor expands it back to the same triples (tested).
    """
    import json

    prefixes = {**Namespaces(base).prefixes(), "rdf": RDF}
    # Longest namespace first: "paper:" before a shorter one that is a prefix of it.
    ordered = sorted(prefixes.items(), key=lambda kv: -len(kv[1]))

    def short(iri: str) -> str:
        for prefix, ns in ordered:
            if iri.startswith(ns) and len(iri) > len(ns) and ":" not in iri[len(ns):] and not iri[len(ns):].startswith("/"):
                return f"{prefix}:{iri[len(ns):]}"
        return iri

    def value(item: dict) -> object:
        if "@id" in item and len(item) == 1:
            return {"@id": short(item["@id"])}
        if set(item) == {"@value"} and isinstance(item["@value"], str):
            return item["@value"]
        if "@type" in item:
            return {**item, "@type": short(item["@type"])}
        return item

    def node(obj: dict) -> dict:
        out: dict = {}
        for key, values in obj.items():
            if key == "@id":
                out[key] = short(values)
            elif key == "@type":
                out[key] = [short(t) for t in values]
            elif key.startswith("@"):
                out[key] = values
            else:
                out[short(key)] = [value(v) for v in values]
        return out

    data = json.loads(expanded)
    nodes = data if isinstance(data, list) else data.get("@graph", [data])
    doc = {"@context": prefixes, "@graph": [node(n) for n in nodes]}
    return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode()


def export(graph: str | Path, out: str | Path, fmt: str | None = None, view: str = "papers") -> Path:
    """Write the graph file `graph` to `out` as `fmt` (or the format of out's suffix), atomically; `out` may not be `graph`."""
    refuse_overwrite(out, [graph])
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
    writer.xml.find("meta").set("lastmodifieddate", triples.build_time().date().isoformat())
    writer.add_graph(g)
    writer.write(stream)
