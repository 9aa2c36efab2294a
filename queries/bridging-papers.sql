-- bridging-papers.rq in the query index (kg.qindex), for :a and :b (IRIs): the same columns, rows and order.
-- Each side is skos:broader* up to its concept; aVia and bVia are the least prefLabels by their strings.
WITH RECURSIVE
below_a(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :a
  UNION
  SELECT broader.s FROM broader JOIN below_a ON broader.o = below_a.c
),
below_b(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :b
  UNION
  SELECT broader.s FROM broader JOIN below_b ON broader.o = below_b.c
),
side_a(paper, name, str) AS (
  SELECT DISTINCT subject.s, pref_label.o, term.value FROM below_a CROSS JOIN subject ON subject.o = below_a.c
  CROSS JOIN pref_label ON pref_label.s = subject.o JOIN term ON term.id = pref_label.o
),
side_b(paper, name, str) AS (
  SELECT DISTINCT subject.s, pref_label.o, term.value FROM below_b CROSS JOIN subject ON subject.o = below_b.c
  CROSS JOIN pref_label ON pref_label.s = subject.o JOIN term ON term.id = pref_label.o
),
least_a(paper, name) AS (SELECT paper, name FROM (SELECT paper, name, MIN(str) FROM side_a GROUP BY paper)),
least_b(paper, name) AS (SELECT paper, name FROM (SELECT paper, name, MIN(str) FROM side_b GROUP BY paper))
SELECT :a_term AS a, :b_term AS b, least_a.paper AS paper, identifier.o AS identifier, label.o AS label, year.o AS year,
       least_a.name AS aVia, least_b.name AS bVia
FROM least_a
CROSS JOIN least_b ON least_b.paper = least_a.paper
CROSS JOIN identifier ON identifier.s = least_a.paper
CROSS JOIN label ON label.s = least_a.paper
LEFT JOIN year ON year.s = least_a.paper
LEFT JOIN term AS ty ON ty.id = year.o
CROSS JOIN term AS tl ON tl.id = label.o
CROSS JOIN term AS tp ON tp.id = least_a.paper
CROSS JOIN term AS ti ON ti.id = identifier.o
ORDER BY ty.value DESC, tl.value, tp.value, ti.value
