-- proposed-methods.rq in the query index (kg.qindex): the same columns, rows and order.
WITH found AS (
  SELECT DISTINCT proposes.s AS paper, identifier.o AS identifier, year.o AS year, label.o AS method, exact.o AS evidence
  FROM proposes
  JOIN identifier ON identifier.s = proposes.s
  JOIN label ON label.s = proposes.o
  JOIN has_body ON has_body.o = proposes.o
  JOIN has_target ON has_target.s = has_body.s
  JOIN has_source ON has_source.s = has_target.o AND has_source.o = proposes.s
  JOIN has_selector ON has_selector.s = has_target.o
  JOIN exact ON exact.s = has_selector.o
  LEFT JOIN year ON year.s = proposes.s
)
SELECT found.paper AS paper, found.identifier AS identifier, found.year AS year, found.method AS method, found.evidence AS evidence,
       (SELECT COUNT(DISTINCT subject.o) FROM subject WHERE subject.s = found.paper) AS concepts__integer
FROM found
JOIN term AS tm ON tm.id = found.method
JOIN term AS tp ON tp.id = found.paper
JOIN term AS te ON te.id = found.evidence
LEFT JOIN term AS ty ON ty.id = found.year
JOIN term AS ti ON ti.id = found.identifier
ORDER BY tm.str, tp.str, te.str, ty.str, ti.str
