-- _concept-labels.rq in the query index (kg.qindex): every label of every skos:Concept.
SELECT x.s AS concept, x.o AS label, x.kind AS kind__string
FROM (SELECT s, o, 'pref' AS kind FROM pref_label UNION ALL SELECT s, o, 'alt' AS kind FROM alt_label) AS x
JOIN a ON a.s = x.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://www.w3.org/2004/02/skos/core#Concept')
