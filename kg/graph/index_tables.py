"""The query index's tables: those kept, those of one write, and those derived by SQL when an index is closed.

kg.graph.index_writer makes them (and says what they hold); kg.sparql.index and queries/NAME.sql read them. The derived tables
are made again after an update adds triples.
"""

from __future__ import annotations

TABLES = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)",
    # a term is a value and a type (kind, datatype, language: a graph has a handful), read through the view `term`
    "CREATE TABLE term_type(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, datatype TEXT, lang TEXT)",
    "CREATE TABLE term_row(id INTEGER PRIMARY KEY, type INTEGER NOT NULL, value TEXT NOT NULL)",
    "CREATE VIEW term(id, kind, value, datatype, lang) AS SELECT term_row.id, kind, value, datatype, lang FROM term_row "
    "JOIN term_type ON term_type.id = term_row.type",
    "CREATE TABLE triple(p INTEGER NOT NULL, s INTEGER NOT NULL, o INTEGER NOT NULL, PRIMARY KEY(p, s, o)) WITHOUT ROWID",
    "CREATE TABLE mention(paper INTEGER NOT NULL, target INTEGER NOT NULL, body INTEGER NOT NULL, score INTEGER NOT NULL, "
    "start INTEGER NOT NULL, end_ INTEGER NOT NULL, exact INTEGER NOT NULL)",
    "CREATE TABLE quote(body INTEGER NOT NULL, paper INTEGER NOT NULL, exact INTEGER NOT NULL)",
    # each annotation's (source, body, kg:score) once, with or without selectors: papers-by-concept's scores
    "CREATE TABLE scored(paper INTEGER NOT NULL, body INTEGER NOT NULL, score INTEGER NOT NULL, PRIMARY KEY(paper, body, score)) WITHOUT ROWID",
    "CREATE TABLE text(id INTEGER PRIMARY KEY, paper INTEGER NOT NULL, body TEXT NOT NULL)",
    "CREATE TABLE lowered(term INTEGER PRIMARY KEY, text TEXT NOT NULL)",
    "CREATE TABLE digest(paper INTEGER PRIMARY KEY, sha256 TEXT NOT NULL)",  # of each paper's abstract, for updates
    # what the pages show and no query reads as a term: node, what (kg.graph.index_writer.SHOWN_CODES), value as written;
    # its values (titles, abstracts) are no terms, so the writer holds none of them for look-ups (decision 0075)
    "CREATE TABLE shown(node INTEGER NOT NULL, what INTEGER NOT NULL, value TEXT NOT NULL)",
    # contentless, no positions: an AND of trigrams needs no more (the text table has the bodies)
    "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='trigram case_sensitive 1', detail='none', content='')",
    "CREATE INDEX triple_pos ON triple(p, o, s)",
    "CREATE INDEX term_value ON term_row(value)",
    "CREATE INDEX text_paper ON text(paper)",
    "CREATE INDEX lowered_text ON lowered(text)",
    "CREATE INDEX mention_paper ON mention(paper)",
    "CREATE INDEX quote_body ON quote(body, paper)",
)
STAGED = (
    "CREATE TEMP TABLE staged(p INTEGER NOT NULL, s INTEGER NOT NULL, o INTEGER NOT NULL)",
    "CREATE TEMP TABLE texts(paper INTEGER NOT NULL, abstract INTEGER NOT NULL, value TEXT, string INTEGER NOT NULL)",
    "CREATE TEMP TABLE quoted(body INTEGER NOT NULL, paper INTEGER NOT NULL, exact INTEGER NOT NULL)",  # a build's quotes, not yet distinct
)
# Made from the tables above, again after an update adds triples.
DERIVED = (
    "DROP TABLE IF EXISTS above", "DROP TABLE IF EXISTS rollup", "DROP TABLE IF EXISTS concept_count",
    "DROP TABLE IF EXISTS trend_count", "DROP TABLE IF EXISTS pair", "DROP TABLE IF EXISTS listing", "DROP TABLE IF EXISTS listed",
    "DROP TABLE IF EXISTS linked", "DROP TABLE IF EXISTS listed_term",
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
    "JOIN term AS ta ON ta.id = x.o JOIN term AS tb ON tb.id = y.o WHERE ta.value < tb.value GROUP BY x.o, y.o",
    # each resource with an identifier and a label, a row per identifier, label and year (or none), numbered in the
    # listings' order DESC(?year) STR(?label) STR(?paper) STR(?identifier) (pos), and without the identifier (rank)
    "CREATE TABLE listing(paper INTEGER NOT NULL, pos INTEGER NOT NULL, rank INTEGER NOT NULL, identifier INTEGER NOT NULL, "
    "label INTEGER NOT NULL, year INTEGER, PRIMARY KEY(paper, pos)) WITHOUT ROWID",
    "INSERT INTO listing SELECT i.s, ROW_NUMBER() OVER (ORDER BY ty.value DESC, tl.value, tp.value, ti.value, i.o, l.o, y.o), "
    "DENSE_RANK() OVER (ORDER BY ty.value DESC, tl.value, tp.value), i.o, l.o, y.o FROM identifier AS i JOIN label AS l ON l.s = i.s "
    "LEFT JOIN year AS y ON y.s = i.s LEFT JOIN term_row AS ty ON ty.id = y.o JOIN term AS tl ON tl.id = l.o "
    "JOIN term AS tp ON tp.id = i.s JOIN term AS ti ON ti.id = i.o",
    # each scored subject link to an IRI with a prefLabel (papers-by-concept's candidates): the paper's best kg:score
    # on it (the term, and its value), the concept's depth (skos:broader+ concepts above it), and the link's place among
    # the paper's links (pick) in the order the query prefers them: score, depth, STR(concept); top: the paper's first
    "CREATE TABLE linked(paper INTEGER NOT NULL, pick INTEGER NOT NULL, concept INTEGER NOT NULL, score INTEGER NOT NULL, value REAL NOT NULL, "
    "top INTEGER NOT NULL, PRIMARY KEY(paper, pick)) WITHOUT ROWID",
    "INSERT INTO linked SELECT paper, ROW_NUMBER() OVER w, concept, score, value, FIRST_VALUE(concept) OVER w FROM ("
    "SELECT subject.s AS paper, subject.o AS concept, best.score AS score, best.value AS value, COALESCE(d.n, 0) AS depth, "
    "tc.value AS name FROM subject JOIN term AS tc ON tc.id = subject.o AND tc.kind = 'uri' "
    "AND EXISTS (SELECT 1 FROM pref_label WHERE pref_label.s = subject.o) "
    "JOIN (SELECT paper, body, score, MAX(CAST(term_row.value AS REAL)) AS value FROM scored "
    "JOIN term_row ON term_row.id = scored.score GROUP BY paper, body) AS best ON best.paper = subject.s AND best.body = subject.o "
    "LEFT JOIN (SELECT n AS c, COUNT(*) AS n FROM above GROUP BY n) AS d ON d.c = subject.o"
    ") WINDOW w AS (PARTITION BY paper ORDER BY value DESC, depth DESC, name)",
    # papers-by-concept's rows for every such link, prefLabel of its concept and listing row of its paper,
    # numbered in the query's order (score, listing.rank, STR(?viaLabel), listing.pos): a roll-up keeps each paper's
    # first link below the concept asked for (pick, top) and reads the rows in seq order, with no sort
    "CREATE TABLE listed(seq INTEGER PRIMARY KEY, concept INTEGER NOT NULL, name INTEGER NOT NULL, paper INTEGER NOT NULL, "
    "identifier INTEGER NOT NULL, label INTEGER NOT NULL, year INTEGER, score INTEGER NOT NULL, pick INTEGER NOT NULL, top INTEGER NOT NULL)",
    "INSERT INTO listed SELECT ROW_NUMBER() OVER (ORDER BY linked.value DESC, listing.rank, tn.value, listing.pos, linked.pick), "
    "linked.concept, pref_label.o, listing.paper, listing.identifier, listing.label, listing.year, linked.score, linked.pick, "
    "linked.top FROM listing JOIN linked ON linked.paper = listing.paper JOIN pref_label ON pref_label.s = linked.concept "
    "JOIN term_row AS tn ON tn.id = pref_label.o",
    # the paper's terms of each listed row, inline and in seq order: the rows a roll-up keeps are read in order, page
    # after page (looked up in term_row, score order would read its pages at random: 0.07 s -> 0.23 s at 21k papers)
    "CREATE TABLE listed_term(seq INTEGER PRIMARY KEY, paper_type INTEGER NOT NULL, paper_value TEXT NOT NULL, "
    "identifier_type INTEGER NOT NULL, identifier_value TEXT NOT NULL, label_type INTEGER NOT NULL, label_value TEXT NOT NULL)",
    "INSERT INTO listed_term SELECT seq, tp.type, tp.value, ti.type, ti.value, tl.type, tl.value FROM listed "
    "CROSS JOIN term_row AS tp ON tp.id = listed.paper CROSS JOIN term_row AS ti ON ti.id = listed.identifier "
    "CROSS JOIN term_row AS tl ON tl.id = listed.label ORDER BY seq",
)
