"""The query index of a graph: one SQLite file beside it that answers the named queries having `queries/NAME.sql`.

`graphs/x.ttl` gets `graphs/x.kg-query.sqlite`, written by `kg build`, `kg build --update` and
`kg analyze` from the triples they hold in memory (a graph without one gets it from a parse of the
file when a named query first needs it). It is stamped with the graph's stamp (kg.index: size,
modification time, a hash of its tail), kg's version and `SCHEMA`; any other stamp makes it stale,
and a stale index is never read.

What it holds, all derived from the graph's default graph:

* `term`: every term used below, once (kind, value, datatype, language; `str` is what SPARQL's
  STR() gives, NULL for a blank node);
* `triple`: the triples of the predicates in `PREDICATES` (rdf:type only for `TYPES`), as term ids,
  read through one view per predicate (`subject`, `broader`, `pref_label`, …), so each NAME.sql
  reads like its NAME.rq;
* the aggregates the counting queries need, made by SQL from those tables (`above`: skos:broader+;
  `rollup`: each resource and every concept at or above its subjects; `concept_count`,
  `trend_count`, `pair`);
* `text` and `fts`: each paper's "title abstract" as search.rq builds it, lowercased as the query
  engine lowercases (`lowercase`), and an FTS5 trigram index of it; `lowered`: every concept
  label lowercased, for the label lookups.

The dispatch rule (`answer`): a shipped named query (its text as shipped) whose `NAME.sql` exists
runs in SQL when the index is fresh; anything else goes to the engine. SQL output columns are term
ids, except `NAME__integer` / `NAME__string` (computed values) and the bound parameters
(`:NAME_term`, a negative id). The order is the .rq's ORDER BY on STR() keys: SQLite compares
TEXT by UTF-8 bytes, which is code point order, as the engines compare strings, and NULLs sort
first as unbound values do. tests/test_qindex.py holds every NAME.sql to its NAME.rq.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .catalog import NamedQuery, bind
from .defaults import VERSION
from .errors import KgError
from .index import stamp
from .resources import data_path
from .results import Results, Term
from .vocabulary import DCTERMS, FABIO, KG, OA, RDF, RDFS, SKOS, XSD

SUFFIX = ".kg-query.sqlite"
SCHEMA = 1  # raised when the tables change: an index of another schema is stale

# view name -> predicate: the triples kept (a NAME.sql reads the views)
PREDICATES: dict[str, str] = {
    "a": RDF + "type", "pref_label": SKOS + "prefLabel", "alt_label": SKOS + "altLabel", "broader": SKOS + "broader",
    "label": RDFS + "label", "identifier": DCTERMS + "identifier", "subject": DCTERMS + "subject",
    "year": FABIO + "hasPublicationYear", "proposes": KG + "proposes", "has_body": OA + "hasBody",
    "has_target": OA + "hasTarget", "has_source": OA + "hasSource", "has_selector": OA + "hasSelector",
    "exact": OA + "exact", "start": OA + "start", "end_": OA + "end", "score": KG + "score", "on_property": KG + "onProperty",
    "size": KG + "size", "member": KG + "member", "pagerank": KG + "pagerank", "concept": KG + "concept",
    "weight": KG + "weight", "jaccard": KG + "jaccard", "pmi": KG + "pmi", "paper": KG + "paper", "cosine": KG + "cosine",
    "shared_concepts": KG + "sharedConcepts",
}
TYPES = frozenset({SKOS + "Concept", FABIO + "ResearchPaper", KG + "Community", KG + "Relatedness", KG + "Similarity"})
_STRINGS = (XSD + "string", RDF + "langString")
_READ = frozenset({*PREDICATES.values(), DCTERMS + "title", DCTERMS + "abstract"})

_TABLES = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE term(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL, datatype TEXT, lang TEXT, str TEXT)",
    "CREATE TABLE triple(p INTEGER NOT NULL, s INTEGER NOT NULL, o INTEGER NOT NULL, PRIMARY KEY(p, s, o)) WITHOUT ROWID",
    "CREATE TABLE text(id INTEGER PRIMARY KEY, paper INTEGER NOT NULL, body TEXT NOT NULL)",
    "CREATE TABLE lowered(term INTEGER PRIMARY KEY, text TEXT NOT NULL)",
    # contentless, no positions: an AND of trigrams needs no more (the text table has the bodies)
    "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='trigram case_sensitive 1', detail='none', content='')",
)
# Made from the tables above, again after an update adds triples.
_DERIVED = (
    "DROP TABLE IF EXISTS above", "DROP TABLE IF EXISTS rollup", "DROP TABLE IF EXISTS concept_count",
    "DROP TABLE IF EXISTS trend_count", "DROP TABLE IF EXISTS pair",
    # skos:broader+ from every term with a broader concept (cycles end: UNION keeps each pair once)
    "CREATE TABLE above(n INTEGER NOT NULL, a INTEGER NOT NULL, PRIMARY KEY(n, a)) WITHOUT ROWID",
    "INSERT INTO above WITH RECURSIVE up(n, a) AS (SELECT s, o FROM broader UNION SELECT up.n, b.o FROM up JOIN broader AS b ON b.s = up.a) "
    "SELECT n, a FROM up",
    # each resource with a subject, and every concept at or above its subjects (skos:broader*)
    "CREATE TABLE rollup(concept INTEGER NOT NULL, paper INTEGER NOT NULL, PRIMARY KEY(concept, paper)) WITHOUT ROWID",
    "INSERT OR IGNORE INTO rollup SELECT o, s FROM subject UNION SELECT above.a, subject.s FROM subject JOIN above ON above.n = subject.o",
    "CREATE TABLE concept_count(concept INTEGER PRIMARY KEY, total INTEGER NOT NULL, direct INTEGER)",
    "INSERT INTO concept_count SELECT concept, COUNT(*), NULL FROM rollup GROUP BY concept",
    "UPDATE concept_count SET direct = d.n FROM (SELECT o, COUNT(DISTINCT s) AS n FROM subject GROUP BY o) AS d WHERE d.o = concept_count.concept",
    "CREATE TABLE trend_count(concept INTEGER NOT NULL, year INTEGER NOT NULL, n INTEGER NOT NULL)",
    "INSERT INTO trend_count SELECT rollup.concept, year.o, COUNT(DISTINCT rollup.paper) FROM rollup JOIN year ON year.s = rollup.paper "
    "GROUP BY rollup.concept, year.o",
    "CREATE INDEX trend_concept ON trend_count(concept)",
    # co-occurrence.rq's pairs: STR(?a) < STR(?b)
    "CREATE TABLE pair(a INTEGER NOT NULL, b INTEGER NOT NULL, n INTEGER NOT NULL)",
    "INSERT INTO pair SELECT x.o, y.o, COUNT(DISTINCT x.s) FROM subject AS x JOIN subject AS y ON y.s = x.s "
    "JOIN term AS ta ON ta.id = x.o JOIN term AS tb ON tb.id = y.o WHERE ta.str < tb.str GROUP BY x.o, y.o",
)
_INDEXES = (
    "CREATE INDEX triple_pos ON triple(p, o, s)",
    "CREATE INDEX term_value ON term(value)",
    "CREATE INDEX text_paper ON text(paper)",
)


def index_path(graph: str | Path) -> Path:
    """Where the query index of a graph file lives: beside it, `x.ttl` -> `x.kg-query.sqlite`."""
    graph = Path(graph)
    return graph.with_name(graph.stem + SUFFIX)


def _stamp(graph: Path, graph_stamp: dict) -> str:
    import json

    return json.dumps({"graph": graph_stamp, "kg": VERSION, "schema": SCHEMA}, sort_keys=True)


def fresh(graph: str | Path) -> Path | None:
    """The index of a graph file when it was made from the file as it is now, else None."""
    graph, path = Path(graph), index_path(graph)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, OSError):
        return None
    try:
        found = db.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
        return path if found is not None and found[0] == _stamp(graph, stamp(graph)) else None
    except (sqlite3.Error, OSError):
        return None
    finally:
        db.close()


def ensure(graph: str | Path) -> Path | None:
    """The fresh index of a graph file, made from a parse of it when missing or stale; None when it cannot be made."""
    from .graphio import parse

    graph = Path(graph)
    found = fresh(graph)
    if found is not None or not graph.is_file():
        return found
    if sys.stderr.isatty():
        print(f"kg: indexing {graph} for the named queries (once per version of the graph)…", file=sys.stderr, flush=True)
    try:
        before = stamp(graph)
        return write(graph, parse(graph), before)
    except KgError:
        return None  # not a readable graph: the engine gives the message


def write(graph: str | Path, triples: Iterable, graph_stamp: dict | None, *, base: Path | None = None) -> Path | None:
    """Write the index of `graph` from its triples (`graph_stamp`: the graph file's stamp as written); None if not written.

    `base`: a fresh index of the graph before triples were appended to it; only `triples` (the
    appended ones) are then added to a copy of it. Best effort: the index only saves time, so a
    folder that takes the graph but not the index must not fail the build.
    """
    import shutil

    if graph_stamp is None:
        return None
    graph = Path(graph)
    target = index_path(graph)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
    except OSError:
        return None
    try:
        if base is not None:
            shutil.copyfile(base, tmp)
        db = sqlite3.connect(tmp)
        try:
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            _fill(db, triples, new=base is None)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (_stamp(graph, graph_stamp),))
            db.commit()
        finally:
            db.close()
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        return target
    except (OSError, sqlite3.Error):
        Path(tmp).unlink(missing_ok=True)
        return None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def kept(triples: Iterable, into: list) -> Iterator:
    """The triples, passed on, with those the index reads appended to `into` (a build writes and indexes in one pass)."""
    for t in triples:
        if t.predicate.value in _READ:
            into.append(t)
        yield t


def _fill(db: sqlite3.Connection, triples: Iterable, *, new: bool) -> None:
    """Add the triples' rows (to new tables, or to a copy of an index), then make the derived tables."""
    import pyoxigraph as ox

    if new:
        for statement in _TABLES:
            db.execute(statement)
        for code, (view, iri) in enumerate(PREDICATES.items(), start=1):
            db.execute(f"CREATE VIEW {view}(s, o) AS SELECT s, o FROM triple WHERE p = {code}")
            db.execute("INSERT INTO meta VALUES (?, ?)", (f"predicate:{iri}", str(code)))
    code_of = {iri: code for code, iri in enumerate(PREDICATES.values(), start=1)}
    known: dict[tuple, int] = {}
    for i, kind, value, datatype, lang in db.execute("SELECT id, kind, value, datatype, lang FROM term"):
        known[(kind, value, datatype, lang)] = i
    ids: dict[Any, int] = {}  # pyoxigraph term -> id (a term is converted once)
    fresh_terms: list[tuple] = []

    scratch, here, value = ox.Store(), ox.NamedNode("urn:kg:term"), ox.NamedNode("urn:kg:value")

    def tid(term: Any) -> int:
        found = ids.get(term)
        if found is None:
            t = Term.from_oxigraph(_stored(scratch, here, value, term) if _typed(term) else term)
            key = (t.kind, t.value, t.datatype, t.lang)
            found = known.get(key)
            if found is None:
                found = known[key] = len(known) + 1
                fresh_terms.append((found, *key, None if t.kind == "bnode" else t.value))
            ids[term] = found
        return found

    rows: list[tuple[int, int, int]] = []
    texts: dict[Any, tuple[list, list]] = defaultdict(lambda: ([], []))
    a, title, abstract = code_of[RDF + "type"], DCTERMS + "title", DCTERMS + "abstract"
    for t in triples:
        if not isinstance(getattr(t, "graph_name", ox.DefaultGraph()), ox.DefaultGraph):
            continue  # the queries read the default graph
        p = t.predicate.value
        kept_as = code_of.get(p)
        if kept_as is not None:
            if kept_as != a or t.object.value in TYPES:
                rows.append((kept_as, tid(t.subject), tid(t.object)))
        elif p == abstract or p == title:
            texts[t.subject][p == abstract].append(t.object)
    labels = {o for code, _, o in rows if code in (code_of[SKOS + "prefLabel"], code_of[SKOS + "altLabel"])}
    db.executemany("INSERT OR IGNORE INTO triple VALUES (?, ?, ?)", rows)
    # search.rq's text: LCASE(CONCAT(COALESCE(?title, ""), " ", ?abstract)) for each title and abstract
    bodies: list[tuple[int, str]] = []
    for paper, (titles, abstracts) in texts.items():
        for head in titles or [None]:
            if head is not None and not _string(head):
                continue  # CONCAT fails on it: search.rq skips the row
            bodies.extend((tid(paper), f"{head.value if head is not None else ''} {ab.value}") for ab in abstracts if _string(ab))
    db.executemany("INSERT INTO term VALUES (?, ?, ?, ?, ?, ?)", fresh_terms)
    start = db.execute("SELECT COALESCE(MAX(id), 0) FROM text").fetchone()[0] + 1
    lowered = lowercase([b for _, b in bodies])
    db.executemany("INSERT INTO text VALUES (?, ?, ?)", ((start + i, p, body) for i, ((p, _), body) in enumerate(zip(bodies, lowered))))
    db.executemany("INSERT INTO fts(rowid, body) VALUES (?, ?)", ((start + i, _nul_free(body)) for i, body in enumerate(lowered)))
    label_terms = sorted(labels - {i for (i,) in db.execute("SELECT term FROM lowered")})
    label_text = dict(db.execute("SELECT id, str FROM term WHERE id IN (SELECT value FROM json_each(?))", (str(label_terms),)))
    strings = [label_text[i] or "" for i in label_terms]
    db.executemany("INSERT INTO lowered VALUES (?, ?)", zip(label_terms, lowercase(strings)))
    if new:
        for statement in _INDEXES:
            db.execute(statement)
    for statement in _DERIVED:
        db.execute(statement)
    db.execute("INSERT INTO fts(fts) VALUES('optimize')")
    db.execute("ANALYZE")  # statistics for the planner: without them it drove co-occurrence from every label (0.7 s for 143 rows)


def _typed(term: Any) -> bool:
    """True for a literal of a datatype other than the strings (a number, a year …)."""
    datatype = getattr(term, "datatype", None)
    return datatype is not None and datatype.value not in _STRINGS


def _stored(store: Any, here: Any, value: Any, term: Any) -> Any:
    """The term as the engine stores it: typed values in their canonical form (0.010690 is 0.01069), as the engine answers."""
    import pyoxigraph as ox

    store.add(ox.Quad(here, value, term))
    (quad,) = store.quads_for_pattern(here, value, None)
    store.remove(quad)
    return quad.object


def _string(term: Any) -> bool:
    """True for a literal CONCAT takes (a plain, xsd:string or language-tagged string)."""
    datatype = getattr(term, "datatype", None)
    return datatype is not None and datatype.value in _STRINGS


def _nul_free(text: str) -> str:
    """NUL as U+FFFD: FTS5 stops tokenizing at a NUL and refuses one in a query (the same on both sides)."""
    return text.replace("\x00", "\ufffd")


def lowercase(texts: list[str]) -> list[str]:
    """Each text lowercased as the query engine's LCASE does it.

    pyoxigraph follows a newer Unicode than Python's str.lower (55 characters differ), so only ASCII
    texts are lowered in Python; the others are lowered by pyoxigraph itself, in one query.
    """
    out = [t.lower() if t.isascii() else None for t in texts]
    todo = [i for i, t in enumerate(out) if t is None]
    if todo:
        import pyoxigraph as ox

        store = ox.Store()
        p = ox.NamedNode("urn:kg:text")
        store.extend([ox.Quad(ox.NamedNode(f"urn:kg:{i}"), p, ox.Literal(texts[i])) for i in todo])
        solutions: Any = store.query("SELECT ?s (LCASE(?o) AS ?l) WHERE { ?s <urn:kg:text> ?o }")
        for row in solutions:
            out[int(row[0].value[7:])] = row[1].value
    return [t if t is not None else "" for t in out]


# ---- answering ------------------------------------------------------------------------------------------------


@cache
def _shipped(name: str) -> tuple[str | None, str | None]:
    """The text of the shipped `NAME.rq` and of its `NAME.sql` (None where kg ships none)."""
    folder = data_path("queries")
    rq, sql = folder / f"{name}.rq", folder / f"{name}.sql"
    return (rq.read_text(encoding="utf-8") if rq.is_file() else None, sql.read_text(encoding="utf-8") if sql.is_file() else None)


def answers(q: NamedQuery) -> bool:
    """True when the query is a shipped one, as shipped (not a user's file that shares its name), with a NAME.sql."""
    text, sql = _shipped(q.name)
    return sql is not None and text == q.text


def answer(index: Path, q: NamedQuery, params: Mapping[str, Any] | None = None, *, max_rows: int | None = None) -> Results:
    """Run a query that `answers` on a fresh index (kg.query checks both): its parameters bound as the engine binds them."""
    db = sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True)
    try:
        terms = bind(q, dict(params or {}), lambda name, bound: _run(db, name, _internal(name), bound, None))
        return _run(db, q.name, _shipped(q.name)[1] or "", terms, max_rows, [p.name for p in q.params])
    finally:
        db.close()


