"""The `export` verb: convert a graph file to another RDF serialization, to GraphML/GEXF for graph tools, or to CSV tables."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator

from kg.core import progress
from kg.core.errors import UsageError
from kg.graph import files
from kg.graph.atomic import atomic_write
from kg.graph.handle import refuse_overwrite
from kg.graph.vocabulary import DEFAULT_BASE, RDF, XSD, Namespaces
from kg.pipeline import triples

# Formats for graph tools (Gephi, Cytoscape, yEd): a networkx view written by networkx.
NETWORK_FORMATS: dict[str, str] = {"graphml": ".graphml", "gexf": ".gexf"}
# Tables for spreadsheets, pandas and datasette (kg.views.tables).
TABLE_FORMATS: dict[str, str] = {"csv": ".csv"}
OTHER_FORMATS = {**NETWORK_FORMATS, **TABLE_FORMATS}


def format_for(fmt: str | None, path: str | Path | None = None) -> str:
    """The export format from an explicit name or a file suffix: an RDF format or a NETWORK_FORMATS name."""
    if fmt is None and path is not None:
        suffix = Path(path).suffix.lower()
        fmt = next((k for k, s in OTHER_FORMATS.items() if s == suffix), None)
        known = sorted({s for _, s in files.FORMATS.values()} | set(files.SUFFIX_ALIASES) | set(OTHER_FORMATS.values()))
        if fmt is None and suffix not in known:
            # Writing Turtle into papers.tsv would look like success and give a file no reader can open.
            raise UsageError(
                f"cannot tell the export format of {path} from its suffix {suffix or '(none)'}: use one of "
                f"{', '.join(known)}, or pass --format ({', '.join([*files.FORMATS, *OTHER_FORMATS])})"
            )
    if fmt in OTHER_FORMATS:
        return fmt
    try:
        return files.format_for(fmt, path)
    except UsageError:
        raise UsageError(f"unknown export format {fmt!r} (available: {', '.join([*files.FORMATS, *OTHER_FORMATS])})") from None


@progress.stepped("converting {graph} to {fmt}")
def export_to(graph: str | Path, stream: IO[bytes], fmt: str = "ttl", view: str = "papers", table: str = "links") -> int:
    """Write the graph file `graph` as `fmt` to a binary stream; return how many triples (RDF), rows (CSV) or nodes it wrote.

    RDF formats and CSV are streamed from the parser: memory stays flat in the size of the graph.
    """
    fmt = format_for(fmt)
    if fmt in NETWORK_FORMATS:
        return _write_network(graph, stream, fmt, view)
    if fmt in TABLE_FORMATS:
        from kg.views.tables import write_table

        return write_table(graph, stream, table)
    counted = _Counted(files.parse(graph))
    if fmt == "jsonld":  # files.write shows its own step with the triples counted; the JSON-LD writer is kg's
        with progress.step(f"writing {fmt}", unit="triples") as tick:
            write_jsonld(progress.counted(counted, tick), stream)
    else:
        files.write(counted, stream, fmt)
    return counted.n


class _Counted:
    """An iterator that counts what passes through it."""

    def __init__(self, items: Iterable) -> None:
        self.items, self.n = iter(items), 0

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        item = next(self.items)
        self.n += 1
        return item


def write_jsonld(triples_: Iterable, stream: IO[bytes], base: str = DEFAULT_BASE) -> None:
    """Write triples as readable JSON-LD, one node object a line, as they come (memory flat in the graph's size).

    A @context of kg's prefixes, compact IRIs ("dcterms:title", "paper:x") as keys, ids and types, plain
    strings for xsd:string literals. Each run of triples with the same subject is one node object; a
    subject that comes back later gets another node object with the same @id, which a JSON-LD processor
    merges, so the document expands to exactly the triples given (tested with rdflib and pyoxigraph).
    An IRI whose scheme is one of the prefix names (`paper:evil`, `xsd:foo`) would be read back as a compact
    name (`https://w3id.org/kg/paper/evil`); the node object that holds one resets the context
    (`"@context": null`) and writes its IRIs in full, so that it too reads back as written.
    """
    import json

    import pyoxigraph as ox

    prefixes = {**Namespaces(base).prefixes(), "rdf": RDF}
    compact = _shortener(prefixes)
    named, blank = ox.NamedNode, ox.BlankNode
    rdf_type, xsd_string, lang_string = RDF + "type", XSD + "string", RDF + "langString"
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
    lookalike = [False]  # the node object being made holds an IRI a reader would take for a compact name

    def checked(iri: str) -> str:
        out = compact(iri)
        if out is iri and iri.partition(":")[0] in prefixes and not iri.partition(":")[2].startswith("//"):
            lookalike[0] = True
        return out

    def node_of(subject: Any, pairs: list[tuple[Any, Any]], short: Callable[[str], str]) -> dict[str, Any]:
        def term(t: Any) -> str:
            return short(t.value) if type(t) is named else "_:" + t.value

        def value(o: Any) -> object:
            kind = type(o)
            if kind is named:
                return {"@id": short(o.value)}
            if kind is blank:
                return {"@id": "_:" + o.value}
            if kind is not ox.Literal:
                raise UsageError("cannot write JSON-LD: the graph holds RDF-star quoted triples; use nt or ttl")
            datatype = o.datatype.value
            if datatype == xsd_string:
                return o.value
            if datatype == lang_string:
                return {"@value": o.value, "@language": o.language}
            return {"@value": o.value, "@type": short(datatype)}

        node: dict[str, Any] = {"@id": term(subject)}
        for p, o in pairs:
            if p.value == rdf_type and type(o) is not ox.Literal:
                node.setdefault("@type", []).append(term(o))
            else:
                node.setdefault(short(p.value), []).append(value(o))
        return node

    def flush(subject: Any, pairs: list[tuple[Any, Any]], first: bool) -> None:
        lookalike[0] = False
        node = node_of(subject, pairs, checked)
        if lookalike[0]:
            node = {"@context": None, **node_of(subject, pairs, str)}
        stream.write((("\n" if first else ",\n") + dumps(node)).encode())

    head = json.dumps({"@context": prefixes}, ensure_ascii=False, indent=1)[:-2]
    stream.write(f'{head},\n "@graph": ['.encode())
    subject: Any = None
    pairs: list[tuple[Any, Any]] = []
    first = True
    for t in triples_:
        if t.subject != subject:
            if pairs:
                flush(subject, pairs, first)
                first = False
            subject, pairs = t.subject, []
        pairs.append((t.predicate, t.object))
    if pairs:
        flush(subject, pairs, first)
    stream.write(b"\n]}\n")


def _shortener(prefixes: dict[str, str]) -> Callable[[str], str]:
    """IRI -> compact IRI ("paper:x") under the longest namespace of `prefixes` that leaves a plain local name, else the IRI."""
    ordered = sorted(prefixes.items(), key=lambda kv: -len(kv[1]))  # "paper:" before a shorter namespace that is a prefix of it
    by_namespace = {ns: prefix for prefix, ns in prefixes.items()}
    # Every namespace ends in / or #: the one an IRI is in is its text up to its last / or #, one dict look-up.
    delimited = all(ns.endswith(("/", "#")) for ns in prefixes.values())

    def slow(iri: str) -> str:
        for prefix, ns in ordered:
            if iri.startswith(ns) and len(iri) > len(ns) and ":" not in iri[len(ns):] and not iri[len(ns):].startswith("/"):
                return f"{prefix}:{iri[len(ns):]}"
        return iri

    def short(iri: str) -> str:
        if delimited:
            cut = max(iri.rfind("/"), iri.rfind("#")) + 1
            prefix = by_namespace.get(iri[:cut])
            if prefix is not None and cut < len(iri) and ":" not in iri[cut:]:
                return prefix + ":" + iri[cut:]
        return slow(iri)

    return short


def export(graph: str | Path, out: str | Path, fmt: str | None = None, view: str = "papers", table: str = "links") -> Path:
    """Write the graph file `graph` to `out` as `fmt` (or the format of out's suffix), atomically; `out` may not be `graph`."""
    return export_counted(graph, out, fmt, view, table)[0]


def export_counted(graph: str | Path, out: str | Path, fmt: str | None = None, view: str = "papers", table: str = "links") -> tuple[Path, int]:
    """`export`, also returning how many triples, rows or nodes it wrote."""
    refuse_overwrite(out, [graph])
    fmt = format_for(fmt, out)
    with atomic_write(out) as stream:
        count = export_to(graph, stream, fmt, view, table)
    return Path(out), count


def _write_network(graph: str | Path, stream: IO[bytes], fmt: str, view: str) -> int:
    import networkx as nx
    from networkx.readwrite.gexf import GEXFWriter

    from kg.views.network import to_networkx

    g = to_networkx(graph, view)
    if fmt == "graphml":
        nx.write_graphml(g, stream, encoding="utf-8")
        return g.number_of_nodes()
    writer = GEXFWriter(encoding="utf-8", prettyprint=True)
    # networkx stamps today's date into <meta>; the build time keeps the same input byte-identical.
    writer.xml.find("meta").set("lastmodifieddate", triples.build_time().date().isoformat())
    writer.add_graph(g)
    writer.write(stream)
    return g.number_of_nodes()
