-- concept-tree.rq in the query index (kg.qindex), for :root (an IRI, or none): the same columns, rows and order.
-- above: skos:broader+ (depth counts it); concept_count.direct: the resources about the concept.
SELECT :root_term AS root, c.s AS concept, pl.o AS label, ob.o AS broader, ob.bl AS broaderLabel,
       (SELECT COUNT(*) FROM above WHERE above.n = c.s) AS depth__integer, COALESCE(cc.direct, 0) AS papers__integer
FROM a AS c
CROSS JOIN pref_label AS pl ON pl.s = c.s
LEFT JOIN (SELECT broader.s AS s, broader.o AS o, pref_label.o AS bl FROM broader JOIN pref_label ON pref_label.s = broader.o) AS ob
  ON ob.s = c.s
LEFT JOIN concept_count AS cc ON cc.concept = c.s
CROSS JOIN term AS tc ON tc.id = c.s
CROSS JOIN term AS tl ON tl.id = pl.o
LEFT JOIN term_row AS tb ON tb.id = ob.o
LEFT JOIN term_row AS tbl ON tbl.id = ob.bl
WHERE c.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://www.w3.org/2004/02/skos/core#Concept')
  AND (:root IS NULL OR c.s IN (SELECT id FROM term WHERE kind = 'uri' AND value = :root)
       OR EXISTS (SELECT 1 FROM above JOIN term ON term.id = above.a WHERE above.n = c.s AND term.kind = 'uri' AND term.value = :root))
ORDER BY depth__integer, tbl.value, tl.value, tc.value, tb.value
