-- related-concepts.rq in the query index (kg.qindex), for :concept (an IRI, or none) and :min (an integer).
SELECT x.o AS concept, lx.o AS conceptLabel, y.o AS related, ly.o AS relatedLabel, weight.o AS papers,
       jaccard.o AS jaccard, pmi.o AS pmi, :min_term AS min
FROM a AS link
CROSS JOIN concept AS x ON x.s = link.s
CROSS JOIN concept AS y ON y.s = link.s AND y.o != x.o
CROSS JOIN weight ON weight.s = link.s
CROSS JOIN jaccard ON jaccard.s = link.s
CROSS JOIN pmi ON pmi.s = link.s
CROSS JOIN pref_label AS lx ON lx.s = x.o
CROSS JOIN pref_label AS ly ON ly.s = y.o
CROSS JOIN term AS tw ON tw.id = weight.o
CROSS JOIN term AS tx ON tx.id = x.o
CROSS JOIN term AS ty ON ty.id = y.o
CROSS JOIN term AS tlx ON tlx.id = lx.o
CROSS JOIN term AS tly ON tly.id = ly.o
CROSS JOIN term AS tj ON tj.id = jaccard.o
CROSS JOIN term AS tpmi ON tpmi.id = pmi.o
WHERE link.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'https://w3id.org/kg/ontology#Relatedness')
  AND CAST(tw.value AS INTEGER) >= :min
  AND (:concept IS NULL OR (tx.kind = 'uri' AND tx.value = :concept))
ORDER BY tlx.value, tx.value, CAST(tj.value AS REAL) DESC, CAST(tw.value AS INTEGER) DESC, tly.value, ty.value, CAST(tpmi.value AS REAL)