@cache
def _internal(name: str) -> str:
    return (data_path("queries") / f"_{name}.sql").read_text(encoding="utf-8")


def _run(db: sqlite3.Connection, name: str, sql: str, terms: Mapping[str, Term], max_rows: int | None, declared: Iterable[str] = ()) -> Results:
    values: dict[str, Any] = {p: None for p in declared} | {f"{p}_term": None for p in declared}
    for i, (key, t) in enumerate(terms.items()):
        values[f"{key}_term"] = -1 - i
        if t.kind == "literal" and t.datatype == XSD + "integer":
            values[key] = int(t.value)
        else:
            values[key] = t.value
        if t.kind == "literal":
            (lowered,) = lowercase([t.value])
            values[f"{key}_lower"] = lowered
            phrase = _nul_free(lowered)
            grams = sorted({phrase[k : k + 3] for k in range(len(phrase) - 2)})
            values[f"{key}_match"] = " AND ".join('"' + g.replace('"', '""') + '"' for g in grams) or None
    cursor = db.execute(sql, values)
    columns = [d[0] for d in cursor.description]
    rows = cursor.fetchmany(max_rows + 1) if max_rows is not None else cursor.fetchall()
    truncated = max_rows is not None and len(rows) > max_rows
    rows = rows[:max_rows] if truncated else rows
    variables = tuple(c.split("__")[0] for c in columns)
    return Results("select", variables, _decode(db, columns, rows, list(terms.values())), truncated=truncated, name=name)


