"""Reading and writing graph files: formats by name and suffix, pyoxigraph's parsers and serializers.

Written by pyoxigraph's serializers (measured 500x faster than rdflib's Turtle writer at 10k
papers); Python users get an rdflib.Graph over an Oxigraph store (oxrdflib) from `load`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from kg.core import progress
from kg.core.defaults import GRAPH_DIR
from kg.core.errors import InputError, UsageError
from kg.graph import shards
from kg.graph.vocabulary import Namespaces

# Output formats by name: (pyoxigraph format attribute, file suffix).
FORMATS: dict[str, tuple[str, str]] = {
    "ttl": ("TURTLE", ".ttl"),
    "nt": ("N_TRIPLES", ".nt"),
    "nq": ("N_QUADS", ".nq"),
    "trig": ("TRIG", ".trig"),
    "jsonld": ("JSON_LD", ".jsonld"),
    "xml": ("RDF_XML", ".rdf"),
}

# Other suffixes read as one of FORMATS.
SUFFIX_ALIASES = {".json": "jsonld", ".xml": "xml", ".owl": "xml", ".turtle": "ttl"}
# The one suffix table of RDF files kg reads, graphs and schemes alike.
READ_SUFFIXES = tuple(sorted({s for _, s in FORMATS.values()} | set(SUFFIX_ALIASES)))


def suffix_format(path: str | Path) -> str | None:
    """The format name of a file by its suffix (FORMATS, then SUFFIX_ALIASES), None for a suffix kg does not know."""
    suffix = Path(path).suffix.lower()
    return next((k for k, (_, s) in FORMATS.items() if s == suffix), None) or SUFFIX_ALIASES.get(suffix)


def format_for(name: str | None, path: str | Path | None = None) -> str:
    """The output format name from an explicit name or a file suffix (Turtle by default)."""
    if name is None and path is not None:
        name = suffix_format(path) or "ttl"
    name = name or "ttl"
    if name not in FORMATS:
        raise UsageError(f"unknown RDF format {name!r} (available: {', '.join(FORMATS)})")
    return name


def write(triples_: Iterable, stream: IO[bytes], fmt: str = "ttl", *, ns: Namespaces = Namespaces(), label: str | None = None) -> None:
    """Serialize triples to a binary stream in one of FORMATS (`label`: the step kg.core.progress shows, triples counted)."""
    import pyoxigraph as ox

    rdf_format = getattr(ox.RdfFormat, FORMATS[format_for(fmt)][0])
    with progress.step(label or f"writing {format_for(fmt)}", unit="triples") as tick:
        _write(progress.counted(triples_, tick), stream, rdf_format, ns)


def _write(triples_: Iterable, stream: IO[bytes], rdf_format, ns: Namespaces) -> None:  # rdf_format: pyoxigraph.RdfFormat
    import pyoxigraph as ox

    if rdf_format == ox.RdfFormat.JSON_LD:
        from kg.graph.jsonld import write_jsonld

        return write_jsonld(triples_, stream, ns)
    items: Iterable = triples_
    if rdf_format.supports_datasets:
        items = (ox.Quad(t.subject, t.predicate, t.object) for t in triples_)
    if rdf_format == ox.RdfFormat.RDF_XML:
        items = _xml_checked(items)
    prefixes = ns.prefixes() if rdf_format in (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.RDF_XML) else None
    ox.serialize(items, stream, format=rdf_format, prefixes=prefixes)


# Characters XML 1.0 cannot carry (most C0 controls, surrogates, U+FFFE/U+FFFF), and \r,
# which XML parsers turn into \n. Ingest folds them all into spaces; a graph read from
# elsewhere may still hold them, and pyoxigraph would write them raw (invalid XML).
# The complement of XML's Char production and \r, spelled out (a negated class of the ranges took 10 ms to compile).
_NOT_XML = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_checked(items: Iterable) -> Iterator:
    """Pass triples through, failing on the first string that RDF/XML cannot carry."""
    for item in items:
        for term in (item.subject, item.object):
            bad = _NOT_XML.search(term.value)
            if bad:
                raise UsageError(
                    f"cannot write RDF/XML: {term.value[:40]!r}… holds U+{ord(bad.group()):04X}, which XML 1.0 cannot carry; "
                    "use ttl, nt or jsonld"
                )
        yield item


def rdf_format(path: str | Path):  # -> pyoxigraph.RdfFormat
    """The pyoxigraph format to read a graph file in (by its suffix), once the file passed the checks every reader needs.

    Every reader of a graph file gets its format here, so none can skip the check: an RDF/XML file with a
    document type declaration is refused (InputError), see `refuse_dtd`.
    """
    import pyoxigraph as ox

    path = Path(path)
    found = getattr(ox.RdfFormat, FORMATS[format_for(None, path)][0])
    if found == ox.RdfFormat.RDF_XML:
        refuse_dtd(path)
    return found


# "<!" that opens neither a comment nor a CDATA section: a DOCTYPE (in any case), or a stray ENTITY, ELEMENT, ...
_DECLARATION = re.compile(rb"<!(?!--|\[CDATA\[)")
_BLOCK = 1 << 20


def refuse_dtd(path: Path) -> None:
    """Refuse an XML file that holds a document type declaration anywhere; InputError naming the file and line.

    pyoxigraph's RDF/XML parser expands the entities a DOCTYPE declares, wherever the DOCTYPE stands (even
    inside the root element), so nested entities ("billion laughs") turn a file of under 1 KB into
    gigabytes. RDF needs no DTD and kg writes none. The whole file is scanned, in blocks of 1 MiB: memory
    stays bounded whatever its size. A file that cannot be opened is left for the parser to name.
    """
    try:
        stream = path.open("rb")
    except OSError:
        return
    with stream:
        tail, lines = b"", 0  # the last bytes of the block before (a "<!" may be cut), newlines before them
        while True:
            block = stream.read(_BLOCK)
            data = tail + block
            seen = len(data) if not block else max(len(data) - 8, 0)  # "<![CDATA[" needs 8 bytes after "<"
            found = _DECLARATION.search(data)
            if found is not None and found.start() < seen:
                line = lines + data.count(b"\n", 0, found.start()) + 1
                raise InputError(
                    f"{path}:{line}: an XML document type declaration (<!DOCTYPE ...>) is refused: its entities can expand to "
                    "gigabytes as the file is read; save the graph as Turtle or N-Triples, or as RDF/XML without a DOCTYPE"
                )
            if not block:
                return
            lines += data.count(b"\n", 0, seen)
            tail = data[seen:]


def no_such_graph(path: str | Path) -> InputError:
    """The one error for a graph file that is not there, whichever command asked for it (a folder without a shard manifest too)."""
    if Path(path).is_dir():
        return InputError(f"{path}: is a directory; pass a graph file in it (e.g. {path}/NAME.ttl), or a shard folder (one holding "
                          f"{shards.MANIFEST}, written by 'kg build --engine dask')")
    return InputError(f"{path}: no such graph file; build one with 'kg build YOUR_PAPERS.jsonl -o {path}' "
                      "(or 'kg build' for the bundled sample), or pass the path of an existing graph")


def sources(path: str | Path) -> list[Path]:
    """The files a graph is read from, in order: a graph file itself, or the shards a shard folder's manifest lists
    (kg.graph.shards: a shard file the manifest does not list is not part of the graph; a broken manifest or a
    missing shard is an InputError naming it)."""
    path = Path(path)
    return shards.files(path) if shards.is_sharded(path) else [path]


def parse(path: str | Path, *, graphs: bool = False) -> Iterator:
    """Stream the triples of an RDF file (format from its suffix), or of a shard folder's shards in manifest order;
    a missing or broken file is an InputError naming it. `graphs`: the quads of an N-Quads or TriG file as they are
    (a store keeps their named graphs), else their triples."""
    for source in sources(path):
        yield from _parse_file(source, graphs)


def _parse_file(path: Path, graphs: bool = False) -> Iterator:
    import pyoxigraph as ox

    fmt = rdf_format(path)
    triples = fmt.supports_datasets and not graphs
    try:
        with path.open("rb") as stream:
            for item in ox.parse(stream, format=fmt):
                yield item.triple if triples else item
    except (FileNotFoundError, IsADirectoryError):
        raise no_such_graph(path) from None
    except SyntaxError as exc:
        raise InputError(f"{path}: not valid RDF ({exc})") from None


def load_into(store: Any, path: str | Path) -> None:
    """Load an RDF file (a shard folder: its shards in manifest order) into a pyoxigraph store by the store's own
    reader: no Python object per triple, so a third less CPU than `parse` fed to the store (decision 0058); the
    errors are `parse`'s. For an in-memory store: into a persisted one a whole file is one write (decision 0048)."""
    for source in sources(path):
        fmt = rdf_format(source)
        try:
            store.load(path=str(source), format=fmt)
        except (FileNotFoundError, IsADirectoryError):
            raise no_such_graph(source) from None
        except SyntaxError as exc:
            raise InputError(f"{source}: not valid RDF ({exc})") from None


