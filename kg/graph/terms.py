"""One RDF term as SPARQL results carry it (kind, value, datatype, language): what the query index stores and every answer holds."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

from kg.graph.vocabulary import XSD

_INTEGERS = {XSD + t for t in ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
                               "nonPositiveInteger", "negativeInteger", "unsignedInt", "unsignedLong")}


class Term(NamedTuple):
    """One RDF term as in SPARQL JSON results: kind 'uri', 'literal' or 'bnode'.

    A named tuple, not a dataclass: a large listing makes hundreds of thousands, at a third of the cost.
    """

    kind: str
    value: str
    datatype: str | None = None
    lang: str | None = None

    def __str__(self) -> str:
        return self.value

    def python(self) -> Any:
        """The value as a Python number or bool where the datatype says so, else the string."""
        if self.kind == "literal" and self.datatype:
            try:
                if self.datatype in _INTEGERS or self.datatype == XSD + "gYear":
                    return int(self.value)
                if self.datatype == XSD + "decimal":
                    return Decimal(self.value)
                if self.datatype in (XSD + "double", XSD + "float"):
                    return float(self.value)
                if self.datatype == XSD + "boolean":
                    return self.value in ("true", "1")
            except (ValueError, InvalidOperation):
                pass
        return self.value

    def n3(self) -> str:
        """N-Triples / Turtle syntax of the term (used by TSV results and VALUES blocks)."""
        if self.kind == "uri":
            return f"<{self.value}>"
        if self.kind == "bnode":
            return f"_:{self.value}"
        text = '"' + _escape_literal(self.value) + '"'
        if self.lang:
            return f"{text}@{self.lang}"
        if self.datatype and self.datatype != XSD + "string":
            return f"{text}^^<{self.datatype}>"
        return text

    @classmethod
    def from_oxigraph(cls, term: Any) -> Term:
        """Convert a pyoxigraph NamedNode, BlankNode or Literal."""
        name = type(term).__name__
        if name == "NamedNode":
            return cls("uri", term.value)
        if name == "BlankNode":
            return cls("bnode", term.value)
        if name == "Literal":
            lang = term.language
            return cls("literal", term.value, None if lang else term.datatype.value, lang or None)
        raise TypeError(f"unsupported RDF term {term!r}")


def _escape_literal(text: str) -> str:
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
            .replace("\t", "\\t"))
