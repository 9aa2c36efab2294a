"""Shared fixtures: small real inputs, the bundled scheme, built graphs."""

from __future__ import annotations

from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Iterator

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"  # the shared corpora, beside the repository
SLICE = 2000  # papers of the corpus slice several tests build


# Session fixtures too costly to make once per pytest-xdist worker (decision 0056): every module whose tests use one
# of them (directly or through another fixture) runs on the one worker that makes it.
ONE_WORKER = ("corpus_slice", "dask_client")

# Session fixtures that keep processes running (the cluster's scheduler, nannies and workers take about 7 % of a core
# while idle): torn down after the last test that uses them, not at the end of the session (pytest_runtest_teardown).
TORN_DOWN_AFTER_USE = ("dask_client",)


MAX_WORKERS = 4  # each worker pays the scheme, spaCy and the sample build (a few seconds and ~0.5 GB) once


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per CPU this process may run on (psutil, xdist's count, sees the host's cores, not a
    container's share), at most MAX_WORKERS."""
    import os

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Work units for `--dist loadgroup` (pyproject.toml's addopts): a test module runs whole on one worker, so its
    module fixtures are made once; modules that share a fixture of ONE_WORKER share a worker. Without xdist the
    marks do nothing."""
    module = {item: item.nodeid.split("::")[0] for item in items}
    groups: list[tuple[set[str], set[str]]] = []  # (fixtures, modules), disjoint
    uses = {item: _fixtures_used(item) for item in items}
    for name in ONE_WORKER:
        fixtures, modules = {name}, {module[item] for item in items if name in uses[item]}
        if not modules:
            continue
        for other in [g for g in groups if g[1] & modules]:
            groups.remove(other)
            fixtures |= other[0]
            modules |= other[1]
        groups.append((fixtures, modules))
    shared = {m: "+".join(sorted(fixtures)) for fixtures, modules in groups for m in modules}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(shared.get(module[item], module[item])))
    yield  # xdist's own hook (on a worker) appends each test's group to its id: the scheduler reads it there
    if getattr(config.option, "loadgroup", False):
        _group_ids_on_pytest_9_2(items)
    for name in TORN_DOWN_AFTER_USE:  # among the tests selected (-m, -k), in their final order
        users = [item for item in items if name in uses[item]]
        if users:
            users[-1].stash.setdefault(_LAST_USE, []).append(name)


def _fixtures_used(item: pytest.Item) -> set[str]:
    """The fixtures a test uses: its closure (`item.fixturenames`), and, for a test parametrized by fixture names that it
    gets through `request.getfixturevalue` (tests/test_analyze.py's `graph`), those fixtures with their own closure.
    Without the second part such a test made the corpus slice again on another worker."""
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    manager = item.session._fixturemanager
    named = tuple(v for v in (callspec.params.values() if callspec else ()) if isinstance(v, str) and manager.getfixturedefs(v, item))
    if named:
        names |= set(manager.getfixtureclosure(item, named, set())[0])
    return names


def _group_ids_on_pytest_9_2(items: list[pytest.Item]) -> None:
    """What xdist 3.8's hook means to do where pytest (9.2) no longer reads the `_nodeid` it writes: without it
    every test is a work unit of its own (pytest-dev/pytest-xdist#1386). Drop it once xdist carries the fix."""
    from _pytest.nodes import coerce_node_id

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid.rpartition("]")[2]:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """After the last test (in collection order) that uses a fixture of TORN_DOWN_AFTER_USE, tear that fixture down
    (and, through pytest, the fixtures made from it, such as test_cluster's `client`). Its users run in collection
    order: in one process, and with xdist, where they are one group's (ONE_WORKER). Should a test use it after that
    all the same, pytest makes it again."""
    yield
    request = getattr(item, "_request", None)  # pytest's own (no public way to end a session fixture early): where a
    for name in item.stash.get(_LAST_USE, ()):  # pytest lacks it, the fixture ends with the session, as it did before
        for fixturedef in item.session._fixturemanager.getfixturedefs(name, item) or ():
            if request is not None and hasattr(fixturedef, "finish"):
                fixturedef.finish(request)


_LAST_USE = pytest.StashKey[list[str]]()  # on a test: the fixtures of TORN_DOWN_AFTER_USE that no later test uses


@pytest.fixture(autouse=True, scope="session")
def _own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Caches (the label tokens of kg.extract.labels) go to a folder of the test session, not ~/.cache/kg."""
    patch = pytest.MonkeyPatch()
    patch.setenv("KG_CACHE_DIR", str(tmp_path_factory.mktemp("kg-cache")))
    yield
    patch.undo()


@pytest.fixture(autouse=True, scope="session")
def _extractors_kept() -> Iterator[Any]:
    """A `kg build` through the CLI lets the kept extractors go once its papers are extracted, to draw the page in less
    memory (kg.cli.build._let_go). One command a process, that costs nothing; in a test process every later build then
    made the shipped scheme's extractor again (about 1.5 s of CPU, dozens of times a run). Here the extractors are
    kept, as they are for kg.build (decision 0054). Yields the real kg.extract.forget_extractors, which
    tests/test_cli.py's test_build_lets_the_extractors_go puts back to check it."""
    import kg.extract

    real = kg.extract.forget_extractors
    patch = pytest.MonkeyPatch()
    patch.setattr(kg.extract, "forget_extractors", lambda: None)
    yield real
    patch.undo()


@pytest.fixture(autouse=True)
def _reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build in the tests has the same build time."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


@pytest.fixture(scope="session")
def sample_built():
    """The bundled ICML 2024 sample, built once per test session."""
    import kg

    return kg.build()


@pytest.fixture(scope="session")
def sample_ttl(sample_built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample written as Turtle."""
    import kg

    return kg.write(sample_built, tmp_path_factory.mktemp("sample") / "icml2024.ttl")


def synthetic_triples(papers: int, concepts: int = 150, areas: int = 8, seed: int = 1) -> list:
    """A connected graph without extraction: each paper is about 2-5 concepts (popularity ~ 1/rank) under a few areas."""
    import random

    import pyoxigraph as ox

    from kg.graph.vocabulary import DCTERMS, FABIO, RDF, RDFS, SKOS

    rnd = random.Random(seed)
    N, L, T, a = ox.NamedNode, ox.Literal, ox.Triple, ox.NamedNode(RDF + "type")
    tops = [N(f"https://w3id.org/kg/concept/area-{i}") for i in range(areas)]
    nodes = [N(f"https://w3id.org/kg/concept/c-{i}") for i in range(concepts)]
    out = []
    for i, c in enumerate(tops):
        out += [T(c, a, N(SKOS + "Concept")), T(c, N(SKOS + "prefLabel"), L(f"area {i}"))]
    for i, c in enumerate(nodes):
        out += [T(c, a, N(SKOS + "Concept")), T(c, N(SKOS + "prefLabel"), L(f"concept {i}")), T(c, N(SKOS + "broader"), tops[i % areas])]
    weights = [1 / (i + 1) for i in range(concepts)]
    for j in range(papers):
        p = N(f"https://w3id.org/kg/paper/p{j}")
        out += [T(p, a, N(FABIO + "ResearchPaper")), T(p, N(DCTERMS + "title"), L(f"Synthetic paper {j}")), T(p, N(RDFS + "label"), L(f"Synthetic paper {j}"))]
        for c in sorted(set(rnd.choices(nodes, weights=weights, k=rnd.randint(2, 5))), key=lambda n: n.value):
            out.append(T(p, N(DCTERMS + "subject"), c))
    return out


HOSTILE_TITLE = "<img src=x onerror=window.__pwned=1> Reinforcement learning & <b>bold</b>"
HOSTILE_ABSTRACT = (
    "We study reinforcement learning for large language models. </script><script>window.__pwned=2</script> "
    "The \u2028line separator and <!-- comments --> must stay text; diffusion models too."
)


@pytest.fixture(scope="session")
def hostile_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A graph whose title, abstract, venue and author carry script: rendering must show it as text."""
    import json

    import kg

    folder = tmp_path_factory.mktemp("hostile")
    records = [
        {"id": "evil-1", "title": HOSTILE_TITLE, "abstract": HOSTILE_ABSTRACT, "venue": "<svg onload=window.__pwned=3>",
         "year": 2024, "authors": ["<script>window.__pwned=4</script>"]},
        {"id": "plain-2", "title": "Offline reinforcement learning at scale", "venue": "ICML", "year": 2024,
         "abstract": "Offline reinforcement learning learns from a fixed data set; we also use diffusion models."},
    ]
    source = folder / "hostile.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return kg.write(kg.build([source]), folder / "hostile.ttl")


@pytest.fixture(scope="session")
def mini_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five papers on a six-concept scheme (offline RL and RLHF below RL), written as Turtle."""
    import os

    import kg

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    built = kg.build([FIXTURES / "query" / "mini-papers.jsonl"], schemes=[FIXTURES / "query" / "mini-scheme.ttl"], default_scheme=False)
    return kg.write(built, tmp_path_factory.mktemp("mini") / "mini.ttl")


@pytest.fixture(scope="session")
def two_topics_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two-topics corpus (tests/fixtures/two-topics/README.md), built with its own scheme only."""
    import kg

    folder = FIXTURES / "two-topics"
    # threshold 0: every matched concept is a subject, so the expectations do not hang on salience scoring.
    built = kg.build([folder / "papers.jsonl"], schemes=[folder / "scheme.ttl"], default_scheme=False, threshold=0.0)
    return kg.write(built, tmp_path_factory.mktemp("two-topics") / "two-topics.ttl")


@pytest.fixture(scope="session")
def sample_analyzed_ttl(sample_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample plus `kg analyze` results, so every named query has rows to return."""
    import kg

    out = tmp_path_factory.mktemp("sample-analyzed") / "icml2024.ttl"
    kg.analyze(sample_ttl, out)
    return out


# ---- expensive things started or built once per test session ---------------------------------------


class JsonAnswers(BaseHTTPRequestHandler):
    """A SPARQL endpoint for tests: every POST gets `answer(path)` as application/sparql-results+json."""

    def answer(self, path: str) -> bytes:
        raise NotImplementedError

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = self.answer(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def local_server(handler: type) -> Iterator[str]:
    """A threaded HTTP server on 127.0.0.1 answering with `handler` (a BaseHTTPRequestHandler), as its base URL."""
    import threading
    from http.server import ThreadingHTTPServer

    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Oxigraph server on a free loopback port, one for the session: yields its base URL. Tests that
    share it write into graphs of their own (distinct graph IRIs)."""
    import shutil
    import subprocess
    import sys
    import time
    import urllib.request

    exe = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not Path(exe).exists():
        pytest.skip("the oxigraph server is not installed (pip install oxigraph)")
    port = free_port()
    proc = subprocess.Popen([exe, "serve", "--location", str(tmp_path_factory.mktemp("oxigraph")), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/query?query=ASK%7B%7D", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("oxigraph did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """A small real Dask cluster, one for the session: two single-threaded worker processes."""
    distributed = pytest.importorskip("distributed", reason='the dask extra is not installed (pip install "kg[dask]")')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, distributed.Client(lc) as c:
        yield c


@pytest.fixture(scope="session")
def corpus_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 2,000 papers of the shared 21k corpus, as JSON lines (skips where the shared corpora are absent)."""
    if not CORPUS.is_file():
        pytest.skip("../shared/corpora/ml-abstracts.jsonl is absent (the shared corpora are not beside the repository)")
    out = tmp_path_factory.mktemp("slice") / "slice.jsonl"  # the name the recorded answers were built from
    with CORPUS.open(encoding="utf-8") as src:
        out.write_text("".join(line for _, line in zip(range(SLICE), src)), encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def corpus_slice_built(corpus_slice: Path) -> Any:
    """The corpus slice built locally (kg.build), once for the session. In this process (jobs=1): the test workers
    keep the cores busy, so the worker `--jobs auto` spawns for 2,000 papers would only add its start and the
    chunks' pickling (about 3 s of CPU); the graph is the same for any jobs (tests/test_build.py)."""
    import os

    import kg

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    return kg.build([corpus_slice], jobs=1)


@pytest.fixture(scope="session")
def corpus_slice_ttl(corpus_slice_built: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus slice written as Turtle with its query index (not analysed), once for the session."""
    import kg

    return kg.write(corpus_slice_built, tmp_path_factory.mktemp("slice-ttl") / "slice.ttl")


@pytest.fixture(scope="session")
def corpus_slice_analyzed(corpus_slice_built: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus slice written as slice.ttl and analysed (`kg analyze`), once for the session: the graph whose
    answers tests/fixtures/answers/ records. Read it; write nothing into its folder but what kg itself keeps there."""
    return write_analyzed(corpus_slice_built, tmp_path_factory.mktemp("slice-analyzed"))


def write_analyzed(built: Any, folder: Path) -> Path:
    """`built` written as folder/slice.ttl and analysed in place, as the recorded answers' slice graph is made."""
    import kg

    graph = kg.write(built, folder / "slice.ttl")
    kg.analyze(graph, graph)
    return graph
