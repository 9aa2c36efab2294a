-- co-occurrence.rq answered from the listing tables of kg.tables (SQLite), for :min (an integer).
--
-- Same columns, rows and order as co-occurrence.rq; used only by a persisted store whose tables can
-- answer it (all prefLabels of one datatype and language, so that their ranks order them as the
-- engine does). Values are term ids (table term; :min_term is the bound ?min). pair.n is the number
-- of papers about both concepts (kg.stats.pair_counts), pair.papers that number as a term.
SELECT pair.a AS a, ca.label AS aLabel, pair.b AS b, cb.label AS bLabel, pair.papers AS papers, :min_term AS min
FROM pair
JOIN concept AS ca ON ca.concept = pair.a
JOIN concept AS cb ON cb.concept = pair.b
WHERE pair.n >= :min
ORDER BY pair.n DESC, ca.label_rank, cb.label_rank, ca.position, cb.position
