"""Every default and limit a user or operator might tune, defined once: the command line and the Python API share them.

`SETTINGS` is the table of them (name, value, what it is), as datasette keeps its settings: the command line's
help text for each option with a default is the setting's text (kg.cli.common.setting_option), and
tests/test_settings.py holds every numeric option default of the command line to this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SAMPLE_NAME = "icml2024"  # the bundled sample's graph name
GRAPH_DIR = Path("graphs")  # where `kg build` writes when no -o is given
GRAPH = GRAPH_DIR / f"{SAMPLE_NAME}.ttl"  # the graph `kg query`, `kg serve` and `kg eval` read when none is named
BASE = "https://w3id.org/kg/"  # --base: the IRI folder of papers, annotations, authors, venues
BUILD_JOBS: int | str = "auto"  # or a number of worker processes (kg.pipeline.parallel.workers)
# Input limits, in characters after white space is folded. A long abstract is ~2,000 characters and a whole paper
# ~60,000; 200,000 leaves room for anything abstract-like, and builds in under a second (measured: 0.9 s; a 1 MB
# text takes 2.5 s and 25k annotations).
MAX_ABSTRACT = 200_000
MAX_ID = 256  # ids end up in every IRI of the paper's annotations
MAX_FIELD = 2_000  # titles, author names, venues
CLUSTER_BLOCKSIZE = 8 << 20  # bytes of JSONL a partition: ~6,500 papers, a few seconds of extraction on one core
QUERY_TIMEOUT = 60.0
PUSH_TIMEOUT = 300.0
PUSH_BATCH = 20_000
PUSH_STORE_BATCH = 10_000  # a store's transaction costs more per triple as it grows
PUSH_BULK_BATCH = 500_000  # about 70 MB of N-Triples into a bulk loader, which has no transaction to grow
REMOTE_MAX_BYTES = 1 << 30
ANALYZE_SEED = 42
ANALYZE_RESOLUTION = 1.0
TRAIN_FOLDS = 5
RENDER_MAX_NODES = 500  # measured: 500 nodes settle in ~2.5 s in headless Chromium; 2,000 are an unreadable blob
MAP_CONCEPTS = 150
RENDER_HOPS = 2
RENDER_HOPS_CONCEPTS = 1
MAP_THRESHOLD = 500
SERVE_HOST = "127.0.0.1"
SERVE_PORT = 8000
SERVE_TIMEOUT = 10.0
SERVE_MAX_ROWS = 10_000
SERVE_PAGE_ROWS = 100
SERVE_WORKERS = 2
SERVE_MAX_MB = 16
SERVE_MAX_BYTES = SERVE_MAX_MB << 20
SERVE_MAX_REQUEST_BYTES = 256 << 10
# Address space of one `kg serve` query worker (kg.endpoint.sandbox.memory_limit) unless --max-memory says:
# this many MB, plus SERVE_MEMORY_PER_MB for each MB of the graph file (what loading it takes, with room to query).
SERVE_MEMORY_MB = 1024
SERVE_MEMORY_PER_MB = 8
SERVE_PREFIX_V4 = 24
SERVE_PREFIX_V6 = 64
SERVE_GROUP_V4 = 16
SERVE_GROUP_V6 = 48
SERVE_BUFFERED = 256 << 20
SERVE_BUFFERED_PER_CLIENT = 64 << 20
SERVE_CACHE_MB = 64
SERVE_LOAD_NICE = 10
SERVE_STORE_NICE = 10
LOCK_WAIT = 600.0
VERSION = "0.1.0"  # the package version (kg.__version__)


@dataclass(frozen=True)
class Setting:
    """One tunable default: its constant's name, its value, and what it is (the help text of the option that sets it)."""

    name: str
    value: int | float | str
    help: str


SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("BUILD_JOBS", BUILD_JOBS, "Worker processes for extraction while the graph is written (1: none), or auto: one fewer "
                                      "than the CPUs this process may use (at most 3), none for 1,000 papers or fewer (same output "
                                      "for any number; faster only with idle cores)."),
    Setting("MAX_ABSTRACT", MAX_ABSTRACT, "Characters of an abstract at most; a longer record is refused (or skipped with --skip-bad)."),
    Setting("MAX_ID", MAX_ID, "Characters of a paper's id at most (ids go into every IRI of its annotations)."),
    Setting("MAX_FIELD", MAX_FIELD, "Characters of a title, author name or venue at most."),
    Setting("CLUSTER_BLOCKSIZE", CLUSTER_BLOCKSIZE, "Bytes of JSONL input one partition of a cluster build reads (`kg.pipeline.cluster.build`)."),
    Setting("QUERY_TIMEOUT", QUERY_TIMEOUT, "Seconds a query may run, on a graph file or an endpoint (0 = no limit)."),
    Setting("PUSH_TIMEOUT", PUSH_TIMEOUT, "Seconds one `kg push` request may take (0 = no limit)."),
    Setting("PUSH_BATCH", PUSH_BATCH, "Triples per INSERT DATA request of `kg push`: about 2-3 MB of N-Triples."),
    Setting("PUSH_STORE_BATCH", PUSH_STORE_BATCH, "Triples per Graph Store Protocol request of `kg push --store`."),
    Setting("PUSH_BULK_BATCH", PUSH_BULK_BATCH, "Triples per request of `kg push --bulk` into a bulk loader."),
    Setting("REMOTE_MAX_BYTES", REMOTE_MAX_BYTES, "Bytes of one answer from a store or endpoint that kg reads at most "
                                                  "(a 100k-paper listing is ~40 MB)."),
    Setting("ANALYZE_SEED", ANALYZE_SEED, "Seed of the community detection and sampled betweenness."),
    Setting("ANALYZE_RESOLUTION", ANALYZE_RESOLUTION, "Louvain resolution: above 1, more and smaller communities."),
    Setting("TRAIN_FOLDS", TRAIN_FOLDS, "Cross-validation folds (by paper)."),
    Setting("RENDER_MAX_NODES", RENDER_MAX_NODES, "Nodes a page draws at most, the most connected (0 = all)."),
    Setting("RENDER_HOPS", RENDER_HOPS, "Steps out from a concept a papers view of it draws."),
    Setting("RENDER_HOPS_CONCEPTS", RENDER_HOPS_CONCEPTS, "Steps out from a concept a concepts view of it draws."),
    Setting("MAP_CONCEPTS", MAP_CONCEPTS, "Concepts the concept map draws at most: the ones on the most papers."),
    Setting("MAP_THRESHOLD", MAP_THRESHOLD, "A graph whose papers view has more nodes than this opens on the concept map."),
    Setting("SERVE_HOST", SERVE_HOST, "Address to listen on (loopback: this machine only)."),
    Setting("SERVE_PORT", SERVE_PORT, "Port (0 picks a free one)."),
    Setting("SERVE_TIMEOUT", SERVE_TIMEOUT, "Seconds a query on `kg serve` may run."),
    Setting("SERVE_MAX_ROWS", SERVE_MAX_ROWS, "Rows returned at most per query."),
    Setting("SERVE_PAGE_ROWS", SERVE_PAGE_ROWS, "Rows of one HTML page of `kg serve`'s answers (the files hold every row)."),
    Setting("SERVE_WORKERS", SERVE_WORKERS, "Query worker processes."),
    Setting("SERVE_MAX_MB", SERVE_MAX_MB, "Megabytes of one response at most (rows past it are cut, as with --max-rows)."),
    Setting("SERVE_MAX_REQUEST_BYTES", SERVE_MAX_REQUEST_BYTES, "Bytes of a query text at most; a longer one is refused (413)."),
    Setting("SERVE_MEMORY_MB", SERVE_MEMORY_MB, "Megabytes of address space of one query worker, before the graph's share."),
    Setting("SERVE_MEMORY_PER_MB", SERVE_MEMORY_PER_MB, "Megabytes of address space a query worker gets for each MB of the graph file."),
    Setting("SERVE_PREFIX_V4", SERVE_PREFIX_V4, "`kg serve` treats the IPv4 addresses of one /24 as one client (fairness, buffers)."),
    Setting("SERVE_PREFIX_V6", SERVE_PREFIX_V6, "And the IPv6 addresses of one /64."),
    Setting("SERVE_GROUP_V4", SERVE_GROUP_V4, "Waiting clients of a /16 (IPv4) that used workers a lot go after others."),
    Setting("SERVE_GROUP_V6", SERVE_GROUP_V6, "And of a /48 (IPv6)."),
    Setting("SERVE_BUFFERED", SERVE_BUFFERED, "Bytes of answers `kg serve` holds at most, in all, for clients still reading them."),
    Setting("SERVE_BUFFERED_PER_CLIENT", SERVE_BUFFERED_PER_CLIENT, "Bytes of those one client (prefix) may hold at most."),
    Setting("SERVE_CACHE_MB", SERVE_CACHE_MB, "Megabytes of answers `kg serve` keeps and gives again without a worker (0: none)."),
    Setting("SERVE_LOAD_NICE", SERVE_LOAD_NICE, "Niceness of a `kg serve` worker's thread loading the graph: queries answered meanwhile go first."),
    Setting("SERVE_STORE_NICE", SERVE_STORE_NICE, "Niceness of the `kg serve` workers for heavy clients and new ones during an attack: known clients' queries go first."),
    Setting("LOCK_WAIT", LOCK_WAIT, "Seconds a command waits for another kg writing the same graph, then says so and stops."),
)}


def setting(name: str) -> Setting:
    """The setting called `name` (a KeyError names a setting the table lacks: a programming error)."""
    return SETTINGS[name]
