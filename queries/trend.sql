-- trend.rq in the query index (kg.qindex), for :concept (an IRI, or none): the same columns, rows and order.
-- trend_count: per concept and year, the resources of that year about it or a concept below it; total: per year,
-- every resource of that year. share: ROUND(10000 * papers / yearPapers) / 10000 in integers (SPARQL rounds halves
-- up), written as the engine writes an xsd:decimal (no trailing zeros, "1" and "0" whole).
WITH total(year, n) AS (SELECT o, COUNT(DISTINCT s) FROM year GROUP BY o),
rows AS (
  SELECT t.concept, pref_label.o AS label, t.year, t.n, total.n AS year_n, (20000 * t.n + total.n) / (2 * total.n) AS k,
         tl.value AS label_value, tc.value AS concept_value, ty.value AS year_value
  FROM trend_count AS t
  CROSS JOIN total ON total.year = t.year
  CROSS JOIN pref_label ON pref_label.s = t.concept
  CROSS JOIN term AS tl ON tl.id = pref_label.o
  CROSS JOIN term AS tc ON tc.id = t.concept
  CROSS JOIN term AS ty ON ty.id = t.year
  WHERE :concept IS NULL OR t.concept = (SELECT id FROM term WHERE kind = 'uri' AND value = :concept)
)
SELECT concept, label, year, n AS papers__integer, year_n AS yearPapers__integer,
       CASE WHEN k % 10000 = 0 THEN CAST(k / 10000 AS TEXT)
            ELSE CAST(k / 10000 AS TEXT) || '.' || rtrim(printf('%04d', k % 10000), '0') END AS share__decimal
FROM rows
ORDER BY year_value, n DESC, label_value, concept_value
