"""The named queries (queries/*.rq): their headers, parameters, and binding parameter values as RDF terms.

Each .rq file opens with a comment header that documents it and declares its parameters:

    # One line (or a paragraph) saying what the query answers.
    #
    # Parameters:
    #   concept (concept, required)  a label such as "reinforcement learning", or a concept IRI
    #   min (integer, default 1)     the least number of shared papers
    # Example:
    #   kg query co-occurrence --param min=2

Parameter types: concept (a label matched case-insensitively (SPARQL LCASE) against skos:prefLabel and
skos:altLabel, or an IRI), paper (a dcterms:identifier or an IRI), iri, string, integer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import QueryError, UsageError
from .resources import data_path
from .results import Results, Term
from .vocabulary import XSD

PARAM_TYPES = ("concept", "paper", "iri", "string", "integer")
_PARAM = re.compile(r"^\s+(?P<name>[A-Za-z_]\w*)\s+\((?P<type>\w+)(?P<required>,\s*required)?(?:,\s*default\s+(?P<default>[^)]*))?\)\s*(?P<doc>.*)$")
_IRI = re.compile(r"^[a-z][a-z0-9+.-]*:[^\s<>\"{}|\\^`]+$", re.I)


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
    if text.endswith((".rq", ".sparql")) or (path.suffix and path.is_file()):
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


def from_text(text: str, name: str = "query") -> NamedQuery:
    """An ad-hoc query given as text; its comment header (if any) declares parameters as usual.

    The standard prefixes it uses without declaring (kg:, kgc:, dcterms:, …: standard_prefixes) are declared for it.
    """
    return parse_header(name, _prefixed(text))


def standard_prefixes() -> dict[str, str]:
    """The prefixes every query may use undeclared: those kg writes into its Turtle (kg.vocabulary.Namespaces), and rdf:."""
    from .vocabulary import RDF, Namespaces

    return {**Namespaces().prefixes(), "rdf": RDF}


def _prefixed(text: str) -> str:
    """The text with its line endings made LF (kg.sanitise: before any scan reads it) and the standard prefixes it uses declared."""
    from .sanitise import normalised
    from .sparql import with_prefixes

    return with_prefixes(normalised(text), standard_prefixes())


@cache
def _shipped_text(name: str) -> str | None:
    path = data_path("queries") / f"{name}.rq"
    return path.read_text(encoding="utf-8") if name and not name.startswith("_") and path.is_file() else None


def shipped(q: NamedQuery) -> bool:
    """True for a named query kg ships, as shipped: the engine runs it unchecked (any other text is checked by kg.sanitise)."""
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
            out[name] = Term("uri", str(value)) if _IRI.match(str(value)) and ":" in str(value)[:12] else Term("literal", str(value), XSD + "string")
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
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    text = _expanded(text)
    if p.type == "iri":
        if not _IRI.match(text):
            raise UsageError(f"query {q.name!r}: parameter {p.name!r} must be an IRI, not {text!r}")
        return Term("uri", text)
    if p.type == "concept":
        return Term("uri", _concept_iri(q, p, text, lookup))
    return Term("uri", _paper_iri(q, p, text, lookup))


def _expanded(text: str) -> str:
    """A name as kg prints it (`kgc:reinforcement-learning`, `paper:586b7ea2e117174c`) as the IRI it stands for."""
    from .vocabulary import Namespaces

    prefix, _, local = text.partition(":")
    namespace = Namespaces().prefixes().get(prefix)
    return namespace + local if namespace is not None and local and not local.startswith("//") else text


def _concept_iri(q: NamedQuery, p: Param, text: str, lookup: Lookup) -> str:
    from .vocabulary import KGC

    for iri in (text, KGC + text):  # an IRI, or the slug kg prints after kgc: ("reinforcement-learning")
        if _IRI.match(iri) and lookup("concept-by-iri", {"concept": Term("uri", iri)}).rows:
            return iri
    rows = lookup("concept-by-label", {"key": Term("literal", text, XSD + "string")}).rows
    pref = sorted({_value(r[0]) for r in rows if _value(r[2]) == "pref"})
    found = pref or sorted({_value(r[0]) for r in rows})
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(f"query {q.name!r}: {text!r} names several concepts ({', '.join(found)}); pass the IRI")
    if _IRI.match(text) and text.count(":") and "/" in text:
        raise UsageError(f"query {q.name!r}: <{text}> is not a concept of this graph")
    # Only on the way to an error: every label, for the nearest ones.
    every = [(_value(r[1]).casefold(), _value(r[2]) == "pref") for r in lookup("concept-labels", {}).rows]
    labels = sorted({label for label, _ in every})
    key = text.casefold()
    # First the labels that hold the words as written ("diffusion": diffusion model): prefLabels, then those that
    # start with the words, the shortest first; then near spellings.
    holding = sorted({(not pref, not label.startswith(key), len(label), label) for label, pref in every if re.search(rf"\b{re.escape(key)}", label)})
    hints = list(dict.fromkeys([*(h[3] for h in holding[:3]), *get_close_matches(key, labels, n=3)]))[:3]
    raise UsageError(
        f"query {q.name!r}: no concept labelled {text!r} in the graph"
        + (f" (did you mean: {', '.join(hints)}?)" if hints else "; see 'kg query concept-tree'")
    )


def _paper_iri(q: NamedQuery, p: Param, text: str, lookup: Lookup) -> str:
    # Targeted lookups (an IRI, else identifier or exact label), never a scan of every paper:
    # a string comparison with every paper IRI took 13 s at 100k papers.
    if _IRI.match(text) and lookup("paper-by-iri", {"paper": Term("uri", text)}).rows:
        return text
    rows = lookup("paper-by-key", {"key": Term("literal", text, XSD + "string")}).rows
    found = sorted({_value(r[1]) for r in rows})
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(f"query {q.name!r}: {text!r} names several papers ({', '.join(found[:5])}); pass the identifier or IRI")
    raise UsageError(f"query {q.name!r}: no paper with identifier, IRI or title {text!r}; find one with 'kg query search --param words=…'")


def _value(term: Term | None) -> str:
    """The text of a term the lookup queries always bind."""
    if term is None:
        raise QueryError("a parameter lookup returned an unbound value")
    return term.value


def syntax_message(engine_text: str, text: str = "") -> str:
    """pyoxigraph's 'error at 3:17: expected …' as one line: 'SPARQL syntax error at line 3, column 17, near …' (kg.sparql.syntax_error)."""
    from .sparql import syntax_error

    return syntax_error(engine_text, text)
