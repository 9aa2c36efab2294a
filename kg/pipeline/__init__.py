"""Building and updating a graph: extraction, triples and writing, in one process or on a Dask cluster."""
