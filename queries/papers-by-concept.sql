-- papers-by-concept.rq in the query index (kg.qindex), for :concept (an IRI): the same columns, rows and order.
-- below: skos:broader* up to the concept (UNION, not UNION ALL: a cycle ends); via: each of them with each
-- prefLabel, ranked by STR(?via) STR(?viaLabel); listing: each paper's identifier, label and year, ranked by
-- DESC(?year) STR(?label) STR(?paper) (rank) and then STR(?identifier) (pos).
WITH RECURSIVE below(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :concept
  UNION
  SELECT broader.s FROM broader JOIN below ON broader.o = below.c
),
via(c, name, rank) AS (
  SELECT below.c, pref_label.o, DENSE_RANK() OVER (ORDER BY tv.value, tn.value) FROM below
  CROSS JOIN pref_label ON pref_label.s = below.c JOIN term AS tv ON tv.id = below.c JOIN term AS tn ON tn.id = pref_label.o
)
SELECT :concept_term AS concept, listing.paper AS paper, listing.identifier AS identifier, listing.label AS label,
       listing.year AS year, via.c AS via, via.name AS viaLabel
FROM via
CROSS JOIN subject ON subject.o = via.c
CROSS JOIN listing ON listing.paper = subject.s
ORDER BY listing.rank, via.rank, listing.pos
