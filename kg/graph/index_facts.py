"""What `kg analyze` and the pages read of a graph, from its query index instead of a parse of the file.

The index (kg.graph.index_writer) keeps every triple the analysis reads: the papers' and concepts' types, the
subject links, the labels and any earlier analysis (kg:pagerank, kg:member, prov:Activity builds). `analysis_facts`
reads them into the same `kg.graph.facts.Facts` that `kg.graph.facts.of_triples` makes of a parse, by the same
rules, for the fields the analysis uses: `papers` (IRI -> label), `concepts` (IRI -> label), `subjects`,
`pagerank`, `community` and `builds`.

`page_facts` reads every field but `abstracts` and `evidence` (kg report and the CSV tables read the file): also what
the index keeps for the pages (`shown`: types, shown values, top concepts) and the annotations' scores, counts and
first mentions from `mention` and `scored`. A test holds both to the parse's Facts on built graphs. For a graph kg
wrote they are the same; an annotation without a position selector counts once in `mentions` here.

`indexed` reads a graph file's fresh index with one of them, or says None (no fresh index, or a damaged one);
`read_shown` is what pages, reports and exports read: `page_facts` where it can, else a parse.
Decisions 0059 (the analysis) and 0075 (the pages) say why.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from kg.core import progress
from kg.graph.annotations import Mention
from kg.graph.facts import Facts, community_number, read_facts
from kg.graph.index_file import connect, damaged, fresh, unreadable
from kg.graph.index_writer import SHOWN_CODES
from kg.graph.vocabulary import FABIO, FOAF, KG, PROV, RDF, SKOS


def _key(t: str) -> str:
    """SQL for the key of term `t` in Facts: its value, a blank node's with "_:" as the parse keys it."""
    return f"CASE {t}.kind WHEN 'bnode' THEN '_:' || {t}.value ELSE {t}.value END"


def indexed(graph: str | Path, read: Callable[[Path], Facts]) -> Facts | None:
    """`read` (analysis_facts, page_facts) of the graph file's fresh query index; None where it has none, or a damaged one."""
    index = fresh(graph)
    if index is None:
        return None
    progress.stage(f"reading the query index of {graph}")
    try:
        return read(index)
    except sqlite3.DatabaseError as exc:  # damaged (not busy): the file itself holds the same facts
        if not damaged(exc):
            raise
        unreadable(index, exc, f"reading {graph} instead")
        return None


def read_shown(graph: Any) -> Facts:
    """Every fact but abstracts and evidence (what pages, reports and exports show): a graph file's from its fresh
    query index, any other graph's (a file without one, a Built, triples) from kg.graph.facts.read_facts."""
    if isinstance(graph, (str, Path)):
        found = indexed(graph, page_facts)
        if found is not None:
            return found
    return read_facts(graph)


def analysis_facts(index: Path) -> Facts:
    """The facts an analysis reads, from a fresh query index (kg.graph.index_file.fresh) of the graph."""
    db = connect(index)
    try:
        return _read(db)
    finally:
        db.close()


def page_facts(index: Path) -> Facts:
    """Every fact but abstracts and evidence (what a page shows), from a fresh query index of the graph."""
    db = connect(index)
    try:
        return _page(db, _read(db))
    finally:
        db.close()


def _pairs(db: sqlite3.Connection, view: str, value: str = "term", *, ordered: bool = False) -> sqlite3.Cursor:
    """(subject key, object) of a view's triples; `value`: "term" for the object's key, "term_row" for its value;
    `ordered`: by subject term id (the order the graph first names them: the last of a subject's values wins)."""
    o = _key("o") if value == "term" else "o.value"
    order = " ORDER BY v.s" if ordered else ""
    return db.execute(f"SELECT {_key('t')}, {o} FROM {view} AS v JOIN term AS t ON t.id = v.s JOIN {value} AS o ON o.id = v.o{order}")


def _read(db: sqlite3.Connection) -> Facts:
    def rows(sql: str, *args: str) -> list:
        return db.execute(sql, args).fetchall()

    def pairs(view: str, value: str = "term") -> list:
        return _pairs(db, view, value).fetchall()

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


