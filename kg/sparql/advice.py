"""Advice on the shape of a query kg did not write: an OPTIONAL before the patterns that bind its variables, or of unconnected parts.

SPARQL evaluates `{ A OPTIONAL { B } C }` as (A left-join B) join C: B sees only what A binds. A
variable of B that only C binds is free in B, so B is matched over the whole graph and every row
of A is paired with every match, before C throws most of the pairs away. On 717 papers a listing with
`OPTIONAL { ?c skos:prefLabel ?label }` before `?paper dcterms:subject ?c` took 5.70 s, and 0.15 s
with the OPTIONAL last; pyoxigraph (0.5.13, the newest) does not reorder across an OPTIONAL, and kg
does not either, since moving it is not always the same query (a concept without a label drops the
row in the first form and keeps it in the second). So kg names the variables and says what to move.

Likewise `OPTIONAL { ?paper fabio:hasPublicationYear ?year . ?c skos:prefLabel ?label }`, whose two
patterns share no variable, is matched as a cross product of the two (18.63 s on 717 papers, against 0.12 s
written as two OPTIONALs, which differ only where one part matches and the other does not).
"""

from __future__ import annotations

from typing import Any, Iterator

_THROUGH = ("Join", "LeftJoin", "Filter", "Extend")  # the left spine of a group: what comes before, in order


def late_optionals(text: str) -> list[str]:
    """One line of advice per OPTIONAL whose variables only later patterns of its group bind; [] for any other query.

    A text rdflib's SPARQL 1.1 grammar cannot read gets no advice (the engine gives its own error).
    """
    tree = _algebra(text)
    if tree is None:
        return []
    found: list[str] = []
    for node in _nodes(tree):
        if getattr(node, "name", None) == "LeftJoin" and _parts(node.p2) > 1:
            found.append(
                "OPTIONAL of unconnected parts (its patterns share no variable): the engine matches each part over the whole "
                "graph and pairs them all (slow); write one OPTIONAL for each part"
            )
        if getattr(node, "name", None) != "Join":
            continue
        after = _variables(node.p2)
        for optional in _spine(node.p1):
            late = (_variables(optional.p2) - _variables(optional.p1)) & after
            if late:
                names = ", ".join(sorted(f"?{v}" for v in late))
                found.append(
                    f"OPTIONAL uses {names} before the patterns that bind {'it' if len(late) == 1 else 'them'}: SPARQL matches it "
                    "over the whole graph and pairs every row with every match (slow); move the OPTIONAL after them"
                )
    return list(dict.fromkeys(found))


def _parts(node: Any) -> int:
    """How many groups of triple patterns that share no variable a basic graph pattern holds (0 for anything else)."""
    from rdflib import Variable

    if getattr(node, "name", None) != "BGP":
        return 0
    groups: list[set] = []
    for triple in node.triples:
        names = {t for t in triple if isinstance(t, Variable)}
        if not names:
            continue  # a pattern without variables is a test, not a part
        touching = [g for g in groups if g & names]
        for g in touching:
            groups.remove(g)
            names |= g
        groups.append(names)
    return len(groups)


def _algebra(text: str) -> Any:
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        return translateQuery(parseQuery(text)).algebra
    except Exception:  # advice only: any text rdflib cannot read or translate (syntax, a deep nesting) gets none
        return None


def _nodes(node: Any) -> Iterator[Any]:
    """Every algebra node under `node`, itself first."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from _nodes(item)


def _spine(node: Any) -> Iterator[Any]:
    """The LeftJoins (OPTIONALs) on the left spine of a group: the ones that come before what is joined to it."""
    while getattr(node, "name", None) in _THROUGH:
        if node.name == "LeftJoin":
            yield node
        node = node.p1 if node.name in ("Join", "LeftJoin") else node.p


def _variables(node: Any) -> set[str]:
    from rdflib import Variable

    found = getattr(node, "_vars", None)
    if found is None:
        return set()
    return {str(v) for v in found if isinstance(v, Variable)}
