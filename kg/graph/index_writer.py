"""Making the query index of a graph (kg.graph.index_file): from triples as they stream past, into a temporary file renamed into place.

A `Writer` takes the triples one at a time (a build hands them over as it serializes them, so none is kept in memory),
stores the rows the named queries read, and on `close` makes the derived tables and publishes the file. What it holds:
* `term`: each term the answers can name, once (kind, value, datatype, language; a view over `term_row`'s value and
  type and `term_type`'s kinds, datatypes and languages, so an answer reads a string and a small integer); typed
  literals as the engine stores them (0.010690 is 0.01069), so answers are term for term the engine's;
* `triple`: the triples of `PREDICATES` (rdf:type only for `TYPES`) as term ids, read through one view per predicate
  (`subject`, `broader`, `pref_label`, …), so each NAME.sql reads like its NAME.rq;
* `mention`, `quote` and `scored`: the Web Annotations joined (body, target, source, selectors, score, span, quote;
  `scored` only source, body and score); the annotation nodes themselves get ids from a hash of their IRI and no term
  row, since no query names them (they are most of a graph's triples);
* made by SQL at the end: `above` (skos:broader+), `rollup` (each resource and every concept at or above its
  subjects), `concept_count`, `trend_count`, `pair`, `listing` (each paper's identifier, label and year, numbered in
  the order the paper listings sort on, so they read one row per paper and sort integers) `linked` (each subject link
  with its best score, and its place among the paper's links as papers-by-concept prefers them) and `listed`
  (papers-by-concept's rows for each link, numbered in its order, so a roll-up needs no sort);
* `shown`: what pages show of each node (`SHOWN_CODES`), as strings, not terms: no look-up holds the abstracts;
* `digest`: a hash of each paper's abstract, which with the views tells `kg build --update` what the graph holds
  (kg.graph.index_file.known);
* `text` and `fts`: each paper's "title abstract" as search.rq builds it, lowercased as the engine lowercases
  (kg.graph.index_file.lowercase), with an FTS5 trigram index; `lowered`: every concept label lowercased.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from kg.graph.annotations import Annotated
from kg.graph.facts import SHOWN, UNSHOWN_TYPES, digest, english
from kg.graph.index_file import index_path, lowercase, nul_free, stamp_text
from kg.graph.index_tables import DERIVED, STAGED, TABLES
from kg.graph.terms import Term
from kg.graph.vocabulary import BIBO, DCTERMS, FABIO, FOAF, KG, OA, PROV, RDF, RDFS, SKOS, XSD

TYPE = RDF + "type"
# view name -> predicate: the triples kept (a NAME.sql reads the views)
PREDICATES: dict[str, str] = {
    "a": TYPE, "pref_label": SKOS + "prefLabel", "alt_label": SKOS + "altLabel", "broader": SKOS + "broader",
    "label": RDFS + "label", "identifier": DCTERMS + "identifier", "subject": DCTERMS + "subject",
    "year": FABIO + "hasPublicationYear", "proposes": KG + "proposes", "on_property": KG + "onProperty",
    "size": KG + "size", "member": KG + "member", "pagerank": KG + "pagerank", "concept": KG + "concept",
    "weight": KG + "weight", "jaccard": KG + "jaccard", "pmi": KG + "pmi", "paper": KG + "paper", "cosine": KG + "cosine",
    "shared_concepts": KG + "sharedConcepts", "scheme_version": KG + "schemeVersion", "part_of": DCTERMS + "isPartOf",
    "doi": BIBO + "doi",
}
# the types kept: the queries' and those an update reads (kg.graph.index_file.known: builds, authors, venues)
TYPES = frozenset({SKOS + "Concept", FABIO + "ResearchPaper", KG + "Community", KG + "Relatedness", KG + "Similarity",
                   PROV + "Activity", FOAF + "Person", FABIO + "ConferenceProceedings"})
# The annotation predicates, staged and joined into `mention` and `quote`; True: the object is an annotation node too.
ANNOTATION = {OA + "hasBody": False, OA + "hasTarget": True, OA + "hasSource": False, OA + "hasSelector": True,
              OA + "exact": False, OA + "start": False, OA + "end": False, KG + "score": False}
NODE_SUBJECT = frozenset({*ANNOTATION, KG + "onProperty"})  # predicates whose subject is an annotation node
STRINGS = (XSD + "string", RDF + "langString")
TITLE, ABSTRACT = DCTERMS + "title", DCTERMS + "abstract"
# `shown`'s codes (places here): kg.graph.facts.SHOWN's values, rdf:type but the annotations', top concepts (0075)
SHOWN_CODES = (TYPE, SKOS + "topConceptOf", SKOS + "hasTopConcept", *sorted(SHOWN))
BATCH = 50_000
WRITING_CACHE, JOINING_CACHE = -32768, -262144  # SQLite's page caches (KiB) while rows go in, and for the SQL at the end


def _node(term: Any) -> int:
    """The id of an annotation node: a hash of its IRI, above every term id (no query names these nodes, so they get
    no term row). A 61-bit hash, stable within the process that writes (an update's new nodes join only each other)."""
    return hash(term.value) & _MASK | _HIGH


_MASK, _HIGH = (1 << 60) - 1, 1 << 60
# What Writer.add does with a triple, by its predicate: stage it (its object an annotation node, or a term), keep it as
# a row of `triple` (its subject an annotation node, or a term), or keep it as a text for search.
_STAGED_NODE, _STAGED, _ROW_NODE, _ROW, _TEXT = object(), object(), object(), object(), object()


class Writer:
    """The query index of `graph`, written from triples handed to `add` and a build's whole annotations handed to
    `annotation`; `base`: a fresh index of the graph before triples were appended to it (only the appended ones are
    then added, to a copy of it)."""

    def __init__(self, graph: str | Path, base: Path | None = None) -> None:
        import pyoxigraph as ox

        self.graph, self.target = Path(graph), index_path(graph)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent)
        os.close(fd)
        self.failed: BaseException | None = None
        try:
            if base is not None:
                shutil.copyfile(base, self.tmp)
            self.db = sqlite3.connect(self.tmp)
            self.db.execute("PRAGMA journal_mode=OFF")
            self.db.execute("PRAGMA synchronous=OFF")
            self.db.execute("PRAGMA temp_store=FILE")
            self.db.execute(f"PRAGMA cache_size={WRITING_CACHE}")
            if base is None:
                for statement in TABLES:
                    self.db.execute(statement)
                for code, view in enumerate(PREDICATES, start=1):
                    self.db.execute(f"CREATE VIEW {view}(s, o) AS SELECT s, o FROM triple WHERE p = {code}")
            for statement in STAGED:
                self.db.execute(statement)
            self.db.execute(f"PRAGMA temp.cache_size={WRITING_CACHE}")
        except BaseException:
            self.abort()
            raise
        self.code = {iri: i for i, iri in enumerate(PREDICATES.values(), start=1)}
        self.staged_code = {iri: i for i, iri in enumerate(ANNOTATION)}
        # what add does with each predicate it reads, and the code it stores it under
        self.how: dict[str, tuple[object, int]] = {TITLE: (_TEXT, 0), ABSTRACT: (_TEXT, 0)}
        self.how.update((iri, (_ROW_NODE if iri in NODE_SUBJECT else _ROW, code)) for iri, code in self.code.items())
        self.how.update((iri, (_STAGED_NODE if node else _STAGED, self.staged_code[iri])) for iri, node in ANNOTATION.items())
        self.shown_code = {iri: code for code, iri in enumerate(SHOWN_CODES)}
        self.shown: list[tuple[int, int, str]] = []
        self.pending = 0
        self.ids: dict[tuple, int] = {}
        self.fast: dict[Any, int] = {}  # the same, by pyoxigraph term (no conversion for a term seen before)
        self.next_id = 1 + self.db.execute("SELECT COALESCE(MAX(id), 0) FROM term_row").fetchone()[0]
        self.types = {tuple(row): i for i, *row in self.db.execute("SELECT id, kind, datatype, lang FROM term_type")}
        self.known = base is not None  # terms may be in the copied table already
        self.terms: list[tuple] = []
        self.rows: list[tuple[int, int, int]] = []
        self.staged: list[tuple[int, int, int]] = []
        self.texts: list[tuple[int, int, str, int]] = []
        self.mentions: list[tuple[int, ...]] = []  # a build's annotations' rows (`annotation`)
        self.quoted: list[tuple[int, int, int]] = []
        self.scored: list[tuple[int, int, int]] = []
        self.on_property = self.code[KG + "onProperty"]
        self.here, self.value = ox.NamedNode("urn:kg:term"), ox.NamedNode("urn:kg:value")
        self.default, self.triple, self.blank = ox.DefaultGraph, ox.Triple, ox.BlankNode

    def tid(self, term: Any) -> int:
        """The id of a term, added to the term table if new."""
        found = self.fast.get(term)
        if found is None:
            found = self.fast[term] = self._tid(term)
        return found

    def _tid(self, term: Any) -> int:
        t = Term.from_oxigraph(self._stored(term) if getattr(term, "datatype", None) is not None else term)
        key = (t.kind, t.value, t.datatype, t.lang)
        found = self.ids.get(key)
        if found is None and self.known:
            row = self.db.execute("SELECT id FROM term WHERE value = ? AND kind = ? AND datatype IS ? AND lang IS ?",
                                  (t.value, t.kind, t.datatype, t.lang)).fetchone()
            found = row[0] if row else None
        if found is None:
            found, self.next_id = self.next_id, self.next_id + 1
            kind = (t.kind, t.datatype, t.lang)
            if kind not in self.types:
                self.types[kind] = len(self.types) + 1
                self.db.execute("INSERT INTO term_type VALUES (?, ?, ?, ?)", (self.types[kind], *kind))
            self.terms.append((found, self.types[kind], t.value))
        self.ids[key] = found
        return found

    def _stored(self, term: Any) -> Any:
        """A literal as the engine stores it: typed values in their canonical form (0.010690 is 0.01069)."""
        if term.datatype.value in STRINGS:
            return term
        import pyoxigraph as ox

        # A fresh store each time (~17 µs): removing the quad from one long-lived store left a tombstone
        # that every later lookup stepped over, so the n-th literal cost O(n) (0.6 ms after 20,000).
        scratch = ox.Store()
        scratch.add(ox.Quad(self.here, self.value, term))
        (quad,) = scratch.quads_for_pattern(self.here, self.value, None)
        return quad.object

    def annotation(self, a: Annotated) -> None:
        """One annotation of a build, whole: its `mention`, `quote` and `scored` rows (and its kg:onProperty row) from
        its terms, the rows the SQL of `_finish` joins from its triples, term ids given in the order `add` would give
        them. At 21k papers this spares the builder 1.8M triples through `add` (decision 0074)."""
        if self.failed is not None:
            return
        try:
            tid = self.tid
            body, score, source, target = tid(a.body), tid(a.score), tid(a.source), _node(a.target)
            if a.on is not None:
                self.rows.append((self.on_property, target, tid(a.on)))
            start, end, exact = tid(a.start), tid(a.end), tid(a.exact)
            self.mentions.append((source, target, body, score, start, end, exact))
            self.quoted.append((body, source, exact))
            self.scored.append((source, body, score))
            self.pending += 1
            if self.pending >= BATCH:
                self._flush()
        except Exception as exc:  # as in add: the index only saves time
            self.failed = exc

    def add(self, t: Any) -> None:
        """Take one triple (or quad: only the default graph counts, as in the queries), or a build's annotation whole."""
        if self.failed is not None:
            return
        if type(t) is Annotated:
            return self.annotation(t)
        p = t.predicate.value
        how = self.how.get(p)  # one look-up says what to do with the triple: this runs for every triple of a build
        shown = self.shown_code.get(p)
        if how is None and shown is None:
            return
        if type(t) is not self.triple:
            graph = getattr(t, "graph_name", None)
            if graph is not None and not isinstance(graph, self.default):
                return
        try:
            if shown is not None:
                self._show(t, shown)
            if how is not None:
                self._keep(t, p, *how)
            if self.pending >= BATCH:
                self._flush()
        except Exception as exc:  # the index only saves time: a triple it cannot take must not fail the build
            self.failed = exc

    def _keep(self, t: Any, p: str, kind: object, code: int) -> None:
        """A row of `staged`, `texts` or `triple`, as `how` says for the triple's predicate."""
        if kind is _STAGED_NODE or kind is _STAGED:  # an annotation's triple: its object a node, or a term
            self.staged.append((code, _node(t.subject), _node(t.object) if kind is _STAGED_NODE else self.tid(t.object)))
        elif kind is _TEXT:  # a title or an abstract, for search
            o = t.object
            string = getattr(o, "datatype", None) is not None and o.datatype.value in STRINGS
            self.texts.append((self.tid(t.subject), p == ABSTRACT, o.value, string))
        else:  # one of PREDICATES
            if p == TYPE and t.object.value not in TYPES:
                return
            s = _node(t.subject) if kind is _ROW_NODE else self.tid(t.subject)
            self.rows.append((code, s, self.tid(t.object)))
        self.pending += 1

    def _show(self, t: Any, code: int) -> None:
        """A row of `shown`, by the rules of kg.graph.facts.of_triples: English or untagged values, no annotation type."""
        o = t.object
        if (code == 0 and o.value in UNSHOWN_TYPES) or not english(o):
            return
        value = "_:" + o.value if type(o) is self.blank else o.value
        self.shown.append((self.tid(t.subject), code, value))
        self.pending += 1

    def _flush(self) -> None:
        self.db.executemany("INSERT INTO term_row VALUES (?, ?, ?)", self.terms)
        self.db.executemany("INSERT OR IGNORE INTO triple VALUES (?, ?, ?)", self.rows)
        self.db.executemany("INSERT INTO staged VALUES (?, ?, ?)", self.staged)
        self.db.executemany("INSERT INTO texts VALUES (?, ?, ?, ?)", self.texts)
        self.db.executemany("INSERT INTO mention VALUES (?, ?, ?, ?, ?, ?, ?)", self.mentions)
        self.db.executemany("INSERT INTO quoted VALUES (?, ?, ?)", self.quoted)
        self.db.executemany("INSERT OR IGNORE INTO scored VALUES (?, ?, ?)", self.scored)
        self.db.executemany("INSERT INTO shown VALUES (?, ?, ?)", self.shown)
        self.terms, self.rows, self.staged, self.texts, self.shown, self.pending = [], [], [], [], [], 0
        self.mentions, self.quoted, self.scored = [], [], []
        if len(self.ids) > 40 * BATCH:
            self._forget()  # bounded memory: later terms are looked up in the table

    def _forget(self) -> None:
        """Let the term look-up dicts go (every term is in term_row): a later term is looked up there."""
        self.ids.clear()
        self.fast.clear()
        self.known = True

    def close(self, graph_stamp: dict | None) -> Path | None:
        """Make the derived tables and publish the index for the graph file with this stamp; None if it was not written."""
        try:
            if self.failed is not None or graph_stamp is None:
                raise OSError(str(self.failed))
            self._flush()
            self._forget()  # up to 2M terms each: gone before the SQL below fills its caches
            # 256 MB of pages each: the staged annotation rows are joined in hash order, all over the table
            self.db.execute(f"PRAGMA cache_size={JOINING_CACHE}")
            self.db.execute(f"PRAGMA temp.cache_size={JOINING_CACHE}")
            self._finish()
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (stamp_text(self.graph, graph_stamp),))
            self.db.commit()
            self.db.close()
            os.chmod(self.tmp, 0o644)
            os.replace(self.tmp, self.target)
            return self.target
        except (OSError, sqlite3.Error):
            self.abort()
            return None
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
        Path(self.tmp).unlink(missing_ok=True)

    def _finish(self) -> None:
        db, c = self.db, self.staged_code
        db.execute("CREATE INDEX temp.staged_pso ON staged(p, s, o)")  # covering: the joins below read only the index
        # The annotations joined (CROSS JOIN: SQLite keeps this order, from each annotation outwards; left to
        # itself it started from every target and every quote at once) as concepts-of-paper.rq and evidence.rq
        # read them (a row per position and quote selector) …
        db.execute(f"""INSERT INTO mention SELECT src.o, tgt.o, body.o, score.o, st.o, en.o, ex.o FROM staged AS body
            CROSS JOIN staged AS tgt ON tgt.p = {c[OA + 'hasTarget']} AND tgt.s = body.s
            CROSS JOIN staged AS score ON score.p = {c[KG + 'score']} AND score.s = body.s
            CROSS JOIN staged AS src ON src.p = {c[OA + 'hasSource']} AND src.s = tgt.o
            CROSS JOIN staged AS pos ON pos.p = {c[OA + 'hasSelector']} AND pos.s = tgt.o
            CROSS JOIN staged AS st ON st.p = {c[OA + 'start']} AND st.s = pos.o
            CROSS JOIN staged AS en ON en.p = {c[OA + 'end']} AND en.s = pos.o
            CROSS JOIN staged AS quo ON quo.p = {c[OA + 'hasSelector']} AND quo.s = tgt.o
            CROSS JOIN staged AS ex ON ex.p = {c[OA + 'exact']} AND ex.s = quo.o
            WHERE body.p = {c[OA + 'hasBody']}""")
        # … as papers-by-concept.rq reads their scores (no selector needed) …
        db.execute(f"""INSERT OR IGNORE INTO scored SELECT src.o, body.o, score.o FROM staged AS body
            CROSS JOIN staged AS tgt ON tgt.p = {c[OA + 'hasTarget']} AND tgt.s = body.s
            CROSS JOIN staged AS score ON score.p = {c[KG + 'score']} AND score.s = body.s
            CROSS JOIN staged AS src ON src.p = {c[OA + 'hasSource']} AND src.s = tgt.o
            WHERE body.p = {c[OA + 'hasBody']}""")
        # … and as proposed-methods.rq reads them (no score or position needed)
        db.execute(f"""INSERT INTO quote SELECT DISTINCT body.o, src.o, ex.o FROM staged AS body
            CROSS JOIN staged AS tgt ON tgt.p = {c[OA + 'hasTarget']} AND tgt.s = body.s
            CROSS JOIN staged AS src ON src.p = {c[OA + 'hasSource']} AND src.s = tgt.o
            CROSS JOIN staged AS quo ON quo.p = {c[OA + 'hasSelector']} AND quo.s = tgt.o
            CROSS JOIN staged AS ex ON ex.p = {c[OA + 'exact']} AND ex.s = quo.o
            WHERE body.p = {c[OA + 'hasBody']}""")
        db.execute("INSERT INTO quote SELECT DISTINCT body, paper, exact FROM quoted")  # (a build's, taken whole)
        self._texts()
        # every concept label lowercased, for the label lookups
        fresh = db.execute("""SELECT DISTINCT term.id, term.value FROM triple JOIN term ON term.id = triple.o
            WHERE triple.p IN (?, ?) AND term.id NOT IN (SELECT term FROM lowered)""",
                           (self.code[SKOS + "prefLabel"], self.code[SKOS + "altLabel"])).fetchall()
        db.executemany("INSERT INTO lowered VALUES (?, ?)", zip([i for i, _ in fresh], lowercase([v for _, v in fresh])))
        for statement in DERIVED:
            db.execute(statement)
        db.execute("INSERT INTO fts(fts) VALUES('optimize')")
        db.execute("ANALYZE")  # statistics for the planner: without them it drove co-occurrence from every label (0.7 s for 143 rows)

    def _texts(self) -> None:
        """search.rq's text of each paper: LCASE(CONCAT(COALESCE(?title, ""), " ", ?abstract)) for each title and abstract."""
        db = self.db
        start = db.execute("SELECT COALESCE(MAX(id), 0) FROM text").fetchone()[0] + 1
        papers = db.execute("SELECT paper, abstract, value, string FROM texts ORDER BY paper, abstract")
        bodies: list[tuple[int, str]] = []
        digests: list[tuple[int, str]] = []  # (paper, hash of an abstract): the last of a paper's is kept
        current: Any = None
        titles: list[tuple[str, int]] = []
        abstracts: list[tuple[str, int]] = []

        def emit() -> None:
            digests.extend((current, digest(value)) for value, _ in abstracts)
            for head, ok in titles or [("", 1)]:
                if ok:  # CONCAT fails on a title that is no string: search.rq skips the row
                    bodies.extend((current, f"{head} {value}") for value, good in abstracts if good)

        def store() -> int:
            lowered = lowercase([b for _, b in bodies])
            db.executemany("INSERT INTO text VALUES (?, ?, ?)", ((start + i, p, low) for i, ((p, _), low) in enumerate(zip(bodies, lowered))))
            db.executemany("INSERT INTO fts(rowid, body) VALUES (?, ?)", ((start + i, nul_free(low)) for i, low in enumerate(lowered)))
            db.executemany("INSERT OR REPLACE INTO digest VALUES (?, ?)", digests)
            done = len(bodies)
            bodies.clear()
            digests.clear()
            return done

        for paper, is_abstract, value, string in papers:
            if paper != current:
                emit()
                if len(bodies) >= 5000:
                    start += store()
                current, titles, abstracts = paper, [], []
            (abstracts if is_abstract else titles).append((value, string))
        emit()
        store()


def kept(triples: Iterable, writer: Writer | None) -> Iterator:
    """The triples, passed on, each also handed to `writer` (a build writes the graph and its index in one pass)."""
    for t in triples:
        if writer is not None:
            writer.add(t)
        yield t


def writer(graph: str | Path, base: Path | None = None) -> Writer | None:
    """A Writer for the index of `graph`, or None where it cannot be made (the index only saves time)."""
    try:
        return Writer(graph, base)
    except (OSError, sqlite3.Error):
        return None


def write(graph: str | Path, triples: Iterable, graph_stamp: dict | None, *, base: Path | None = None) -> Path | None:
    """Write the index of `graph` from its triples, a build's annotations among them whole (`graph_stamp`: the graph
    file's stamp as written); None if not written."""
    w = writer(graph, base)
    if w is None:
        return None
    try:
        for t in triples:
            w.add(t)
    except BaseException:
        w.abort()
        raise
    return w.close(graph_stamp)
