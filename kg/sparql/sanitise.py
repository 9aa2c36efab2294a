"""The one check of SPARQL text that kg did not write itself, before an engine runs it.

`check(text)` gives the text the engine is to run (line endings made LF) and why it must not run,
or raises QueryError. In order, with no parser seeing what an earlier step refused:

1. Line endings. SPARQL ends a comment at a carriage return as at a line feed; rdflib's grammar
   and kg's scans (kg.sparql.lexer) end one only at a line feed, so `# c\\rSERVICE <…> {…}` was a
   comment to the check and a SERVICE clause to the engine. CR LF and a lone CR become LF before
   anything reads the text, and the engine runs that text. (No other character ends a comment
   for either parser: U+2028, U+0085, form feeds and escaped `\\u000A` do not.)
2. Size, from a scan of the tokens: at most MAX_DEPTH brackets open at once and MAX_TERMS tokens.
   pyoxigraph's parser and planner recurse on nested brackets and on long chains (OPTIONAL,
   MINUS, BIND, path sequences) and overflow the thread's stack: a crash, not an error.
3. A parse by rdflib's SPARQL 1.1 grammar (with room to recurse for what step 2 lets through; a
   RecursionError is the same refusal), whose tree is searched for SERVICE, FROM / FROM NAMED and
   updates (a text scan cannot be trusted with that: an escaped IRI or a prefixed name ending in
   an escaped quote makes a scan misread where comments and strings begin) and measured again, so
   a scan misled about brackets does not let a deep query through. For a text rdflib cannot read
   the check gives rdflib's syntax error (its position: where the construct it could not read
   starts), and kg serve answers with that: the text is not handed to another parser.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kg.core.errors import QueryError
from kg.sparql.lexer import is_update, syntax_position, tokens

MAX_DEPTH = 64  # brackets ( [ { open at once
MAX_TERMS = 10_000  # tokens of the text, items of its parse tree
TOO_DEEP = f"query nested too deeply (limit {MAX_DEPTH} levels of brackets); flatten it or split it into several queries"
TOO_LONG = f"query too long (limit {MAX_TERMS:,} terms and operators); split it into several queries"
READ_ONLY = "SPARQL Update is refused: kg only reads graphs (read-only)"
_REFUSED = {
    "ServiceGraphPattern": "SERVICE (federated query) is refused: kg answers from its own graph and fetches no other endpoint",
    "DatasetClause": "FROM / FROM NAMED are refused: kg answers from its own graph and fetches no other",
}
# rdflib's parser recurses about 55 frames per bracket and 11 per triple pattern: room for what step 2 lets through
# (Python 3.11 frames of pure Python code take no C stack: 100,000 of them ran in a 2 MB thread).
_RECURSION = 60_000
_TREE_DEPTH = 8 * MAX_DEPTH  # its tree of 64 nested CONCAT( is 460 deep; of 64 parentheses, 331
_LINE_END = re.compile(r"\r\n?")
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_PARSING = threading.Lock()  # the recursion limit is the process's: one parse at a time raises it


@dataclass(frozen=True)
class Checked:
    """A query text as the engine is to run it; why kg must not run it (None: it may); and, for a text rdflib's
    grammar cannot read, its syntax error (the refusal is then from a scan of the tokens, which is no proof)."""

    text: str
    refusal: str | None
    unreadable: str | None = None


def normalised(text: str) -> str:
    """The text with every line ending a line feed: CR LF and a lone CR (where SPARQL ends a comment) become LF."""
    return _LINE_END.sub("\n", text)


def bounded(text: str) -> None:
    """Raise QueryError when the text has brackets nested deeper than MAX_DEPTH or more than MAX_TERMS tokens.

    A scan of tokens (comments, strings and IRIs skipped), cheap enough for the server process to run
    before a query reaches a worker; `check` measures the parse tree again.
    """
    depth = 0
    for count, (_, tok, _) in enumerate(tokens(normalised(text)), start=1):
        if count > MAX_TERMS:
            raise QueryError(TOO_LONG)
        if tok in _OPEN:
            depth += 1
            if depth > MAX_DEPTH:
                raise QueryError(TOO_DEEP)
        elif tok in _CLOSE:
            depth = max(0, depth - 1)


@lru_cache(maxsize=64)
def check(text: str) -> Checked:
    """The text the engine is to run, why it must not, and whether rdflib's grammar reads it (module docstring);
    QueryError for a text too deep or too long for a parser.

    kg serve runs only texts the check reads (an unreadable one is a 400 with `unreadable`); `kg query`
    hands an unreadable one that the scan does not refuse to the engine, which reports its own syntax error
    or runs a query in the syntax it knows beyond SPARQL 1.1 (decision 0021).
    """
    text = normalised(text)
    bounded(text)
    tree, problem = _parse(text)
    if problem is not None:
        return Checked(text, _scanned(text), problem)
    return Checked(text, READ_ONLY if tree is None else _search(tree))


def _parse(text: str) -> tuple[Any, str | None]:
    """rdflib's parse of a query (None for an update) and None; or None and the syntax error."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.parser import parseQuery, parseUpdate

    with _room():
        try:
            try:
                return parseQuery(text), None
            except ParseBaseException as exc:
                try:
                    parseUpdate(text)
                except (ParseBaseException, ValueError, TypeError):
                    return None, _syntax(exc, text)
                return None, None
        except RecursionError:
            raise QueryError(TOO_DEEP) from None
        except (ValueError, TypeError) as exc:  # rdflib's term checks (a malformed IRI, a bad language tag)
            return None, f"SPARQL syntax error: {exc}"


def _scanned(text: str) -> str | None:
    """What a scan of the tokens finds that kg refuses to run: an update, SERVICE, FROM."""
    if is_update(text):
        return READ_ONLY
    words = {tok.upper() for kind, tok, _ in tokens(text) if kind == "word"}
    if "SERVICE" in words:
        return _REFUSED["ServiceGraphPattern"]
    return _REFUSED["DatasetClause"] if "FROM" in words else None


@contextmanager
def _room() -> Iterator[None]:
    with _PARSING:
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(max(before, _RECURSION))
        try:
            yield
        finally:
            sys.setrecursionlimit(before)


def _search(tree: Any) -> str | None:
    """What the parse tree holds that kg refuses to run (the first found), or None; QueryError when it is too big."""
    stack: list[tuple[Any, int]] = [(tree, 1)]
    seen = 0
    found: str | None = None
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_TERMS:
            raise QueryError(TOO_LONG)
        if depth > _TREE_DEPTH:
            raise QueryError(TOO_DEEP)
        name = getattr(node, "name", None)
        if found is None and isinstance(name, str) and name in _REFUSED:
            found = _REFUSED[name]
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, (list, tuple)) or type(node).__name__ == "ParseResults":
            stack.extend((child, depth + 1) for child in node)
    return found


def _syntax(exc: Any, text: str) -> str:
    """rdflib's syntax error as one line: where its parser stopped (the start of what it could not read) and the text there."""
    here = exc.line[exc.col - 1 :].strip()
    shown = here[:30] + ("…" if len(here) > 30 else "")
    what = "text after the end of the query" if "end of text" in str(exc.msg) else "the query cannot be read from here on"
    at = f", at {shown!r}" if shown else ", at the end"
    return f"SPARQL syntax error at line {syntax_position(text, exc.lineno)}, column {exc.col}{at}: {what}"
