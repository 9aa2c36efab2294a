"""The `export` verb: convert a graph file to another RDF serialization, to GraphML/GEXF for graph tools, or to CSV tables."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from kg.core import progress
from kg.core.errors import UsageError
from kg.graph import files
from kg.graph.atomic import atomic_write
from kg.graph.handle import refuse_overwrite
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
    files.write(counted, stream, fmt)  # JSON-LD by kg's own writer (kg.graph.jsonld), as every graph kg writes
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
