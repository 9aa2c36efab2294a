-- bridging-papers.rq in the query index (kg.qindex), for :a and :b (IRIs): the same columns, rows and order.
-- Each side: skos:broader* up to its concept, each concept with its prefLabels; aVia and bVia are each paper's
-- least prefLabel by its string; listing.pos: the ORDER BY. unlikely(): always true, a hint against a Bloom filter
-- made at each step of the recursion (papers-by-concept.sql says more).
WITH RECURSIVE
below_a(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :a
  UNION
  SELECT broader.s FROM broader JOIN below_a ON broader.o = below_a.c AND unlikely(below_a.c IS NOT NULL)
),
below_b(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :b
  UNION
  SELECT broader.s FROM broader JOIN below_b ON broader.o = below_b.c AND unlikely(below_b.c IS NOT NULL)
),
name_a(c, name, str) AS (SELECT c, pref_label.o, term.value FROM below_a CROSS JOIN pref_label ON pref_label.s = c JOIN term ON term.id = pref_label.o),
name_b(c, name, str) AS (SELECT c, pref_label.o, term.value FROM below_b CROSS JOIN pref_label ON pref_label.s = c JOIN term ON term.id = pref_label.o),
least_a(paper, name) AS (SELECT paper, name FROM (SELECT subject.s AS paper, name, MIN(str) FROM name_a CROSS JOIN subject ON subject.o = c GROUP BY subject.s)),
least_b(paper, name) AS (SELECT paper, name FROM (SELECT subject.s AS paper, name, MIN(str) FROM name_b CROSS JOIN subject ON subject.o = c GROUP BY subject.s))
SELECT :a_term AS a, :b_term AS b, listing.paper AS paper, listing.identifier AS identifier, listing.label AS label,
       listing.year AS year, least_a.name AS aVia, least_b.name AS bVia
FROM least_a
CROSS JOIN least_b ON least_b.paper = least_a.paper
CROSS JOIN listing ON listing.paper = least_a.paper
ORDER BY listing.pos
