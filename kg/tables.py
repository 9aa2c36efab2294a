"""Tables beside the persisted store (`tables.sqlite`) that answer the long listings without reading RocksDB row by row.

On disk pyoxigraph reads every value of every row with a RocksDB seek. At 100k papers that put
three listings over half a second however the SPARQL was shaped: papers-by-concept ("reinforcement
learning", 26k rows) 1.8 s, co-occurrence (52k rows) 1.3 s, proposed-methods (10k rows) 2.2 s;
pyoxigraph alone needs 0.45 s to read the 100k identifiers. The store folder therefore also holds an
SQLite file, made when the store is built and replaced with it, with two things in it:

* **answers**: every shipped SELECT query that needs no parameter, run by the engine with its
  defaults when the store is built, kept under a hash of the exact text that ran (twin and VALUES
  block included). `kg.query.run_store` reads the rows back when it is about to run that same
  text, so they are the engine's rows by construction.
* **listing**: tables of the facts kg.stats reads from the graph file anyway (subjects, broader,
  labels, years, identifiers, pair counts), from which `queries/NAME.sql` (beside `NAME.rq`) answers
  papers-by-concept, bridging-papers and co-occurrence for any parameter value. A recursive query
  gives the roll-up (`skos:broader*`, cycles included); integer positions give the portable
  queries' orders. Written only when those orders can be reproduced outside the engine: papers and
  concepts are IRIs, each paper has one identifier and one `xsd:string` label, each concept one
  prefLabel, and every year is a four-digit `xsd:gYear`; bridging-papers (MIN of labels) and
  co-occurrence (sorted by labels) also need every prefLabel in one datatype and language. The
  meta table names the queries the tables answer; any other runs in the engine as before.

Tests hold both to the portable queries' rows in order. Terms are stored once each (table `term`)
and rows as term ids, so an answer decodes each distinct term once. Measured at 100k papers: see
the README's scale section.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Mapping

from .resources import data_path
from .results import Results, Term
from .stats import pair_counts
from .vocabulary import DCTERMS, FABIO, RDFS, SKOS, XSD

FILE = "tables.sqlite"
_SCHEMA = (
    "CREATE TABLE term(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL, datatype TEXT, lang TEXT)",
    "CREATE TABLE answer(key TEXT PRIMARY KEY, variables TEXT NOT NULL, rows TEXT NOT NULL)",
    # the listing (present only when its conditions hold, see the module text)
    "CREATE TABLE paper(paper INTEGER NOT NULL, identifier INTEGER NOT NULL, label INTEGER NOT NULL, year INTEGER, position INTEGER NOT NULL)",
    # label_rank: the place of the label's string among all prefLabels (equal strings, equal ranks)
    "CREATE TABLE concept(concept INTEGER PRIMARY KEY, label INTEGER NOT NULL, position INTEGER NOT NULL, label_rank INTEGER)",
    "CREATE TABLE subject(paper INTEGER NOT NULL, concept INTEGER NOT NULL)",
    "CREATE TABLE broader(narrower INTEGER NOT NULL, broader INTEGER NOT NULL)",
    # papers: the count as a term (xsd:integer), n: as a number
    "CREATE TABLE pair(a INTEGER NOT NULL, b INTEGER NOT NULL, papers INTEGER NOT NULL, n INTEGER NOT NULL)",
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value)",
)
_INDEXES = (  # covering the listing's joins (100k papers, "reinforcement learning": 0.12 s -> 0.065 s)
    "CREATE INDEX term_value ON term(value)",
    "CREATE INDEX paper_paper ON paper(paper, position, identifier, label, year)",
    "CREATE INDEX subject_concept ON subject(concept, paper)",
    "CREATE INDEX broader_broader ON broader(broader, narrower)",
)
_YEAR = re.compile(r"[0-9]{4}")


def key(text: str) -> str:
    """The key of an answer: the hash of the query text that was run."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(path: Path, store, facts: dict[str, dict]) -> None:
    """Write the tables for a store (its default answers) and the facts of its graph file (the listing)."""
    from .atomic import scratch_sqlite
    from .catalog import catalog
    from .engine import final_text
    from .engine import run as run_store
    from .errors import KgError

    ids: dict[Term, int] = {}

    def tid(term: Term) -> int:
        return ids.setdefault(term, len(ids) + 1)

    with scratch_sqlite(path) as db:
        for statement in _SCHEMA:
            db.execute(statement)
        for q in catalog().values():  # the shipped queries
            if not any(p.required for p in q.params):
                try:
                    answer = run_store(store, q)
                except KgError:
                    continue  # it fails on this graph: it will fail the same way when asked
                if answer.kind == "select":
                    rows = [[None if t is None else tid(t) for t in row] for row in answer.rows]
                    db.execute("INSERT INTO answer VALUES (?, ?, ?)",
                               (key(final_text(store, q)), json.dumps(answer.variables), json.dumps(rows, separators=(",", ":"))))
        listing = _listing(facts)
        if listing is not None:
            tables, answers = listing
            for table, table_rows in tables.items():
                if table_rows:
                    db.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(table_rows[0]))})",
                                   ([tid(v) if isinstance(v, Term) else v for v in row] for row in table_rows))
            db.executemany("INSERT INTO meta VALUES (?, 1)", ((f"answers:{name}",) for name in answers))
        db.executemany("INSERT INTO term VALUES (?, ?, ?, ?, ?)", ((i, t.kind, t.value, t.datatype, t.lang) for t, i in ids.items()))
        for statement in _INDEXES:
            db.execute(statement)


