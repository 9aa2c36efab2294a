-- _concept-by-label.rq in the query index (kg.qindex): the concepts with a label equal to :key
-- case-insensitively (lowered: each label's STR() lowercased as the engine's LCASE does it).
SELECT x.s AS concept, x.o AS label, x.kind AS kind__string
FROM (SELECT s, o, 'pref' AS kind FROM pref_label UNION ALL SELECT s, o, 'alt' AS kind FROM alt_label) AS x
JOIN lowered ON lowered.term = x.o
JOIN a ON a.s = x.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://www.w3.org/2004/02/skos/core#Concept')
WHERE lowered.text = :key_lower
