-- search.rq in the query index (kg.qindex), for :words: the same columns, rows and order.
-- text.body is each paper's LCASE(CONCAT(COALESCE(?title, ""), " ", ?abstract)); the FTS5 trigram index
-- finds the texts holding every trigram of the lowercased phrase (:words_match; NULL under three
-- characters: every text), and instr() keeps those that contain it. listing.pos: the ORDER BY. The paper's terms
-- come inline (NAME__type, NAME__value: kg.qindex).
WITH hit(id) AS (
  SELECT rowid FROM fts WHERE :words_match IS NOT NULL AND fts MATCH :words_match
  UNION ALL
  SELECT id FROM text WHERE :words_match IS NULL
)
SELECT tp.type AS paper__type, tp.value AS paper__value, ti.type AS identifier__type, ti.value AS identifier__value,
       tl.type AS label__type, tl.value AS label__value, listing.year AS year, :words_term AS words
FROM hit
CROSS JOIN text ON text.id = hit.id
CROSS JOIN a ON a.s = text.paper AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
CROSS JOIN listing ON listing.paper = text.paper
CROSS JOIN term_row AS tp ON tp.id = listing.paper
CROSS JOIN term_row AS ti ON ti.id = listing.identifier
CROSS JOIN term_row AS tl ON tl.id = listing.label
WHERE instr(text.body, :words_lower) > 0
ORDER BY listing.pos
