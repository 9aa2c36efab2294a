-- concepts-of-paper.rq in the query index (kg.qindex), for :paper (an IRI): the same columns, rows and order.
-- mention: the annotations joined (body, target, source, position and quote selectors, score).
SELECT m.paper AS paper, m.body AS concept, pref_label.o AS label, m.score AS score,
       CASE WHEN EXISTS (SELECT 1 FROM subject WHERE subject.s = m.paper AND subject.o = m.body) THEN 'true' ELSE 'false' END
         AS subject__boolean,
       m.start AS start, m.end_ AS "end", m.exact AS exact
FROM term AS tp
CROSS JOIN mention AS m ON m.paper = tp.id
CROSS JOIN pref_label ON pref_label.s = m.body
CROSS JOIN term AS tsc ON tsc.id = m.score
CROSS JOIN term AS tl ON tl.id = pref_label.o
CROSS JOIN term AS tst ON tst.id = m.start
CROSS JOIN term AS ten ON ten.id = m.end_
CROSS JOIN term AS tc ON tc.id = m.body
CROSS JOIN term AS tx ON tx.id = m.exact
WHERE tp.kind = 'uri' AND tp.value = :paper
ORDER BY CAST(tsc.value AS REAL) DESC, tl.value, CAST(tst.value AS INTEGER), CAST(ten.value AS INTEGER), tc.value, tx.value
