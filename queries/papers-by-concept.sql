-- papers-by-concept.rq answered from the listing tables of kg.tables (SQLite), for :concept (an IRI).
--
-- Same columns, rows and order as papers-by-concept.rq; used only by a persisted store whose tables
-- hold the listing. Values are term ids (table term). `below` is skos:broader* from the concept
-- (UNION, not UNION ALL: a cycle ends); paper.position is the place of a paper and year in the
-- order DESC(?year) ?label ?paper, concept.position that of a concept in the order of IRIs.
WITH RECURSIVE below(root, concept) AS (
  SELECT id, id FROM term WHERE kind = 'uri' AND value = :concept
  UNION
  SELECT below.root, broader.narrower FROM broader JOIN below ON broader.broader = below.concept
)
SELECT below.root AS concept, paper.paper AS paper, paper.identifier AS identifier, paper.label AS label,
       paper.year AS year, subject.concept AS via, concept.label AS viaLabel
FROM below
JOIN subject ON subject.concept = below.concept
JOIN paper ON paper.paper = subject.paper
JOIN concept ON concept.concept = subject.concept
ORDER BY paper.position, concept.position
