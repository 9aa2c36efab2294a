-- proposed-methods.rq in the query index (kg.qindex): the same columns, rows and order.
-- quote: each annotation's body, the paper its target is on, and the quoted text.
WITH found AS (
  SELECT DISTINCT proposes.s AS paper, identifier.o AS identifier, year.o AS year, label.o AS method, quote.exact AS evidence
  FROM proposes
  CROSS JOIN identifier ON identifier.s = proposes.s
  CROSS JOIN label ON label.s = proposes.o
  CROSS JOIN quote ON quote.body = proposes.o AND quote.paper = proposes.s
  LEFT JOIN year ON year.s = proposes.s
)
SELECT found.paper AS paper, found.identifier AS identifier, found.year AS year, found.method AS method, found.evidence AS evidence,
       (SELECT COUNT(DISTINCT subject.o) FROM subject WHERE subject.s = found.paper) AS concepts__integer
FROM found
CROSS JOIN term AS tm ON tm.id = found.method
CROSS JOIN term AS tp ON tp.id = found.paper
CROSS JOIN term AS te ON te.id = found.evidence
LEFT JOIN term_row AS ty ON ty.id = found.year
CROSS JOIN term AS ti ON ti.id = found.identifier
ORDER BY tm.value, tp.value, te.value, ty.value, ti.value
