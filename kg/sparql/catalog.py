"""The named queries (queries/*.rq): their headers, parameters, and binding parameter values as RDF terms.

Each .rq file opens with a comment header that documents it and declares its parameters:

    # One line (or a paragraph) saying what the query answers.
    #
    # Parameters:
    #   concept (concept, required)  a label such as "reinforcement learning", or a concept IRI
    #   min (integer, default 1)     the least number of shared papers
    # Example:
    #   kg query co-occurrence --param min=2

Parameter types: concept and paper (any name kg prints for one, resolved by kg.graph.names), iri, string, integer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import Any, Callable, Mapping

from kg.core.errors import QueryError, UsageError
from kg.graph import names
from kg.graph.resources import data_path
from kg.graph.vocabulary import XSD
from kg.sparql.results import Results, Term

PARAM_TYPES = ("concept", "paper", "iri", "string", "integer")
_PARAM = re.compile(r"^\s+(?P<name>[A-Za-z_]\w*)\s+\((?P<type>\w+)(?P<required>,\s*required)?(?:,\s*default\s+(?P<default>[^)]*))?\)\s*(?P<doc>.*)$")


@dataclass(frozen=True)
class Param:
    """One declared parameter of a named query."""

    name: str
    type: str
    required: bool
    default: str | None
    doc: str


@dataclass(frozen=True)
class NamedQuery:
    """A query file: its name (the file stem), purpose, parameters, example and SPARQL text."""

    name: str
    text: str
    purpose: str
    params: tuple[Param, ...]
    example: str
    path: Path | None = None

    @property
    def reads_analysis(self) -> bool:
        """Whether the query reads what `kg analyze` writes into a graph (its purpose line says so)."""
        return "`kg analyze`" in self.purpose

    def signature(self) -> str:
        """Parameters for one-line listings: `concept` required, `[min=1]` optional."""
        parts = [p.name if p.required else f"[{p.name}{'=' + p.default if p.default else ''}]" for p in self.params]
        return " ".join(parts)


def parse_header(name: str, text: str, path: Path | None = None) -> NamedQuery:
    """Read the comment header of a query file (purpose, Parameters:, Example:)."""
    purpose: list[str] = []
    params: list[Param] = []
    example: list[str] = []
    section = "purpose"
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        body = line[1:]
        head = body.strip().lower()
        if head in ("parameters:", "example:", "examples:"):
            section = head.rstrip(":s")
            continue
        if section == "purpose" and body.strip():
            purpose.append(body.strip())
        elif section == "purpose" and purpose:
            section = "notes"  # the first paragraph is the purpose
        elif section == "parameter" and body.strip():
            m = _PARAM.match(body)
            if not m or m["type"] not in PARAM_TYPES:
                raise QueryError(f"{path or name}: bad parameter line {body.strip()!r}; write '  name (type[, required][, default X])  what it is' with type one of {', '.join(PARAM_TYPES)}")
            default = m["default"].strip().strip('"') if m["default"] else None
            params.append(Param(m["name"], m["type"], bool(m["required"]), default, m["doc"].strip()))
        elif section == "example" and body.strip():
            example.append(body.strip())
    return NamedQuery(name, text, " ".join(purpose), tuple(params), "\n".join(example), path)


def catalog() -> dict[str, NamedQuery]:
    """Every named query shipped with kg, by name (files starting with '_' are internal)."""
    folder = data_path("queries")
    return {
        p.stem: parse_header(p.stem, p.read_text(encoding="utf-8"), p)
        for p in sorted(folder.glob("*.rq"))
        if not p.name.startswith("_")
    }


def resolve(name_or_file: str | Path) -> NamedQuery:
    """A named query, a .rq file, or '-' for standard input (read by the caller)."""
    text = str(name_or_file)
    named = catalog()
    if text in named:
        return named[text]
    path = Path(text)
    if text.endswith((".rq", ".sparql")) or (path.suffix and is_file(path)):
        try:
            return parse_header(path.stem, _prefixed(path.read_text(encoding="utf-8")), path)
        except FileNotFoundError:
            raise QueryError(f"{path}: no such query file") from None
        except UnicodeDecodeError:
            raise QueryError(f"{path}: not UTF-8 text") from None
    hint = get_close_matches(text, list(named), n=1)
    raise QueryError(
        f"query {text!r} not found{f' (did you mean {hint[0]!r}?)' if hint else ''} "
        f"(available: {', '.join(named)}); or pass a .rq file, or '-' for standard input"
    )


def is_file(path: Path) -> bool:
    """Whether `path` names a file; False for a text no file can be named by (too long for the file system)."""
    try:
        return path.is_file()
    except OSError:
        return False


def from_text(text: str, name: str = "ad-hoc") -> NamedQuery:
    """An ad-hoc query given as text; its comment header (if any) declares parameters as usual.

    The standard prefixes it uses without declaring (kg:, kgc:, dcterms:, …: standard_prefixes) are declared for it.
    """
    return parse_header(name, _prefixed(text))


def standard_prefixes() -> dict[str, str]:
    """The prefixes every query may use undeclared: those kg writes into its Turtle (kg.graph.vocabulary.Namespaces), and rdf:."""
    from kg.graph.vocabulary import RDF, Namespaces

    return {**Namespaces().prefixes(), "rdf": RDF}


def _prefixed(text: str) -> str:
    """The text with its line endings made LF (kg.sparql.sanitise: before any scan reads it) and the standard prefixes it uses declared."""
    from kg.sparql.lexer import with_prefixes
    from kg.sparql.sanitise import normalised

    return with_prefixes(normalised(text), standard_prefixes())


@cache
def _shipped_text(name: str) -> str | None:
    path = data_path("queries") / f"{name}.rq"
    return path.read_text(encoding="utf-8") if name and not name.startswith("_") and path.is_file() else None


def shipped(q: NamedQuery) -> bool:
    """True for a named query kg ships, as shipped: the engine runs it unchecked (any other text is checked by kg.sparql.sanitise)."""
    return _shipped_text(q.name) == q.text


# ---- binding ---------------------------------------------------------------------------------

Lookup = Callable[[str, dict[str, Term]], Results]  # runs the internal query queries/_NAME (by NAME), with bindings, on the same graph


def bind(q: NamedQuery, params: Mapping[str, Any], lookup: Lookup) -> dict[str, Term]:
    """Check and convert raw parameter values into RDF terms (labels resolved to concept IRIs)."""
    declared = {p.name: p for p in q.params}
    unknown = sorted(set(params) - set(declared))
    if unknown and declared:
        raise UsageError(f"query {q.name!r} has no parameter {unknown[0]!r} (parameters: {', '.join(declared)})")
    unused = [name for name in unknown if not re.search(rf"[?$]{re.escape(name)}\b", q.text)]
    if unused:  # a query without a Parameters: header takes its ?variables as parameters, and nothing else
        raise UsageError(f"query {q.name!r} has no parameter {unused[0]!r} (it declares none, and has no variable ?{unused[0]})")
    out: dict[str, Term] = {}
    for name, value in params.items():
        if name not in declared:  # an ad-hoc query without header: bind as a plain string or IRI
            out[name] = Term("uri", str(value)) if names.IRI.match(str(value)) and ":" in str(value)[:12] else Term("literal", str(value), XSD + "string")
    for p in q.params:
        value = params.get(p.name, p.default)
        if value is None:
            if p.required:
                raise UsageError(f"query {q.name!r} needs parameter {p.name!r} ({p.doc}); pass --param {p.name}=VALUE")
            continue
        out[p.name] = _convert(q, p, value, lookup)
    return out


_INT_RANGE = (-(1 << 63), (1 << 63) - 1)  # what SQLite and the stores hold as an integer


def _convert(q: NamedQuery, p: Param, value: Any, lookup: Lookup) -> Term:
    text = str(value).strip()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes the terminal could not decode (os.fsdecode's surrogates)
        raise UsageError(f"query {q.name!r}: parameter {p.name!r} is not UTF-8 text ({text.encode('utf-8', 'replace')!r})") from None
    if p.type == "integer":
        try:
            number = int(text)
        except ValueError:
            raise UsageError(f"query {q.name!r}: parameter {p.name!r} must be a whole number, not {text!r}") from None
        if not _INT_RANGE[0] <= number <= _INT_RANGE[1]:
            raise UsageError(f"query {q.name!r}: parameter {p.name!r} must be a whole number from {_INT_RANGE[0]} to {_INT_RANGE[1]}")
        return Term("literal", str(number), XSD + "integer")
    if p.type == "string":
        return Term("literal", str(value), XSD + "string")
    if p.type == "iri":
        text = names.expanded(text)
        if not names.IRI.match(text):
            raise UsageError(f"query {q.name!r}: parameter {p.name!r} must be an IRI, not {text!r}")
        return Term("uri", text)
    if p.type == "concept":
        return Term("uri", names.concept(text, _QueryNames(lookup), f"query {q.name!r}"))
    return Term("uri", names.paper(text, _QueryNames(lookup), f"query {q.name!r}"))


class _QueryNames:
    """kg.graph.names' questions asked with the internal queries (queries/_*.rq), on whatever engine runs the query."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup

    def is_concept(self, iri: str) -> bool:
        return bool(self.lookup("concept-by-iri", {"concept": Term("uri", iri)}).rows)

    def concepts_labelled(self, text: str) -> list[tuple[str, bool]]:
        rows = self.lookup("concept-by-label", {"key": Term("literal", text, XSD + "string")}).rows
        return [(_value(r[0]), _value(r[2]) == "pref") for r in rows]

    def concept_labels(self) -> list[tuple[str, bool]]:
        return [(_value(r[1]), _value(r[2]) == "pref") for r in self.lookup("concept-labels", {}).rows]

    def is_paper(self, iri: str) -> bool:
        return bool(self.lookup("paper-by-iri", {"paper": Term("uri", iri)}).rows)

    def papers_keyed(self, text: str) -> list[str]:
        return [_value(r[1]) for r in self.lookup("paper-by-key", {"key": Term("literal", text, XSD + "string")}).rows]


def _value(term: Term | None) -> str:
    """The text of a term the lookup queries always bind."""
    if term is None:
        raise QueryError("a parameter lookup returned an unbound value")
    return term.value


def syntax_message(engine_text: str, text: str = "") -> str:
    """pyoxigraph's 'error at 3:17: expected …' as one line: 'SPARQL syntax error at line 3, column 17, near …' (kg.sparql.lexer.syntax_error)."""
    from kg.sparql.lexer import syntax_error

    return syntax_error(engine_text, text)
