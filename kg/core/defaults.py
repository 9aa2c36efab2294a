"""Every default that the command line and the Python API share, defined once."""

from __future__ import annotations

from pathlib import Path

SAMPLE_NAME = "icml2024"  # the bundled sample's graph name
GRAPH_DIR = Path("graphs")  # where `kg build` writes when no -o is given
GRAPH = GRAPH_DIR / f"{SAMPLE_NAME}.ttl"  # the graph `kg query`, `kg serve` and `kg eval` read when none is named
BASE = "https://w3id.org/kg/"  # --base: the IRI folder of papers, annotations, authors, venues
QUERY_TIMEOUT = 60.0  # seconds a query on a remote endpoint may take
PUSH_TIMEOUT = 300.0  # seconds one `kg push` request may take
REMOTE_MAX_BYTES = 1 << 30  # bytes of one answer from a store or endpoint that kg reads at most (a 100k-paper listing is ~40 MB)
SERVE_TIMEOUT = 10.0  # seconds a query on `kg serve` may run
SERVE_MAX_ROWS = 10_000  # rows `kg serve` returns at most per query
SERVE_WORKERS = 2  # query worker processes of `kg serve`
SERVE_MAX_REQUEST_BYTES = 256 << 10  # a query text longer than this is refused (413)
SERVE_MAX_BYTES = 16 << 20  # a response body longer than this is cut to the rows that fit
# Address space of one `kg serve` query worker (kg.endpoint.sandbox.memory_limit) unless --max-memory says:
# this many MB, plus SERVE_MEMORY_PER_MB for each MB of the graph file (what loading it takes, with room to query).
SERVE_MEMORY_MB = 1024
SERVE_MEMORY_PER_MB = 8
SERVE_PREFIX_V4 = 24  # `kg serve` treats the IPv4 addresses of one /24 as one client (fairness, buffers)
SERVE_PREFIX_V6 = 64  # and the IPv6 addresses of one /64
SERVE_GROUP_V4 = 16  # waiting clients of a /16 (IPv4) or /48 (IPv6) that used workers a lot go after others
SERVE_GROUP_V6 = 48
SERVE_BUFFERED = 256 << 20  # bytes of answers `kg serve` holds at most, in all, for clients still reading them
SERVE_BUFFERED_PER_CLIENT = 64 << 20  # of which one client (prefix) may hold at most this many
LOCK_WAIT = 600.0  # seconds a command waits for another kg writing the same graph, then says so and stops
PUSH_BATCH = 20_000  # triples per INSERT DATA request of `kg push`: about 2-3 MB of N-Triples
VERSION = "0.1.0"  # the package version (kg.__version__)
