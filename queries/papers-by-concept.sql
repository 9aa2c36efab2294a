-- papers-by-concept.rq in the query index (kg.qindex), for :concept (an IRI): the same columns, rows and order.
-- below: skos:broader* up to the concept (UNION, not UNION ALL: a cycle ends). listed (kg.qschema): a row per
-- paper, scored subject link to an IRI with a prefLabel, and prefLabel of it, numbered (seq) in the order DESC(?score)
-- DESC(?year) STR(?label) STR(?paper) STR(?viaLabel) STR(?identifier), with the link's place (pick) among the
-- paper's links in the order the .rq picks ?via (best score, most concepts above, STR), and the first
-- of them (top). A row is the paper's ?via when its concept is below and no link picked before it is: the first
-- link (most rows of a broad concept), the second when the first is not below, else a look at the links before
-- (linked). The roll-up reads the kept rows in seq order, no sort, and the paper's terms inline from listed_term
-- (NAME__type, NAME__value: kg.qindex), in the same order. unlikely(): a hint that is always true, which keeps SQLite
-- from building a Bloom filter over the triples at each step of the recursion (a step is one concept: 626 steps
-- took 47 ms of CPU below "machine learning" at 100,000 papers, 1 ms without).
WITH RECURSIVE below(c) AS (
  SELECT id FROM term WHERE kind = 'uri' AND value = :concept
  UNION
  SELECT broader.s FROM broader JOIN below ON broader.o = below.c AND unlikely(below.c IS NOT NULL)
)
SELECT :concept_term AS concept, t.paper_type AS paper__type, t.paper_value AS paper__value,
       t.identifier_type AS identifier__type, t.identifier_value AS identifier__value, t.label_type AS label__type,
       t.label_value AS label__value, year, score, concept AS via, name AS viaLabel
FROM listed
CROSS JOIN listed_term AS t ON t.seq = listed.seq
WHERE +concept IN below
  AND (pick = 1 OR (top NOT IN below AND (pick = 2 OR NOT EXISTS (
    SELECT 1 FROM linked WHERE linked.paper = listed.paper AND linked.pick < listed.pick AND linked.concept IN below))))
ORDER BY listed.seq
