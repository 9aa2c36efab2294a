"""Stage 4a: named SPARQL queries (queries/*.rq), parameters bound as RDF terms, run on pyoxigraph.

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
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

from .errors import QueryError, UsageError
from .resources import data_path, internal_query
from .results import XSD, Results, Term

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
    """The prefixes every query may use undeclared: those kg writes into its Turtle (kg.rdf.Namespaces), and rdf:."""
    from .rdf import RDF, Namespaces

    return {**Namespaces().prefixes(), "rdf": RDF}


def _prefixed(text: str) -> str:
    from .sparql import with_prefixes

    return with_prefixes(text, standard_prefixes())


# ---- binding ---------------------------------------------------------------------------------

Lookup = Callable[[str, dict[str, Term]], Results]  # runs an internal SELECT, with bindings, on the same graph


def bind(q: NamedQuery, params: Mapping[str, Any], lookup: Lookup) -> dict[str, Term]:
    """Check and convert raw parameter values into RDF terms (labels resolved to concept IRIs)."""
    declared = {p.name: p for p in q.params}
    unknown = sorted(set(params) - set(declared))
    if unknown and declared:
        raise UsageError(f"query {q.name!r} has no parameter {unknown[0]!r} (parameters: {', '.join(declared)})")
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


def _convert(q: NamedQuery, p: Param, value: Any, lookup: Lookup) -> Term:
    text = str(value).strip()
    if p.type == "integer":
        try:
            return Term("literal", str(int(text)), XSD + "integer")
        except ValueError:
            raise UsageError(f"query {q.name!r}: parameter {p.name!r} must be a whole number, not {text!r}") from None
    if p.type == "string":
        return Term("literal", str(value), XSD + "string")
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if p.type == "iri":
        if not _IRI.match(text):
            raise UsageError(f"query {q.name!r}: parameter {p.name!r} must be an IRI, not {text!r}")
        return Term("uri", text)
    if p.type == "concept":
        return Term("uri", _concept_iri(q, p, text, lookup))
    return Term("uri", _paper_iri(q, p, text, lookup))


def _concept_iri(q: NamedQuery, p: Param, text: str, lookup: Lookup) -> str:
    if _IRI.match(text) and lookup(internal_query("concept-by-iri"), {"concept": Term("uri", text)}).rows:
        return text
    rows = lookup(internal_query("concept-by-label"), {"key": Term("literal", text, XSD + "string")}).rows
    pref = sorted({r[0].value for r in rows if r[2].value == "pref"})
    found = pref or sorted({r[0].value for r in rows})
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(f"query {q.name!r}: {text!r} names several concepts ({', '.join(found)}); pass the IRI")
    if _IRI.match(text) and text.count(":") and "/" in text:
        raise UsageError(f"query {q.name!r}: <{text}> is not a concept of this graph")
    # Only on the way to an error: every label, for the nearest ones.
    labels = sorted({r[1].value.casefold() for r in lookup(internal_query("concept-labels"), {}).rows})
    hints = get_close_matches(text.casefold(), labels, n=3)
    raise UsageError(
        f"query {q.name!r}: no concept labelled {text!r} in the graph"
        + (f" (did you mean: {', '.join(hints)}?)" if hints else "; see 'kg query concept-tree'")
    )


def _paper_iri(q: NamedQuery, p: Param, text: str, lookup: Lookup) -> str:
    # Targeted lookups (an IRI, else identifier or exact label), never a scan of every paper:
    # a string comparison with every paper IRI took 13 s at 100k papers.
    if _IRI.match(text) and lookup(internal_query("paper-by-iri"), {"paper": Term("uri", text)}).rows:
        return text
    rows = lookup(internal_query("paper-by-key"), {"key": Term("literal", text, XSD + "string")}).rows
    found = sorted({r[1].value for r in rows})
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(f"query {q.name!r}: {text!r} names several papers ({', '.join(found[:5])}); pass the identifier or IRI")
    raise UsageError(f"query {q.name!r}: no paper with identifier, IRI or title {text!r}; find one with 'kg query search --param words=…'")


# ---- running ---------------------------------------------------------------------------------


def run_store(
    store, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None, folder: Path | None = None
) -> Results:
    """Run a query on a pyoxigraph store with its parameters bound as RDF terms.

    `folder`: the persisted store's folder (`kg.store.fresh_folder`), whose side files answer faster
    with the same rows: the text index narrows `search` (kg.textindex), the tables answer the long
    listings (kg.tables).
    """
    from .sparql import is_update

    if is_update(q.text):
        raise QueryError(f"query {q.name!r} is a SPARQL Update; kg only reads graphs (use 'kg push' to load data into a store)")
    terms = _terms(store, q, params)
    text = _fast_text(store, q)
    if folder is None:
        return _execute(store, _bound(text, terms), max_rows, q.name)
    from .store import TEXT_INDEX
    from .tables import FILE, answer

    text = _bound(_narrowed(store, q, text, terms, folder / TEXT_INDEX), terms)
    found = answer(folder / FILE, q.name, text, terms, max_rows, listing=_shipped(q))
    return found if found is not None else _execute(store, text, max_rows, q.name)


def final_text(store, q: NamedQuery, params: Mapping[str, Any] | None = None) -> str:
    """The text `run_store` runs on this store for these parameters (without a text index)."""
    return _bound(_fast_text(store, q), _terms(store, q, params))


def _terms(store, q: NamedQuery, params: Mapping[str, Any] | None) -> dict[str, Term]:
    def lookup(text: str, terms: dict[str, Term]) -> Results:
        return _execute(store, _bound(text, terms), None, q.name)

    return bind(q, dict(params or {}), lookup)


def _narrowed(store, q: NamedQuery, text: str, terms: dict[str, Term], index: Path) -> str:
    """The shipped `search` limited to the papers the text index finds for its phrase; else `text` unchanged."""
    from .textindex import candidates, restrict

    words = terms.get("words")
    if q.name != "search" or words is None or not _shipped(q) or not index.is_file():
        return text
    found = candidates(store, index, words.value)
    return (restrict(text, found) if found is not None else None) or text


def _fast_text(store, q: NamedQuery) -> str:
    """The text to run on a local store: a shipped query's twin shaped for pyoxigraph, if it has one.

    `_oxigraph-NAME.rq` is the same query shaped for pyoxigraph's planner; `_stats-NAME.rq` reads the
    counts kg.stats adds to the store, when it has them. Only for the shipped query itself (same
    text), never a user's file that happens to share its name. Tests hold each twin to its query's rows.
    """
    from .stats import has_stats

    if not _shipped(q):
        return q.text
    folder = data_path("queries")
    for twin, usable in ((folder / f"_oxigraph-{q.name}.rq", lambda: True), (folder / f"_stats-{q.name}.rq", lambda: has_stats(store))):
        if twin.is_file() and usable():
            return twin.read_text(encoding="utf-8")
    return q.text


def _shipped(q: NamedQuery) -> bool:
    """True for a query shipped with kg, as shipped (not a user's file that shares its name)."""
    return _shipped_text(q.name) == q.text


@lru_cache(maxsize=None)
def _shipped_text(name: str) -> str | None:
    """The text of the shipped query `name` (None if kg ships none), read once: each run asks up to three times."""
    shipped = data_path("queries") / f"{name}.rq"
    return shipped.read_text(encoding="utf-8") if shipped.is_file() else None


def _bound(text: str, terms: dict[str, Term]) -> str:
    """The query with its parameters bound by a VALUES block of RDF terms at the top of its WHERE clause.

    Measured on 21k papers: pyoxigraph plans a query with `substitutions` as if the variable were
    free (papers-by-concept 7.3 s on disk); a VALUES block lets it start from the bound term (2.5 s).
    The terms are serialized by the RDF term class (N-Triples escaping), never pasted as user text.
    """
    from .sparql import with_values

    return with_values(text, {k: t.n3() for k, t in terms.items()})


def _execute(store, text: str, max_rows: int | None, name: str) -> Results:
    import pyoxigraph as ox

    try:
        answer = store.query(text)
        if isinstance(answer, ox.QueryBoolean):
            return Results("ask", boolean=bool(answer), name=name)
        if isinstance(answer, ox.QueryTriples):
            triples = []
            for t in answer:
                if max_rows is not None and len(triples) >= max_rows:
                    return Results("graph", triples=tuple(triples), truncated=True, name=name)
                triples.append(t)
            return Results("graph", triples=tuple(triples), name=name)
        variables = tuple(v.value for v in answer.variables)
        rows: list[tuple[Term | None, ...]] = []
        # Each distinct term converted once: answers repeat concepts, labels and counts row after row
        # (co-occurrence at 100k papers: 312k terms, 0.64 s to convert one by one).
        seen: dict[Any, Term] = {}

        def conv(term: Any) -> Term:
            out = seen.get(term)
            if out is None:
                out = seen[term] = Term.from_oxigraph(term)
            return out

        for solution in answer:
            if max_rows is not None and len(rows) >= max_rows:
                return Results("select", variables, tuple(rows), truncated=True, name=name)
            rows.append(tuple(None if (t := solution[i]) is None else conv(t) for i in range(len(variables))))
        return Results("select", variables, tuple(rows), name=name)
    except SyntaxError as exc:
        raise QueryError(f"query {name!r}: {syntax_message(str(exc), text)}") from None
    except (OSError, RuntimeError) as exc:  # pyoxigraph reports evaluation failures as RuntimeError
        raise QueryError(f"query {name!r} failed: {exc}") from None


def syntax_message(engine_text: str, text: str = "") -> str:
    """pyoxigraph's 'error at 3:17: expected …' as one line: 'SPARQL syntax error at line 3, column 17, near …' (kg.sparql.syntax_error)."""
    from .sparql import syntax_error

    return syntax_error(engine_text, text)


def query(
    name_or_text: str | Path,
    params: Mapping[str, Any] | None = None,
    *,
    graph: str | Path | None = None,
    endpoint: str | None = None,
    graph_iri: str | None = None,
    max_rows: int | None = None,
    timeout: float | None = 60.0,
) -> Results:
    """Run a named query, a .rq file or SPARQL text on a graph file or a remote endpoint; return rows.

    timeout: seconds the query may run, locally or remotely (None or 0: no limit on a local graph).

    >>> kg.query("papers-by-concept", {"concept": "reinforcement learning"}).to_dataframe()
    """
    q = _resolve_any(name_or_text)
    if endpoint is not None:
        from .remote import run_remote

        return run_remote(endpoint, q, params or {}, graph_iri=graph_iri, timeout=timeout or 60.0)
    from .store import fresh_folder, open_store

    graph = graph if graph is not None else default_graph()
    store = open_store(graph)  # building the store the first time is not the query: no deadline
    folder = fresh_folder(graph)
    from .deadline import with_deadline

    return with_deadline(lambda: run_store(store, q, params, max_rows=max_rows, folder=folder), timeout, q.name)


def _resolve_any(name_or_text: str | Path | NamedQuery) -> NamedQuery:
    if isinstance(name_or_text, NamedQuery):
        return name_or_text
    text = str(name_or_text)
    if any(c in text for c in "{}\n") or re.match(r"\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", text, re.I):
        return from_text(text)
    return resolve(text)


def default_graph() -> Path:
    """The graph used when none is named: the most recently written graph in graphs/ (kg.rdf.latest_graph),
    else the one `kg build` writes for the bundled sample, graphs/icml2024.ttl."""
    from .build import SAMPLE_NAME
    from .rdf import GRAPHS_FOLDER, latest_graph

    return latest_graph() or GRAPHS_FOLDER / f"{SAMPLE_NAME}.ttl"
