-- bridging-papers.rq answered from the listing tables of kg.tables (SQLite), for :a and :b (IRIs).
--
-- Same columns, rows and order as bridging-papers.rq; used only by a persisted store whose tables
-- can answer it (all prefLabels of one datatype and language, so that MIN compares their strings).
-- Values are term ids (table term). Each side is skos:broader* from its concept, then per paper the
-- prefLabel that comes first (SQLite takes the bare column from the row of the MIN); one row per
-- paper and year, in the order DESC(?year) ?label ?paper (paper.position).
WITH RECURSIVE
below_a(root, concept) AS (
  SELECT id, id FROM term WHERE kind = 'uri' AND value = :a
  UNION
  SELECT below_a.root, broader.narrower FROM broader JOIN below_a ON broader.broader = below_a.concept
),
below_b(root, concept) AS (
  SELECT id, id FROM term WHERE kind = 'uri' AND value = :b
  UNION
  SELECT below_b.root, broader.narrower FROM broader JOIN below_b ON broader.broader = below_b.concept
),
side_a(root, paper, name, name_rank) AS (
  SELECT below_a.root, subject.paper, concept.label, MIN(concept.label_rank)
  FROM below_a JOIN subject ON subject.concept = below_a.concept JOIN concept ON concept.concept = subject.concept
  GROUP BY subject.paper
),
side_b(root, paper, name, name_rank) AS (
  SELECT below_b.root, subject.paper, concept.label, MIN(concept.label_rank)
  FROM below_b JOIN subject ON subject.concept = below_b.concept JOIN concept ON concept.concept = subject.concept
  GROUP BY subject.paper
)
SELECT side_a.root AS a, side_b.root AS b, paper.paper AS paper, paper.identifier AS identifier, paper.label AS label,
       paper.year AS year, side_a.name AS aVia, side_b.name AS bVia
FROM side_a
JOIN side_b ON side_b.paper = side_a.paper
JOIN paper ON paper.paper = side_a.paper
ORDER BY paper.position
