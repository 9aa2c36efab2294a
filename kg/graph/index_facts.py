"""What `kg analyze` reads of a graph, from its query index instead of a parse of the file (decision 0059).

The index (kg.graph.index_writer) keeps every triple the analysis reads: the papers' and concepts' types, the
subject links, the labels and any earlier analysis (kg:pagerank, kg:member, prov:Activity builds). `analysis_facts`
reads them into the same `kg.graph.facts.Facts` that `kg.graph.facts.of_triples` makes of a parse, by the same
rules, for the fields the analysis uses: `papers` (IRI -> label), `concepts` (IRI -> label), `subjects`,
`pagerank`, `community` and `builds`. The other fields stay empty: the annotations, abstracts and page values are
not what an analysis reads, and a reader that needs them (kg report, kg render) reads the file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kg.graph.facts import Facts, community_number
from kg.graph.index_file import connect
from kg.graph.vocabulary import FABIO, PROV, SKOS


def _key(t: str) -> str:
    """SQL for the key of term `t` in Facts: its value, a blank node's with "_:" as the parse keys it."""
    return f"CASE {t}.kind WHEN 'bnode' THEN '_:' || {t}.value ELSE {t}.value END"


def analysis_facts(index: Path) -> Facts:
    """The facts an analysis reads, from a fresh query index (kg.graph.index_file.fresh) of the graph."""
    db = connect(index)
    try:
        return _read(db)
    finally:
        db.close()


def _read(db: sqlite3.Connection) -> Facts:
    def rows(sql: str, *args: str) -> list:
        return db.execute(sql, args).fetchall()

    def pairs(view: str, value: str = "term") -> list:
        """(subject key, object) of a view's triples; `value`: "term" for the object's key, "term_row" for its value."""
        o = _key("o") if value == "term" else "o.value"
        return rows(f"SELECT {_key('t')}, {o} FROM {view} AS v JOIN term AS t ON t.id = v.s JOIN {value} AS o ON o.id = v.o")

    # in the order of the terms' ids, which the writer gives in the order the graph first names them
    typed = f"SELECT {_key('t')} FROM a JOIN term AS t ON t.id = a.s JOIN term_row AS k ON k.id = a.o WHERE k.value = ? ORDER BY a.s"
    subjects = sorted(pairs("subject"))
    papers = dict.fromkeys(v for (v,) in rows(typed, FABIO + "ResearchPaper"))
    papers.update(dict.fromkeys(p for p, _ in subjects))
    # rdfs:label: the first a node has (the parse keeps the first it meets; here the least term id, the first written)
    labels = dict(pairs("(SELECT s, MIN(o) AS o FROM label GROUP BY s)", "term_row"))
    concepts: dict[str, set[str]] = {c: set() for (c,) in rows(typed, SKOS + "Concept")}
    for concept, value, lang in rows(f"SELECT {_key('t')}, o.value, o.lang FROM pref_label AS v JOIN term AS t ON t.id = v.s "
                                     "JOIN term AS o ON o.id = v.o ORDER BY v.s"):
        names = concepts.setdefault(concept, set())
        if lang is None or lang.startswith("en"):  # English or untagged, as kg.graph.facts keeps them
            names.add(value)
    for _, concept in subjects:
        concepts.setdefault(concept, set())
    return Facts(
        papers={p: labels.get(p, "") or p.rsplit("/", 1)[-1] for p in papers},
        years={},
        concepts={c: min(ls, default="") or labels.get(c, "") or c.rstrip("/#").rsplit("/", 1)[-1] for c, ls in concepts.items()},
        broader={},
        subjects=tuple(subjects),
        pagerank={s: float(v) for s, v in pairs("pagerank", "term_row")},
        community={c: community_number(s) for s, c in sorted(pairs("member"))},
        builds=tuple(v for (v,) in rows(typed, PROV + "Activity")),
    )
