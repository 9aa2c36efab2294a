-- co-occurrence.rq in the query index (kg.qindex), for :min and :nested (integers): the same columns, rows and order.
-- above: skos:broader+ from each concept (a pair with one above the other is left out unless :nested = 1).
-- pair: per pair of concepts with STR(a) < STR(b), the number of resources about both (made with the index).
SELECT pair.a AS a, la.o AS aLabel, pair.b AS b, lb.o AS bLabel, pair.n AS papers__integer, :min_term AS min, :nested_term AS nested
FROM pair
CROSS JOIN pref_label AS la ON la.s = pair.a
CROSS JOIN pref_label AS lb ON lb.s = pair.b
CROSS JOIN term AS tla ON tla.id = la.o
CROSS JOIN term AS tlb ON tlb.id = lb.o
CROSS JOIN term AS ta ON ta.id = pair.a
CROSS JOIN term AS tb ON tb.id = pair.b
WHERE pair.n >= :min
  AND (:nested = 1 OR (NOT EXISTS (SELECT 1 FROM above WHERE above.n = pair.a AND above.a = pair.b)
                       AND NOT EXISTS (SELECT 1 FROM above WHERE above.n = pair.b AND above.a = pair.a)))
ORDER BY pair.n DESC, tla.value, tlb.value, ta.value, tb.value