def read_triples(path: str | Path) -> list:
    """Parse an RDF file (format from its suffix) into a list of pyoxigraph triples."""
    with progress.step(f"reading {path}", unit="triples") as tick:
        return list(progress.counted(parse(path), tick))


def latest_graph(folder: str | Path = GRAPH_DIR) -> Path | None:
    """The most recently written graph file in `folder` (what `kg build` or `kg analyze` wrote last), or None.

    Commands that take a graph default to it, so after `kg build my.jsonl` a query answers about
    my.jsonl, not about the bundled sample.
    """
    suffixes = {s for _, s in FORMATS.values()}
    try:
        found = [p for p in Path(folder).iterdir() if p.suffix.lower() in suffixes and p.is_file()]
    except OSError:
        return None
    return max(found, key=lambda p: (p.stat().st_mtime_ns, p.name)) if found else None


def load(path: str | Path):  # -> rdflib.Graph
    """Open an RDF file as an rdflib.Graph backed by an in-memory Oxigraph store."""
    import pyoxigraph as ox
    from oxrdflib import OxigraphStore
    from rdflib import Graph
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    store = ox.Store()
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object) for t in read_triples(path))
    # The triples sit in the store's default graph; rdflib must be told to look there.
    graph = Graph(store=OxigraphStore(store=store), identifier=DATASET_DEFAULT_GRAPH_ID)
    for prefix, iri in Namespaces().prefixes().items():
        graph.bind(prefix, iri)
    return graph
