-- similar-papers.rq in the query index (kg.qindex), for :paper (an IRI, or none): the same columns, rows and order.
SELECT x.o AS paper, lx.o AS paperLabel, y.o AS similar, ly.o AS similarLabel, cosine.o AS score, shared_concepts.o AS sharedConcepts
FROM a AS pair
CROSS JOIN paper AS x ON x.s = pair.s
CROSS JOIN paper AS y ON y.s = pair.s AND y.o != x.o
CROSS JOIN cosine ON cosine.s = pair.s
CROSS JOIN shared_concepts ON shared_concepts.s = pair.s
CROSS JOIN label AS lx ON lx.s = x.o
CROSS JOIN label AS ly ON ly.s = y.o
CROSS JOIN term AS tx ON tx.id = x.o
CROSS JOIN term AS ty ON ty.id = y.o
CROSS JOIN term AS tly ON tly.id = ly.o
CROSS JOIN term AS tc ON tc.id = cosine.o
CROSS JOIN term AS tlx ON tlx.id = lx.o
CROSS JOIN term AS tsh ON tsh.id = shared_concepts.o
WHERE pair.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'https://w3id.org/kg/ontology#Similarity')
  AND (:paper IS NULL OR (tx.kind = 'uri' AND tx.value = :paper))
ORDER BY tx.value, CAST(tc.value AS REAL) DESC, tly.value, ty.value, tlx.value, CAST(tsh.value AS INTEGER)
