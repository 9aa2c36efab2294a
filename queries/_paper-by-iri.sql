-- _paper-by-iri.rq in the query index (kg.qindex): :paper itself when it is a fabio:ResearchPaper.
SELECT :paper_term AS paper
FROM term JOIN a ON a.s = term.id
WHERE term.kind = 'uri' AND term.value = :paper AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://purl.org/spar/fabio/ResearchPaper')
