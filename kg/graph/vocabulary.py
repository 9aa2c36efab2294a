"""The RDF vocabulary kg writes and reads: namespaces (each defined here once) and the IRIs under one base."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from typing import Callable, Sequence
from urllib.parse import quote

from kg.core.defaults import BASE
from kg.core.errors import UsageError

KG = "https://w3id.org/kg/ontology#"
KGC = "https://w3id.org/kg/concept/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
DCTERMS = "http://purl.org/dc/terms/"
FABIO = "http://purl.org/spar/fabio/"
FOAF = "http://xmlns.com/foaf/0.1/"
OA = "http://www.w3.org/ns/oa#"
PROV = "http://www.w3.org/ns/prov#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
OWL = "http://www.w3.org/2002/07/owl#"
BIBO = "http://purl.org/ontology/bibo/"

DEFAULT_BASE = BASE


@dataclass(frozen=True)
class Namespaces:
    """The IRI folders under one configurable base."""

    base: str = DEFAULT_BASE

    def __post_init__(self) -> None:
        import pyoxigraph as ox

        try:
            ox.NamedNode(self.base)  # an IRI parser (RFC 3987), not a pattern: %zz, a second '#', controls fail
        except (ValueError, TypeError) as exc:
            raise UsageError(f"base IRI {self.base!r} must be an absolute IRI ending in '/' or '#' ({exc})") from None
        if not self.base.endswith(("/", "#")):
            raise UsageError(f"base IRI {self.base!r} must be an absolute IRI ending in '/' or '#'")

    def prefixes(self) -> dict[str, str]:
        return {
            "paper": self.base + "paper/",
            "ann": self.base + "annotation/",
            "author": self.base + "author/",
            "venue": self.base + "venue/",
            "method": self.base + "method/",
            "kgc": KGC,
            "kg": KG,
            "rdfs": RDFS,
            "xsd": XSD,
            "dcterms": DCTERMS,
            "fabio": FABIO,
            "foaf": FOAF,
            "oa": OA,
            "prov": PROV,
            "skos": SKOS,
            "owl": OWL,
            "bibo": BIBO,
        }

    def paper(self, paper_id: str) -> str:
        return f"{self.base}paper/{slug(paper_id)}"


@lru_cache(maxsize=1 << 16)  # authors and venues repeat across papers
def slug(text: str) -> str:
    """A readable, valid IRI segment for any text: lower-case words joined by '-', the rest %-encoded."""
    text = re.sub(r"[\s/#?]+", "-", text.strip().lower()).strip("-")
    segment = quote(text, safe="-._~") or "x"
    # A trailing dot is %-encoded: "." and ".." would be dot-segments (which IRI resolution
    # removes), and rdflib's Turtle parser rejects the escaped final dot of `author:j\.`.
    return re.sub(r"\.+$", lambda m: "%2E" * len(m.group()), segment)


def compact(value: str) -> str:
    """Shorten an IRI with the kg prefixes, for people: the first prefix (in `_prefixes` order) that starts it and
    leaves a local name."""
    return compacted([value])[0]


def compacted(iris: Sequence[str]) -> list[str]:
    """`compact` of each IRI: one match of `_shortener` each, in one comprehension; or, when every IRI is in the first
    one's namespace (a listing's 61,000 papers), its prefix and each IRI's rest with C-level maps."""
    match, names = _shortener()
    first = match(iris[0]) if iris else None
    if first is not None and first.lastindex is not None:
        ns, prefix = first.group(), names[first.lastindex]
        # An IRI that starts with ns is shortened by ns unless a namespace tried before ns starts it too: one that
        # extends ns (one that ns extends would have matched the first IRI).
        before = [other for _, other in _prefixes()[: first.lastindex - 1] if other.startswith(ns)]
        if (all(map(str.startswith, iris, repeat(ns))) and min(map(len, iris)) > len(ns)
                and not any(any(map(str.startswith, iris, repeat(other))) for other in before)):
            return list(map(prefix.__add__, map(str.__getitem__, iris, repeat(slice(len(ns), None)))))
    return [iri if (found := match(iri)) is None else names[found.lastindex or 0] + iri[found.end():] for iri in iris]


@lru_cache(maxsize=1)
def _prefixes() -> tuple[tuple[str, str], ...]:
    """The kg prefixes `compact` tries, in order: made once (made for every cell, they were most of the CPU of a
    62,000-row table)."""
    return tuple({**Namespaces().prefixes(), "rdf": RDF}.items())


@lru_cache(maxsize=1)
def _shortener() -> tuple[Callable[[str], re.Match[str] | None], tuple[str, ...]]:
    """A pattern for `_prefixes` (a group per namespace, in their order, each followed by at least one character) and
    the text that replaces each group (`PREFIX:`, at the group's number).

    The regular expression tries its alternatives in order and takes the first that matches, as a loop over the
    prefixes did, in one C call."""
    pattern = re.compile("|".join(f"({re.escape(ns)})(?=.)" for _, ns in _prefixes()), re.DOTALL)
    return pattern.match, ("", *(f"{prefix}:" for prefix, _ in _prefixes()))