def _listing(facts: dict[str, dict]) -> tuple[dict[str, list[tuple]], list[str]] | None:
    """Rows of the listing tables (terms as Terms, positions as ints) and the shipped queries they answer,
    or None when their order would not be the engine's."""
    import pyoxigraph as ox

    def one_string(values: set) -> Any:
        if len(values) == 1:
            (v,) = values
            if isinstance(v, ox.Literal) and not v.language and v.datatype.value == XSD + "string":
                return v
        return None

    subjects, broader = facts[DCTERMS + "subject"], facts[SKOS + "broader"]
    identifiers, labels, years = facts[DCTERMS + "identifier"], facts[RDFS + "label"], facts[FABIO + "hasPublicationYear"]
    pref = facts[SKOS + "prefLabel"]
    iris = [*subjects, *(c for cs in subjects.values() for c in cs), *broader, *(b for bs in broader.values() for b in bs), *pref]
    if not all(isinstance(t, ox.NamedNode) for t in iris):
        return None
    papers = [p for p in subjects if p in identifiers and p in labels]
    identifier, label = {p: one_string(identifiers[p]) for p in papers}, {p: one_string(labels[p]) for p in papers}
    if not all(identifier.values()) or not all(label.values()) or not all(len(v) == 1 for v in pref.values()):
        return None
    if not all(isinstance(y, ox.Literal) and y.datatype.value == XSD + "gYear" and _YEAR.fullmatch(y.value)
               for p in papers for y in years.get(p, ())):
        return None

    def term(t: Any) -> Term:
        return Term.from_oxigraph(t)

    # papers-by-concept orders by DESC(?year) ?label ?paper: unbound years last, then label and IRI strings
    # (the engine compares strings and IRIs by code point, as Python does).
    entries = [(p, y) for p in papers for y in (years.get(p) or (None,))]
    entries.sort(key=lambda e: (e[1] is None, -int(e[1].value) if e[1] is not None else 0, label[e[0]].value, e[0].value))
    paper_rows = [(term(p), term(identifier[p]), term(label[p]), None if y is None else term(y), i) for i, (p, y) in enumerate(entries)]
    # bridging-papers takes MIN of prefLabels: the engine orders labels of one datatype and language by their strings
    label_of = {c: next(iter(v)) for c, v in pref.items()}
    uniform = all(isinstance(v, ox.Literal) for v in label_of.values()) and len({(v.datatype.value, v.language) for v in label_of.values()}) <= 1
    rank = {text: i for i, text in enumerate(sorted({v.value for v in label_of.values()}))} if uniform else {}
    concept_rows = [(term(c), term(label_of[c]), i, rank.get(label_of[c].value)) for i, c in enumerate(sorted(pref, key=lambda c: c.value))]
    tables: dict[str, list[tuple]] = {
        "paper": paper_rows,
        "concept": concept_rows,
        "subject": [(term(p), term(c)) for p in papers for c in subjects[p]],
        "broader": [(term(n), term(b)) for n, bs in broader.items() for b in bs],
        "pair": [(term(a), term(b), Term("literal", str(n), XSD + "integer"), n) for (a, b), n in pair_counts(subjects).items()],
    }
    # bridging-papers and co-occurrence compare prefLabels: only when the ranks stand for the engine's order
    return tables, ["papers-by-concept", *(["bridging-papers", "co-occurrence"] if uniform else [])]


