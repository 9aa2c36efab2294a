"""Light lexical checks on SPARQL text, done before any engine sees it.

A small tokenizer that skips comments, strings and IRIs is enough to tell an update from a
query, find a SERVICE clause, and find the opening brace of the WHERE clause (where a VALUES
block binds parameters for a remote endpoint, which has no other way to receive them). Its IRIs
and prefixed names follow the SPARQL grammar (escapes included), but a scan is no check: what kg
refuses to run is decided on a parse (kg.sparql.sanitise), of a text whose line endings were made LF.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Iterator, Mapping

from kg.core.errors import QueryError


@cache
def _token() -> re.Pattern[str]:
    """The tokenizer's pattern, compiled on first use (12 ms: `kg query` of a named query never needs it)."""
    return re.compile(
        r"""(?P<comment>\#[^\n]*)
          | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
          | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
          | (?P<var>[?$][A-Za-z0-9_\u00b7-\uffff]+)
          | (?P<word>[A-Za-z_][A-Za-z0-9_-]*(?::(?:[\w\-.:%\u00b7-\uffff]|\\[_~.\-!$&'()*+,;=/?\#@%])*)?)
          | (?P<brace>[{}])
          | (?P<other>\S)""",
        re.VERBOSE,
    )


UPDATE_KEYWORDS = {"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}
QUERY_KEYWORDS = {"SELECT", "CONSTRUCT", "ASK", "DESCRIBE"}


def tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, offset) for each token outside comments."""
    for m in _token().finditer(text):
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
    OPTIONAL of that group, so it acts like the substitution used for local queries. It reaches
    into subqueries too: a subquery that projects a bound variable gets the same block for it
    (`_subquery_groups`), so the engine restricts it first instead of computing it for every value
    and joining after (papers-by-concept's subqueries per paper and subject, decision 0006).
    """
    if not bindings:
        return text
    inserts = [(where_brace(text), bindings)]
    for at, names in _subquery_groups(text, set(bindings)):
        inserts.append((at, {k: v for k, v in bindings.items() if k in names}))
    for at, bound in sorted(inserts, key=lambda x: x[0], reverse=True):
        variables = " ".join(f"?{k}" for k in bound)
        values = " ".join(bound.values())
        text = f"{text[:at]}\n  VALUES ({variables}) {{ ({values}) }}\n{text[at:]}"
    return text


def _subquery_groups(text: str, names: set[str]) -> list[tuple[int, set[str]]]:
    """For each subquery that can take bound variables: the offset after its WHERE brace, and which ones.

    A subquery takes a variable when it projects it as a plain `?v` (not `*`, not `(… AS ?v)`),
    assigns it nowhere (`AS ?v`), has no LIMIT or OFFSET (restricting first would change which rows
    those keep), and every subquery around it takes the variable too (else it is another variable
    that merely shares the name).
    """
    toks = list(tokens(text))
    selects = [i for i, (kind, tok, _) in enumerate(toks) if kind == "word" and tok.upper() == "SELECT"]
    if form(text) == "SELECT":
        selects = selects[1:]  # the query itself; its group is bound by the caller
    found: list[tuple[int, int, int, set[str]]] = []  # (select index, open brace index, close brace index, names)
    for s in selects:
        projected: set[str] = set()
        parens, star, w = 0, False, s + 1
        while w < len(toks) and toks[w][1] != "{":
            kind, tok, _ = toks[w]
            parens += tok == "("
            parens -= tok == ")"
            if kind == "var" and parens == 0:
                projected.add(tok[1:])
            star |= tok == "*" and parens == 0
            w += 1
        depth, c = 0, w
        for c in range(w, len(toks)):
            depth += {"{": 1, "}": -1}.get(toks[c][1], 0) if toks[c][0] == "brace" else 0
            if depth == 0:
                break
        end, limited = c + 1, False
        while end < len(toks) and toks[end][1] != "}":  # solution modifiers up to the enclosing brace
            limited |= toks[end][0] == "word" and toks[end][1].upper() in ("LIMIT", "OFFSET")
            end += 1
        assigned = {toks[j + 1][1][1:] for j in range(s, c) if toks[j][1].upper() == "AS" and toks[j + 1][0] == "var"}
        takes = set() if (star or limited) else (projected & names) - assigned
        for _, pw, pc, ptakes in found:  # enclosing subqueries come first in the text
            if pw < s < pc:
                takes &= ptakes
        found.append((s, w, c, takes))
    return [(toks[w][2] + 1, takes) for _, w, _, takes in found if takes and w < len(toks)]


