-- evidence.rq in the query index (kg.qindex), for :paper and :concept (IRIs): the same columns, rows and order.
-- The mentioned concept is at or below :concept (skos:broader*: itself, or `above` reaches it); the span is the
-- title's where the annotation's target has kg:onProperty.
SELECT m.paper AS paper, :concept_term AS concept, m.body AS mentioned, pref_label.o AS label, m.start AS start,
       m.end_ AS "end", m.exact AS exact, m.score AS score,
       CASE WHEN on_property.o IS NULL THEN 'abstract' ELSE 'title' END AS field__string
FROM term AS tp
CROSS JOIN mention AS m ON m.paper = tp.id
CROSS JOIN pref_label ON pref_label.s = m.body
LEFT JOIN on_property ON on_property.s = m.target
CROSS JOIN term AS tm ON tm.id = m.body
CROSS JOIN term AS tst ON tst.id = m.start
CROSS JOIN term AS ten ON ten.id = m.end_
CROSS JOIN term AS tl ON tl.id = pref_label.o
CROSS JOIN term AS tx ON tx.id = m.exact
CROSS JOIN term AS tsc ON tsc.id = m.score
WHERE tp.kind = 'uri' AND tp.value = :paper
  AND ((tm.kind = 'uri' AND tm.value = :concept)
       OR EXISTS (SELECT 1 FROM above JOIN term ON term.id = above.a WHERE above.n = m.body AND term.kind = 'uri' AND term.value = :concept))
ORDER BY field__string, CAST(tst.value AS INTEGER), CAST(ten.value AS INTEGER), tm.value, tl.value, tx.value, CAST(tsc.value AS REAL)
