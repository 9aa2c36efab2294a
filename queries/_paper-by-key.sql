-- _paper-by-key.rq in the query index (kg.qindex): the papers whose identifier or label is the string :key.
-- From the key's term outwards (CROSS JOIN keeps that order), once through each property.
SELECT :key_term AS key, identifier.s AS paper
FROM term AS k
CROSS JOIN identifier ON identifier.o = k.id
CROSS JOIN a ON a.s = identifier.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
WHERE k.kind = 'literal' AND k.value = :key AND k.datatype = 'http://www.w3.org/2001/XMLSchema#string'
UNION ALL
SELECT :key_term AS key, label.s AS paper
FROM term AS k
CROSS JOIN label ON label.o = k.id
CROSS JOIN a ON a.s = label.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
WHERE k.kind = 'literal' AND k.value = :key AND k.datatype = 'http://www.w3.org/2001/XMLSchema#string'
