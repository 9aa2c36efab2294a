"""Queries: the named-query catalog, the checks, the engine, the store, the query index, remote endpoints."""
