-- search.rq in the query index (kg.qindex), for :words: the same columns, rows and order.
-- text.body is each paper's LCASE(CONCAT(COALESCE(?title, ""), " ", ?abstract)); the FTS5 trigram index
-- finds the texts holding every trigram of the lowercased phrase (:words_match; NULL under three
-- characters: every text), and instr() keeps those that contain it. listing.pos: the ORDER BY.
WITH hit(id) AS (
  SELECT rowid FROM fts WHERE :words_match IS NOT NULL AND fts MATCH :words_match
  UNION ALL
  SELECT id FROM text WHERE :words_match IS NULL
)
SELECT listing.paper AS paper, listing.identifier AS identifier, listing.label AS label, listing.year AS year, :words_term AS words
FROM hit
CROSS JOIN text ON text.id = hit.id
CROSS JOIN a ON a.s = text.paper AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
CROSS JOIN listing ON listing.paper = text.paper
WHERE instr(text.body, :words_lower) > 0
ORDER BY listing.pos
