-- papers-by-concept.rq in the query index (kg.qindex), for :concept (an IRI): the same columns, rows and order.
-- below: skos:broader* up to the concept (UNION, not UNION ALL: a cycle ends).
WITH RECURSIVE below(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :concept
  UNION
  SELECT broader.s FROM broader JOIN below ON broader.o = below.c
)
SELECT :concept_term AS concept, subject.s AS paper, identifier.o AS identifier, label.o AS label, year.o AS year,
       subject.o AS via, pref_label.o AS viaLabel
FROM below
CROSS JOIN subject ON subject.o = below.c
CROSS JOIN identifier ON identifier.s = subject.s
CROSS JOIN label ON label.s = subject.s
CROSS JOIN pref_label ON pref_label.s = subject.o
LEFT JOIN year ON year.s = subject.s
LEFT JOIN term AS ty ON ty.id = year.o
CROSS JOIN term AS tl ON tl.id = label.o
CROSS JOIN term AS tp ON tp.id = subject.s
CROSS JOIN term AS tv ON tv.id = subject.o
CROSS JOIN term AS tn ON tn.id = pref_label.o
CROSS JOIN term AS ti ON ti.id = identifier.o
ORDER BY ty.value DESC, tl.value, tp.value, tv.value, tn.value, ti.value
