-- top-concepts.rq in the query index (kg.qindex): the same columns, rows and order.
-- concept_count: per concept the resources about it (direct) and about it or a concept below it (total).
SELECT cc.concept AS concept, pref_label.o AS label, COALESCE(cc.direct, 0) AS papers__integer, cc.total AS total__integer
FROM concept_count AS cc
CROSS JOIN pref_label ON pref_label.s = cc.concept
CROSS JOIN term AS tl ON tl.id = pref_label.o
CROSS JOIN term AS tc ON tc.id = cc.concept
ORDER BY papers__integer DESC, total__integer DESC, tl.value, tc.value
