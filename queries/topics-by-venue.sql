-- topics-by-venue.rq in the query index (kg.qindex), for :concept (an IRI, or none): the same columns, rows and order.
-- rollup: each resource and every concept at or above its subjects (skos:broader*); grouped: per venue and year, every
-- resource of that venue and year (?venuePapers). share: ROUND(10000 * papers / venuePapers) / 10000 in integers (SPARQL
-- rounds halves up), written as the engine writes an xsd:decimal (no trailing zeros, "1" and "0" whole).
WITH grouped(venue, year, n) AS (
  SELECT part_of.o, year.o, COUNT(DISTINCT part_of.s) FROM part_of JOIN year ON year.s = part_of.s GROUP BY part_of.o, year.o
),
counted(venue, year, concept, n) AS MATERIALIZED (
  SELECT part_of.o, year.o, rollup.concept, COUNT(DISTINCT rollup.paper)
  FROM rollup
  JOIN part_of ON part_of.s = rollup.paper
  JOIN year ON year.s = rollup.paper
  WHERE :concept IS NULL OR rollup.concept = (SELECT id FROM term WHERE kind = 'uri' AND value = :concept)
  GROUP BY part_of.o, year.o, rollup.concept
),
rows AS (
  SELECT c.venue, venue_label.o AS venue_label, c.year, c.concept, pref_label.o AS label, c.n, g.n AS venue_n,
         (20000 * c.n + g.n) / (2 * g.n) AS k,
         tvl.value AS venue_label_value, tv.value AS venue_value, ty.value AS year_value, tl.value AS label_value, tc.value AS concept_value
  FROM counted AS c
  CROSS JOIN grouped AS g ON g.venue = c.venue AND g.year = c.year
  CROSS JOIN label AS venue_label ON venue_label.s = c.venue
  CROSS JOIN pref_label ON pref_label.s = c.concept
  CROSS JOIN term_row AS tvl ON tvl.id = venue_label.o
  CROSS JOIN term_row AS tv ON tv.id = c.venue
  CROSS JOIN term_row AS ty ON ty.id = c.year
  CROSS JOIN term_row AS tl ON tl.id = pref_label.o
  CROSS JOIN term_row AS tc ON tc.id = c.concept
)
SELECT venue, venue_label AS venueLabel, year, concept, label, n AS papers__integer, venue_n AS venuePapers__integer,
       CASE WHEN k % 10000 = 0 THEN CAST(k / 10000 AS TEXT)
            ELSE CAST(k / 10000 AS TEXT) || '.' || rtrim(printf('%04d', k % 10000), '0') END AS share__decimal
FROM rows
ORDER BY venue_label_value, venue_value, year_value, n DESC, label_value, concept_value
