-- _paper-by-key.rq in the query index (kg.qindex): the papers whose identifier or label is the string :key.
SELECT :key_term AS key, x.s AS paper
FROM (SELECT s, o FROM identifier UNION ALL SELECT s, o FROM label) AS x
JOIN a ON a.s = x.s AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
WHERE x.o IN (SELECT id FROM term WHERE kind = 'literal' AND value = :key AND datatype = 'http://www.w3.org/2001/XMLSchema#string')