def _decode(db: sqlite3.Connection, columns: list[str], rows: list, bound: list[Term]) -> tuple[tuple[Term | None, ...], ...]:
    """Rows of term ids (and typed values) as rows of Terms, each distinct term read once."""
    typed = {i: XSD + c.split("__")[1] for i, c in enumerate(columns) if "__" in c}
    ids = list({v for row in rows for i, v in enumerate(row) if i not in typed and v is not None and v > 0})
    terms: dict[Any, Term | None] = {None: None, **{-1 - i: t for i, t in enumerate(bound)}}
    for i, kind, value, datatype, lang in db.execute(
            "SELECT id, kind, value, datatype, lang FROM term WHERE id IN (SELECT value FROM json_each(?))", (str(ids),)):
        terms[i] = Term(kind, value, datatype, lang)
    if not typed:
        get = terms.__getitem__
        return tuple(tuple(map(get, row)) for row in rows)
    literal: dict[tuple[Any, str], Term] = {}

    def conv(i: int, v: Any) -> Term | None:
        if i not in typed:
            return terms[v]
        if v is None:
            return None
        key = (v, typed[i])
        if key not in literal:
            literal[key] = Term("literal", str(v), typed[i])
        return literal[key]

    return tuple(tuple(conv(i, v) for i, v in enumerate(row)) for row in rows)
