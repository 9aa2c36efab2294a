-- _concept-by-label.rq in the query index (kg.qindex): the concepts with a label equal to :key
-- case-insensitively (lowered: each label's STR() lowercased as the engine's LCASE does it).
SELECT pref_label.s AS concept, pref_label.o AS label, 'pref' AS kind__string
FROM lowered
CROSS JOIN pref_label ON pref_label.o = lowered.term
CROSS JOIN a ON a.s = pref_label.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://www.w3.org/2004/02/skos/core#Concept')
WHERE lowered.text = :key_lower
UNION ALL
SELECT alt_label.s AS concept, alt_label.o AS label, 'alt' AS kind__string
FROM lowered
CROSS JOIN alt_label ON alt_label.o = lowered.term
CROSS JOIN a ON a.s = alt_label.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://www.w3.org/2004/02/skos/core#Concept')
WHERE lowered.text = :key_lower