PREFIXES_NOTE = "# standard prefixes, declared by kg"


def with_prefixes(text: str, prefixes: Mapping[str, str]) -> str:
    """The query with a PREFIX declaration for each of `prefixes` it uses without declaring.

    The declarations go on one line (marked with PREFIXES_NOTE) just before the first line that is
    not a comment, so a comment header that documents parameters stays first, and
    `syntax_position` can give positions in the text as the user wrote it.
    """
    missing = sorted({p for p, _ in undeclared(text) if p in prefixes})
    if not missing:
        return text
    line = " ".join(f"PREFIX {p}: <{prefixes[p]}>" for p in missing) + "  " + PREFIXES_NOTE + "\n"
    lines = text.splitlines(keepends=True)
    at = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), len(lines))
    return "".join(lines[:at]) + line + "".join(lines[at:])


def undeclared(text: str) -> list[tuple[str, int]]:
    """(prefix, offset) of each prefixed name whose prefix the query does not declare, in text order."""
    toks = list(tokens(text))
    declared = {toks[i + 1][1].split(":", 1)[0] for i, (kind, tok, _) in enumerate(toks[:-1]) if kind == "word" and tok.upper() == "PREFIX"}
    return [(tok.split(":", 1)[0], at) for i, (kind, tok, at) in enumerate(toks)
            if kind == "word" and ":" in tok and tok.split(":", 1)[0] not in declared and not (i and toks[i - 1][1].upper() == "PREFIX")]


def syntax_position(text: str, line: int) -> int:
    """The line number in the user's text of `line` in `text` (which may hold a line of added prefixes)."""
    for i, ln in enumerate(text.splitlines(), start=1):
        if ln.endswith(PREFIXES_NOTE):
            return line - 1 if line > i else line
    return line


def syntax_error(engine_text: str, text: str = "") -> str:
    """An engine's syntax error as one readable line: the position, what is there, and what was expected in short.

    pyoxigraph lists every acceptable character class after an unknown prefix (a screenful);
    that becomes 'unknown prefix x:', and long lists of expected tokens are cut to a few.
    """
    m = re.match(r"error at (\d+):(\d+):\s*(.*)", engine_text, re.DOTALL)
    if not m:
        return f"SPARQL syntax error: {' '.join(engine_text.split())[:200]}"
    row, col, detail = int(m[1]), int(m[2]), " ".join(m[3].split())
    lines = text.splitlines()
    here = lines[row - 1] if 0 < row <= len(lines) else ""
    before = here[: col - 1].rstrip() if col <= len(here) + 1 else here.rstrip()
    after = before[-30:].lstrip()
    shown = ("…" if len(after) < len(before.lstrip()) else "") + after
    where = f"line {syntax_position(text, row) if text else row}, column {col}"
    unknown = undeclared(text)
    if unknown:  # the engine's own message for these is a list of every character it could have read
        prefix, at = unknown[0]
        row = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        where = f"line {syntax_position(text, row)}, column {col}"
        return f"SPARQL syntax error at {where}: unknown prefix {prefix}: (declare it with PREFIX {prefix}: <IRI>)"
    expected = re.sub(r"\[[^\]]*\]|'[^']*'|\|", "", detail.removeprefix("expected one of").removeprefix("expected"))
    words = [w for w in (w.strip() for w in expected.split(",")) if w.isupper()][:8]
    hint = f"expected {', '.join(words)}{' …' if len(words) == 8 else ''}" if words else "unexpected text"
    return f"SPARQL syntax error at {where}, after {shown!r}: {hint}" if shown else f"SPARQL syntax error at {where}: {hint}"
