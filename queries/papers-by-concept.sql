-- papers-by-concept.rq in the query index (kg.qindex), for :concept (an IRI): the same columns, rows and order.
-- below: skos:broader* up to the concept (UNION, not UNION ALL: a cycle ends); listed (kg.qbuild): a row per
-- paper, subject and prefLabel of it, numbered (seq) in the order DESC(?year) STR(?label) STR(?paper) STR(?via)
-- STR(?viaLabel) STR(?identifier), so the roll-up reads the rows of its concepts in that order.
WITH RECURSIVE below(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :concept
  UNION
  SELECT broader.s FROM broader JOIN below ON broader.o = below.c
)
SELECT :concept_term AS concept, paper, identifier, label, year, concept AS via, name AS viaLabel
FROM listed
WHERE +concept IN below
ORDER BY seq
