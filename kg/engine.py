"""The local query engine: a named query run on a pyoxigraph store, its parameters bound by a VALUES block."""

from __future__ import annotations

from typing import Any, Mapping

from .catalog import NamedQuery, bind, syntax_message
from .errors import QueryError
from .resources import internal_query
from .results import Results, Term


def run(store, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None) -> Results:
    """Run a query on a pyoxigraph store with its parameters bound as RDF terms."""
    from .sparql import is_update

    if is_update(q.text):
        raise QueryError(f"query {q.name!r} is a SPARQL Update; kg only reads graphs (use 'kg push' to load data into a store)")
    return execute(store, bound(q.text, terms(store, q, params)), max_rows, q.name)


def terms(store, q: NamedQuery, params: Mapping[str, Any] | None) -> dict[str, Term]:
    def lookup(name: str, terms: dict[str, Term]) -> Results:
        return execute(store, bound(internal_query(name), terms), None, q.name)

    return bind(q, dict(params or {}), lookup)


def bound(text: str, terms: dict[str, Term]) -> str:
    """The query with its parameters bound by a VALUES block of RDF terms at the top of its WHERE clause.

    Measured on 21k papers: pyoxigraph plans a query with `substitutions` as if the variable were
    free (papers-by-concept 7.3 s on disk); a VALUES block lets it start from the bound term (2.5 s).
    The terms are serialized by the RDF term class (N-Triples escaping), never pasted as user text.
    """
    from .sparql import with_values

    return with_values(text, {k: t.n3() for k, t in terms.items()})


def execute(store, text: str, max_rows: int | None, name: str) -> Results:
    import pyoxigraph as ox

    try:
        answer = store.query(text)
        if isinstance(answer, ox.QueryBoolean):
            return Results("ask", boolean=bool(answer), name=name)
        if isinstance(answer, ox.QueryTriples):
            triples: list[Any] = []
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
