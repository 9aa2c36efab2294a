"""`kg serve`: the SPARQL 1.1 Protocol endpoint, its pages, its workers and their limits."""
