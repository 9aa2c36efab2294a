-- communities.rq in the query index (kg.qindex), for :min (an integer): the same columns, rows and order.
SELECT c.s AS community, label.o AS label, size.o AS size, member.o AS member, pref_label.o AS memberLabel,
       pagerank.o AS pagerank, :min_term AS min
FROM a AS c
CROSS JOIN label ON label.s = c.s
CROSS JOIN size ON size.s = c.s
CROSS JOIN member ON member.s = c.s
CROSS JOIN pref_label ON pref_label.s = member.o
LEFT JOIN pagerank ON pagerank.s = member.o
CROSS JOIN term AS ts ON ts.id = size.o
CROSS JOIN term AS tc ON tc.id = c.s
LEFT JOIN term_row AS tr ON tr.id = pagerank.o
CROSS JOIN term AS tml ON tml.id = pref_label.o
CROSS JOIN term AS tm ON tm.id = member.o
CROSS JOIN term AS tl ON tl.id = label.o
WHERE c.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'https://w3id.org/kg/ontology#Community')
  AND CAST(ts.value AS INTEGER) >= :min
ORDER BY CAST(ts.value AS INTEGER) DESC, tc.value, CAST(tr.value AS REAL) DESC, tml.value, tm.value, tl.value
