-- similar-papers.rq in the query index (kg.qindex), for :paper (an IRI, or none): the same columns, rows and order.
-- pairs: the kg:Similarity nodes to read, from the paper's own when one is given.
WITH pairs(node) AS (
  SELECT paper.s FROM term AS tq CROSS JOIN paper ON paper.o = tq.id
  WHERE :paper IS NOT NULL AND tq.kind = 'uri' AND tq.value = :paper
  UNION ALL
  SELECT a.s FROM a WHERE :paper IS NULL AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'https://w3id.org/kg/ontology#Similarity')
)
SELECT x.o AS paper, lx.o AS paperLabel, y.o AS similar, ly.o AS similarLabel, cosine.o AS score, shared_concepts.o AS sharedConcepts
FROM pairs
CROSS JOIN a AS pair ON pair.s = pairs.node
  AND pair.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'https://w3id.org/kg/ontology#Similarity')
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
WHERE :paper IS NULL OR (tx.kind = 'uri' AND tx.value = :paper)
ORDER BY tx.value, CAST(tc.value AS REAL) DESC, tly.value, ty.value, tlx.value, CAST(tsh.value AS INTEGER)
