-- evidence.rq in the query index (kg.qindex), for :paper and :concept (IRIs): the same columns, rows and order.
-- The mentioned concept is at or below :concept (skos:broader*: itself, or `above` reaches it).
SELECT has_source.o AS paper, :concept_term AS concept, has_body.o AS mentioned, pref_label.o AS label, start.o AS start,
       end_.o AS "end", exact.o AS exact, score.o AS score,
       CASE WHEN on_property.o IS NULL THEN 'abstract' ELSE 'title' END AS field__string
FROM term AS tp
JOIN has_source ON has_source.o = tp.id
JOIN has_target ON has_target.o = has_source.s
JOIN has_body ON has_body.s = has_target.s
JOIN score ON score.s = has_target.s
JOIN pref_label ON pref_label.s = has_body.o
JOIN has_selector AS position ON position.s = has_source.s
JOIN start ON start.s = position.o
JOIN end_ ON end_.s = position.o
JOIN has_selector AS quote ON quote.s = has_source.s
JOIN exact ON exact.s = quote.o
LEFT JOIN on_property ON on_property.s = has_source.s
JOIN term AS tm ON tm.id = has_body.o
JOIN term AS tst ON tst.id = start.o
JOIN term AS ten ON ten.id = end_.o
JOIN term AS tl ON tl.id = pref_label.o
JOIN term AS tx ON tx.id = exact.o
JOIN term AS tsc ON tsc.id = score.o
WHERE tp.kind = 'uri' AND tp.value = :paper
  AND ((tm.kind = 'uri' AND tm.value = :concept)
       OR EXISTS (SELECT 1 FROM above JOIN term ON term.id = above.a WHERE above.n = has_body.o AND term.kind = 'uri' AND term.value = :concept))
ORDER BY field__string, CAST(tst.str AS INTEGER), CAST(ten.str AS INTEGER), tm.str, tl.str, tx.str, CAST(tsc.str AS REAL)
