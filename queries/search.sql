-- search.rq in the query index (kg.qindex), for :words: the same columns, rows and order.
-- text.body is each paper's LCASE(CONCAT(COALESCE(?title, ""), " ", ?abstract)); the FTS5 trigram index
-- finds the texts holding every trigram of the lowercased phrase (:words_match; NULL under three
-- characters: every text), and instr() keeps those that contain it.
WITH hit(id) AS (
  SELECT rowid FROM fts WHERE :words_match IS NOT NULL AND fts MATCH :words_match
  UNION ALL
  SELECT id FROM text WHERE :words_match IS NULL
)
SELECT text.paper AS paper, identifier.o AS identifier, label.o AS label, year.o AS year, :words_term AS words
FROM hit
CROSS JOIN text ON text.id = hit.id
CROSS JOIN a ON a.s = text.paper AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
CROSS JOIN identifier ON identifier.s = text.paper
CROSS JOIN label ON label.s = text.paper
LEFT JOIN year ON year.s = text.paper
LEFT JOIN term AS ty ON ty.id = year.o
CROSS JOIN term AS tl ON tl.id = label.o
CROSS JOIN term AS tp ON tp.id = text.paper
CROSS JOIN term AS ti ON ti.id = identifier.o
WHERE instr(text.body, :words_lower) > 0
ORDER BY ty.value DESC, tl.value, tp.value, ti.value
