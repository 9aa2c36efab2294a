"""SPARQL 1.1 Query Results JSON from an endpoint, read strictly and in time linear in the document.

pyoxigraph's results reader, used before, takes time quadratic in the number of variables (300,000
variables: 49 s, after the answer had been read within `--timeout`). Here Python's json parser (C,
linear) reads the document and each part is checked as pyoxigraph checked it: a boolean that is a JSON
boolean, variables that are distinct valid names, bindings of declared variables only, terms of a known
type whose IRIs, blank node labels, language tags and datatypes pyoxigraph's term constructors accept.
Each distinct term is checked and converted once (answers repeat concepts and labels row after row),
and the time limit is checked as the rows are read.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kg.graph.terms import Term
from kg.graph.vocabulary import XSD
from kg.sparql.results import Results

if TYPE_CHECKING:
    from kg.sparql.deadline import Deadline

LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
XSD_STRING = XSD + "string"
CHECK_EVERY = 4096  # rows between two looks at the clock


class NotResults(ValueError):
    """The document is not SPARQL 1.1 JSON results; the message says what is wrong."""


def read(body: bytes, deadline: Deadline, name: str = "query") -> Results:
    """The Results of a SPARQL JSON results document; NotResults when it is not one, the deadline's error past it."""
    try:
        doc = json.loads(body)
    except RecursionError:
        raise NotResults("JSON nested too deeply") from None
    except ValueError as exc:  # malformed JSON, bytes that are not UTF-8, a number of more than 4,300 digits
        raise NotResults(str(exc)) from None
    if not isinstance(doc, dict):
        raise NotResults("not a JSON object")
    if "boolean" in doc:
        if not isinstance(doc["boolean"], bool):
            raise NotResults("'boolean' is not true or false")
        return Results("ask", boolean=doc["boolean"], name=name)
    variables = _variables(doc.get("head"))
    results = doc.get("results")
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(bindings, list):
        raise NotResults("neither 'boolean' nor 'results' with a list of 'bindings'")
    index = {v: i for i, v in enumerate(variables)}
    seen: dict[tuple, Term] = {}
    rows: list[tuple[Term | None, ...]] = []
    empty: list[Term | None] = [None] * len(variables)
    for number, binding in enumerate(bindings):
        if number % CHECK_EVERY == 0 and deadline.passed():
            raise deadline.error()
        if not isinstance(binding, dict):
            raise NotResults(f"binding {number + 1} is not an object")
        row = empty.copy()
        for var, value in binding.items():
            at = index.get(var)
            if at is None:
                raise NotResults(f"binding {number + 1} binds {var!r}, which 'head' does not declare")
            try:  # a value met before: one look-up (most of a large answer)
                row[at] = seen[tuple(value.items())]
            except (KeyError, AttributeError, TypeError):
                row[at] = _term(value, seen)
        rows.append(tuple(row))
    return Results("select", tuple(variables), tuple(rows), name=name)


def _variables(head: Any) -> list[str]:
    """The declared variables: distinct names SPARQL allows."""
    import pyoxigraph as ox

    variables = head.get("vars") if isinstance(head, dict) else None
    if not isinstance(variables, list) or not all(isinstance(v, str) for v in variables):
        raise NotResults("'head' has no list of 'vars'")
    if len(set(variables)) != len(variables):
        raise NotResults("'head' declares a variable twice")
    for v in variables:
        try:
            ox.Variable(v)
        except ValueError:
            raise NotResults(f"{v[:100]!r} is not a variable name") from None
    return variables


def _term(value: Any, seen: dict[tuple, Term]) -> Term:
    """The Term of one bound value not met before, checked as pyoxigraph's term constructors check it; kept in `seen` by its items.

    The Term is what Term.from_oxigraph makes of pyoxigraph's term, made directly: an answer of many distinct
    values (titles, paper IRIs) spends most of its time here.
    """
    import pyoxigraph as ox

    if not isinstance(value, dict):
        raise NotResults(f"a bound value is not an object: {str(value)[:100]}")
    kind, text, datatype, lang = value.get("type"), value.get("value"), value.get("datatype"), value.get("xml:lang")
    try:
        if type(text) is not str or any(x is not None and type(x) is not str for x in (kind, datatype, lang)):
            raise ValueError("it needs a 'value', and its 'value', 'type', 'datatype' and 'xml:lang' must be strings")
        if kind == "uri":
            term = Term("uri", ox.NamedNode(text).value)
        elif kind == "bnode":
            term = Term("bnode", ox.BlankNode(text).value)
        elif kind not in ("literal", "typed-literal"):  # typed-literal: SPARQL 1.0's name, which Virtuoso still sends
            raise ValueError(f"type {kind!r} is none of uri, literal, bnode")
        elif lang is not None:
            if datatype not in (None, LANG_STRING):
                raise ValueError("it has both a language and a datatype")
            term = Term("literal", text, None, ox.Literal(text, language=lang).language)
        else:
            term = Term("literal", text, XSD_STRING if datatype is None else ox.NamedNode(datatype).value)
    except (ValueError, TypeError) as exc:
        raise NotResults(f"the bound value {str(value)[:100]} is not an RDF term ({exc})") from None
    seen[tuple(value.items())] = term
    return term