def _page(db: sqlite3.Connection, facts: Facts) -> Facts:
    types: dict[str, set[str]] = {}
    values: dict[str, dict[str, list[str]]] = {}
    tops: set[str] = set()
    type_code, top_of, has_top = (SHOWN_CODES.index(p) for p in (RDF + "type", SKOS + "topConceptOf", SKOS + "hasTopConcept"))
    for node, what, value in db.execute(f"SELECT {_key('t')}, shown.what, shown.value FROM shown JOIN term AS t ON t.id = shown.node ORDER BY shown.rowid"):
        if what == type_code:
            types.setdefault(node, set()).add(value)
        elif what == top_of:
            tops.add(node)
        elif what == has_top:
            tops.add(value)
        else:
            values.setdefault(node, {}).setdefault(SHOWN_CODES[what], []).append(value)
    broader: dict[str, set[str]] = {}
    for s, o in _pairs(db, "broader"):
        broader.setdefault(s, set()).add(o)
    labels: dict[str, set[str]] = {}
    prefs: dict[str, set[str]] = {}
    for view, into in (("pref_label", prefs), ("alt_label", None)):
        for s, o in _pairs(db, view, "term_row"):
            labels.setdefault(s, set()).add(o)
            if into is not None:
                into.setdefault(s, set()).add(o)
    years: dict[str, int] = {}
    for s, o in _pairs(db, "year", "term_row"):
        try:
            years[s] = int(o[:4])
        except ValueError:
            pass  # as the parse: a malformed year is left out
    scores, mentions, first = _links(db)
    return replace(
        facts,
        years={p: y for p, y in years.items() if p in facts.papers},
        broader={c: tuple(sorted(bs)) for c, bs in broader.items()},
        scores=scores,
        mentions=mentions,
        first_mentions=first,
        labels={c: frozenset(ns) for c, ns in labels.items()},
        pref_labels={c: frozenset(ns) for c, ns in prefs.items()},
        identifiers={o: s for s, o in _pairs(db, "identifier", "term_row", ordered=True)},
        authors=frozenset(s for s, k in types.items() if FOAF + "Person" in k),
        venues=frozenset(s for s, k in types.items() if FABIO + "ConferenceProceedings" in k),
        versions=frozenset(o for (o,) in db.execute("SELECT o.value FROM scheme_version AS v JOIN term_row AS o ON o.id = v.o")),
        umbrellas=frozenset(s for s, k in types.items() if KG + "Umbrella" in k),
        tops=frozenset(tops),
        types=types,
        values=values,
        dois=dict(_pairs(db, "doi", "term_row", ordered=True)),
    )


def _links(db: sqlite3.Connection) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int], dict[tuple[str, str], Mention]]:
    """Per (paper, concept): the best kg:score, the number of annotations, the first mention (kg.graph.annotations.Links)."""
    scores: dict[tuple[str, str], float] = {}
    for paper, concept, score in db.execute(
            f"SELECT {_key('p')}, {_key('c')}, s.value FROM scored JOIN term AS p ON p.id = scored.paper "
            "JOIN term AS c ON c.id = scored.body JOIN term_row AS s ON s.id = scored.score"):
        key = (paper, concept)
        scores[key] = max(scores.get(key, float("-inf")), float(score))
    mentions: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], Mention] = {}
    for paper, concept, start, exact, on in db.execute(
            f"SELECT {_key('p')}, {_key('c')}, st.value, ex.value, COALESCE(op.value, '') FROM mention AS m "
            "JOIN term AS p ON p.id = m.paper JOIN term AS c ON c.id = m.body JOIN term_row AS st ON st.id = m.start "
            "JOIN term_row AS ex ON ex.id = m.exact LEFT JOIN on_property AS v ON v.s = m.target "
            "LEFT JOIN term_row AS op ON op.id = v.o"):
        key = (paper, concept)
        mentions[key] = mentions.get(key, 0) + 1
        mention = (int(start), exact, on)
        old = first.get(key)
        if old is None or (on, mention[0], exact) < (old[2], old[0], old[1]):
            first[key] = mention
    for key in scores:
        mentions.setdefault(key, 1)  # an annotation with no position selector (kg writes none)
    return scores, mentions, first
