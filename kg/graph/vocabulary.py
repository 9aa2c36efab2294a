"""The RDF vocabulary kg writes and reads: namespaces (each defined here once) and the IRIs under one base."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
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
