-- _concept-by-iri.rq in the query index (kg.qindex): :concept itself when it is a skos:Concept.
SELECT :concept_term AS concept
FROM term JOIN a ON a.s = term.id
WHERE term.kind = 'uri' AND term.value = :concept AND a.o = (SELECT id FROM term WHERE kind = 'uri' AND value = 'http://www.w3.org/2004/02/skos/core#Concept')
