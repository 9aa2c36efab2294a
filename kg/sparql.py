"""Light lexical checks on SPARQL text, done before any engine sees it.

A small tokenizer that skips comments, strings and IRIs is enough to tell an update from a
query, find a SERVICE clause, and find the opening brace of the WHERE clause (where a VALUES
block binds parameters for a remote endpoint, which has no other way to receive them).
"""

from __future__ import annotations

import re
from typing import Iterator

from .errors import QueryError

_TOKEN = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
      | (?P<iri><[^<>"{}|^`\\\s]*>)
      | (?P<var>[?$][A-Za-z0-9_\u00b7-\uffff]+)
      | (?P<word>[A-Za-z_][A-Za-z0-9_-]*(?::[^\s{}()<>;,.]*)?)
      | (?P<brace>[{}])
      | (?P<other>\S)""",
    re.VERBOSE,
)
UPDATE_KEYWORDS = {"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}
QUERY_KEYWORDS = {"SELECT", "CONSTRUCT", "ASK", "DESCRIBE"}


def tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, offset) for each token outside comments."""
    for m in _TOKEN.finditer(text):
        if m.lastgroup != "comment":
            yield m.lastgroup or "other", m.group(), m.start()


def form(text: str) -> str:
    """The first query or update keyword after the prologue: SELECT, ASK, …, or INSERT, DELETE, …"""
    for kind, tok, _ in tokens(text):
        word = tok.upper()
        if kind == "word" and (word in QUERY_KEYWORDS or word in UPDATE_KEYWORDS):
            return word
    return ""


def is_update(text: str) -> bool:
    """True for SPARQL Update requests, which a read-only endpoint refuses."""
    return form(text) in UPDATE_KEYWORDS


def uses_service(text: str) -> bool:
    """True when the query has a SERVICE clause (federation, which would make the server fetch URLs)."""
    return any(kind == "word" and tok.upper() == "SERVICE" for kind, tok, _ in tokens(text))


def where_brace(text: str) -> int:
    """Offset just after the '{' that opens the outermost WHERE clause."""
    seen_where = False
    for kind, tok, offset in tokens(text):
        if kind == "word" and tok.upper() == "WHERE":
            seen_where = True
        elif kind == "brace" and tok == "{" and seen_where:
            return offset + 1
    raise QueryError("cannot bind parameters for a remote endpoint: the query needs an explicit WHERE { … } clause")


def with_values(text: str, bindings: dict[str, str]) -> str:
    """The query with `VALUES (?a ?b) { (t1 t2) }` first in its WHERE clause; terms in N-Triples syntax.

    At the top of the WHERE group the block joins before every other pattern, FILTER and
    OPTIONAL of that group, so it acts like the substitution used for local queries.
    """
    if not bindings:
        return text
    at = where_brace(text)
    names = " ".join(f"?{k}" for k in bindings)
    values = " ".join(bindings.values())
    return f"{text[:at]}\n  VALUES ({names}) {{ ({values}) }}\n{text[at:]}"