def answer(path: Path, name: str, text: str, terms: Mapping[str, Term], max_rows: int | None, *, listing: bool) -> Results | None:
    """The rows of the query `text` (query `name`, parameters `terms`) from the tables, None when they do not hold them;
    `listing`: `name` is the shipped query, so its `NAME.sql` may answer."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        found = db.execute("SELECT variables, rows FROM answer WHERE key = ?", (key(text),)).fetchone()
        if found is not None:
            variables, rows = tuple(json.loads(found[0])), json.loads(found[1])
        else:
            sql = data_path("queries") / f"{name}.sql"
            if not listing or not sql.is_file() or not db.execute("SELECT 1 FROM meta WHERE key = ?", (f"answers:{name}",)).fetchone():
                return None
            values = _sql_values(terms)
            if values is None:
                return None
            cursor = db.execute(sql.read_text(encoding="utf-8"), values)
            variables, rows = tuple(d[0] for d in cursor.description), cursor.fetchall()
        truncated = max_rows is not None and len(rows) > max_rows
        rows = rows[:max_rows] if truncated else rows
        return Results("select", variables, _decode(db, rows, terms), truncated=truncated, name=name)
    except sqlite3.Error:
        return None  # no tables (an older or damaged file): the engine answers
    finally:
        db.close()


def _sql_values(terms: Mapping[str, Term]) -> dict[str, Any] | None:
    """SQL parameters for bound terms: `:NAME` its value (an IRI's text, an xsd:integer's number) and
    `:NAME_term` the id that stands for the term itself in the answer; None for other terms."""
    out: dict[str, Any] = {}
    for i, (name, t) in enumerate(terms.items()):
        if t.kind == "uri":
            out[name] = t.value
        elif t.kind == "literal" and t.datatype == XSD + "integer" and re.fullmatch(r"[+-]?[0-9]+", t.value):
            out[name] = int(t.value)
        else:
            return None
        out[f"{name}_term"] = -1 - i
    return out


def _decode(db: sqlite3.Connection, rows: list, bound: Mapping[str, Term]) -> tuple[tuple[Term | None, ...], ...]:
    """Rows of term ids as rows of Terms, each distinct term read once (negative ids: the bound terms, see _sql_values)."""
    wanted = list({i for row in rows for i in row if i is not None and i > 0})
    terms: dict[int | None, Term | None] = {None: None, **{-1 - i: t for i, t in enumerate(bound.values())}}
    for i, kind, value, datatype, lang in db.execute(
            "SELECT id, kind, value, datatype, lang FROM term WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(wanted),)):
        terms[i] = Term(kind, value, datatype, lang)
    get = terms.__getitem__
    return tuple(tuple(map(get, row)) for row in rows)
