-- co-occurrence.rq in the query index (kg.qindex), for :min (an integer): the same columns, rows and order.
-- pair: per pair of concepts with STR(a) < STR(b), the number of resources about both (made with the index).
SELECT pair.a AS a, la.o AS aLabel, pair.b AS b, lb.o AS bLabel, pair.n AS papers__integer, :min_term AS min
FROM pair
CROSS JOIN pref_label AS la ON la.s = pair.a
CROSS JOIN pref_label AS lb ON lb.s = pair.b
CROSS JOIN term AS tla ON tla.id = la.o
CROSS JOIN term AS tlb ON tlb.id = lb.o
CROSS JOIN term AS ta ON ta.id = pair.a
CROSS JOIN term AS tb ON tb.id = pair.b
WHERE pair.n >= :min
ORDER BY pair.n DESC, tla.value, tlb.value, ta.value, tb.value
