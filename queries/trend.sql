-- trend.rq in the query index (kg.qindex), for :concept (an IRI, or none): the same columns, rows and order.
-- trend_count: per concept and year, the resources of that year about it or a concept below it.
SELECT t.concept AS concept, pref_label.o AS label, t.year AS year, t.n AS papers__integer
FROM trend_count AS t
CROSS JOIN pref_label ON pref_label.s = t.concept
CROSS JOIN term AS tl ON tl.id = pref_label.o
CROSS JOIN term AS tc ON tc.id = t.concept
CROSS JOIN term AS ty ON ty.id = t.year
WHERE :concept IS NULL OR t.concept = (SELECT id FROM term WHERE kind = 'uri' AND value = :concept)
ORDER BY tl.value, tc.value, ty.value
