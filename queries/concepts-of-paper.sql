-- concepts-of-paper.rq in the query index (kg.qindex), for :paper (an IRI): the same columns, rows and order.
SELECT has_source.o AS paper, has_body.o AS concept, pref_label.o AS label, score.o AS score,
       CASE WHEN EXISTS (SELECT 1 FROM subject WHERE subject.s = has_source.o AND subject.o = has_body.o) THEN 'true' ELSE 'false' END
         AS subject__boolean,
       start.o AS start, end_.o AS "end", exact.o AS exact
FROM term AS tp
JOIN has_source ON has_source.o = tp.id
JOIN has_target ON has_target.o = has_source.s
JOIN has_body ON has_body.s = has_target.s
JOIN score ON score.s = has_target.s
JOIN has_selector AS position ON position.s = has_source.s
JOIN start ON start.s = position.o
JOIN end_ ON end_.s = position.o
JOIN has_selector AS quote ON quote.s = has_source.s
JOIN exact ON exact.s = quote.o
JOIN pref_label ON pref_label.s = has_body.o
JOIN term AS tsc ON tsc.id = score.o
JOIN term AS tl ON tl.id = pref_label.o
JOIN term AS tst ON tst.id = start.o
JOIN term AS ten ON ten.id = end_.o
JOIN term AS tc ON tc.id = has_body.o
JOIN term AS tx ON tx.id = exact.o
WHERE tp.kind = 'uri' AND tp.value = :paper
ORDER BY CAST(tsc.str AS REAL) DESC, tl.str, CAST(tst.str AS INTEGER), CAST(ten.str AS INTEGER), tc.str, tx.str
