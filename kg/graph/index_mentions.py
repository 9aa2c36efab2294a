"""A build's Web Annotations joined as they stream past, into the query index's `mention`, `quote` and `scored` rows.

The query index writer (kg.graph.index_writer) stages every annotation triple in SQLite and joins them with SQL when
it closes: that reads any graph, its triples in any order. A build's own triples come one annotation at a time
(kg.pipeline.triples._annotation: its body, target and score, the target's source and selectors, the position
selector's span, the quote selector's text), so the writer of a build hands them here instead: each annotation is
joined when the next one begins, by the rule of the SQL (every combination of body, target, score, source, position
selector and quote selector), and nothing is staged. At 21k papers that spares the builder the staging of 2.9M
triples and three joins over them (decision 0073).

A triple about an annotation node after its annotation was joined does not fit that order: `take` raises, and the
writer then writes no index (the next query makes it from a parse of the file, by the SQL).
"""

from __future__ import annotations

from typing import Callable

from kg.graph.annotations import OutOfOrder

Row = tuple[int, int, int]  # (predicate code, subject, object) as kg.graph.index_writer stages them


class Joined:
    """The mention, quote and scored rows of the annotations taken so far (the writer inserts and empties them)."""

    def __init__(self, code: Callable[[str], int], oa: str, kg: str) -> None:
        self.body, self.target, self.score = code(oa + "hasBody"), code(oa + "hasTarget"), code(kg + "score")
        self.source, self.selector = code(oa + "hasSource"), code(oa + "hasSelector")
        self.start, self.end, self.exact = code(oa + "start"), code(oa + "end"), code(oa + "exact")
        # what kg.pipeline.triples writes for one annotation, in its order
        self.usual = (self.body, self.target, self.score, self.source, self.selector, self.selector, self.start, self.end, self.exact)
        self.nodes: set[int] = set()  # the open annotation's nodes: itself, its targets, their selectors
        self.open: list[Row] = []
        self.mention: list[tuple[int, ...]] = []
        self.quote: list[Row] = []  # (body, paper, exact), not yet distinct
        self.scored: list[Row] = []

    def take(self, row: Row) -> None:
        """One annotation triple: the subject an annotation node's id, the object a node's id (target, selector) or a term's."""
        code, s, o = row
        if s not in self.nodes:
            if code != self.body:
                raise OutOfOrder("an annotation's triple after the annotation was joined: the triples are not in a build's order")
            self.close()
            self.nodes.add(s)
        if code == self.target or code == self.selector:
            self.nodes.add(o)
        self.open.append(row)

    def close(self) -> None:
        """Join the open annotation (the writer calls this once the last triple is taken)."""
        if self.open:
            self._join(self.open)
            self.open, self.nodes = [], set()

    def _join(self, rows: list[Row]) -> None:
        if len(rows) == 9 and tuple(r[0] for r in rows) == self.usual:
            (_, a, body), (_, a1, t), (_, a2, score), (_, t1, src), (_, t2, pos), (_, t3, quo), (_, p1, st), (_, p2, en), (_, q1, ex) = rows
            if a == a1 == a2 and t == t1 == t2 == t3 and pos == p1 == p2 and quo == q1 and pos != quo:
                self.mention.append((src, t, body, score, st, en, ex))
                self.quote.append((body, src, ex))
                self.scored.append((src, body, score))
                return
        self._join_any(rows)

    def _join_any(self, rows: list[Row]) -> None:
        """The SQL's joins (kg.graph.index_writer.Writer._finish) over one annotation's rows, whatever their shape."""
        by: dict[int, dict[int, list[int]]] = {}
        for code, s, o in rows:
            by.setdefault(code, {}).setdefault(s, []).append(o)

        def of(code: int, s: int) -> list[int]:
            return by.get(code, {}).get(s, [])

        for a, bodies in by.get(self.body, {}).items():
            for body in bodies:
                for t in of(self.target, a):
                    sources, selectors = of(self.source, t), of(self.selector, t)
                    for src in sources:
                        for score in of(self.score, a):
                            self.scored.append((src, body, score))
                            self.mention.extend((src, t, body, score, st, en, ex) for pos in selectors
                                                for st in of(self.start, pos) for en in of(self.end, pos)
                                                for quo in selectors for ex in of(self.exact, quo))
                        self.quote.extend((body, src, ex) for quo in selectors for ex in of(self.exact, quo))
