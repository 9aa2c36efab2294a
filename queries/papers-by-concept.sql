-- papers-by-concept.rq in the query index (kg.qindex), for :concept (an IRI): the same columns, rows and order.
-- below: skos:broader* up to the concept (UNION, not UNION ALL: a cycle ends); listed (kg.qbuild): a row per
-- paper, subject and prefLabel of it, numbered (seq) in the order DESC(?year) STR(?label) STR(?paper) STR(?via)
-- STR(?viaLabel) STR(?identifier), so the roll-up reads the rows of its concepts in that order. The paper's
-- terms come inline (NAME__type, NAME__value: kg.qindex), not as ids to look up again.
WITH RECURSIVE below(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :concept
  UNION
  SELECT broader.s FROM broader JOIN below ON broader.o = below.c
)
SELECT :concept_term AS concept, tp.type AS paper__type, tp.value AS paper__value, ti.type AS identifier__type,
       ti.value AS identifier__value, tl.type AS label__type, tl.value AS label__value, year, concept AS via, name AS viaLabel
FROM listed
CROSS JOIN term_row AS tp ON tp.id = listed.paper
CROSS JOIN term_row AS ti ON ti.id = listed.identifier
CROSS JOIN term_row AS tl ON tl.id = listed.label
WHERE +concept IN below
ORDER BY seq
