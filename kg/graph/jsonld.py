"""kg's one JSON-LD writer: readable, streamed, and read back as the triples written.

kg.graph.files.write calls it for every JSON-LD file kg writes: `kg build -o x.jsonld`, `kg.write`, `kg export`.
"""

from __future__ import annotations

from typing import IO, Any, Callable, Iterable

from kg.core.errors import UsageError
from kg.graph.vocabulary import RDF, XSD, Namespaces


def write_jsonld(triples_: Iterable, stream: IO[bytes], ns: Namespaces = Namespaces()) -> None:
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

    prefixes = {**ns.prefixes(), "rdf": RDF}
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
