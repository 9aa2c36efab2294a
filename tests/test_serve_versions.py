"""kg serve answers named queries (from the query index) and ad-hoc SPARQL (from the store) from one version of the graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kg
from kg.endpoint.app import make_app
from kg.sparql.catalog import resolve
from tests.test_serve import RUNAWAY, call

FIXTURES = Path(__file__).parent / "fixtures" / "query"
SCHEME = {"schemes": [FIXTURES / "mini-scheme.ttl"], "default_scheme": False}


def _more_papers(folder: Path, shown: int) -> Path:
    """A paper list of the mini papers again under new ids: an update told to keep copies adds each of them."""
    lines = (FIXTURES / "mini-papers.jsonl").read_text(encoding="utf-8").splitlines()
    out = folder / "more.jsonl"
    out.write_text("".join(json.dumps(json.loads(line) | {"id": f"n{i}-{json.loads(line)['id']}"}) + "\n"
                           for i in range(shown) for line in lines), encoding="utf-8")
    return out


def _answers(app) -> tuple[bytes, bytes]:
    """top-concepts answered twice: by name (the query index) and as ad-hoc SPARQL (the store)."""
    status, _, named = call(app, path="/queries/top-concepts", query={"format": "csv"})
    assert status == 200, named
    text = resolve("top-concepts").text + "\n# typed by hand\n"  # not the shipped text: the engine answers it
    status, _, typed = call(app, query={"query": text, "format": "csv"})
    assert status == 200, typed
    return named, typed


@pytest.mark.parametrize("memory", [True, False], ids=["memory", "on-disk"])
def test_named_and_ad_hoc_answers_come_from_one_graph_version_across_an_update(tmp_path: Path, memory: bool) -> None:
    """M8 (issue #30): after `kg build --update` under a running server, named queries answered from the new
    graph and ad-hoc SPARQL from the old one. Every answer pair must now come from one version, also from a
    worker started after the update (one replaces a worker killed by a runaway query)."""
    graph = kg.write(kg.build([FIXTURES / "mini-papers.jsonl"], **SCHEME), tmp_path / "mini.ttl")
    app = make_app(graph, workers=2, timeout=3.0, memory=memory)
    try:
        before = _answers(app)
        assert before[0] == before[1]
        assert kg.update(graph, [_more_papers(tmp_path, 3)], keep_duplicates=True, **SCHEME).added == 15
        seen = set()
        for _ in range(4):  # every worker, the spare included
            named, typed = _answers(app)
            assert named == typed, "named and ad-hoc answers from different versions of the graph"
            seen.add(named)
        assert call(app, query={"query": RUNAWAY})[0] == 503  # a worker killed and replaced
        for _ in range(4):
            named, typed = _answers(app)
            assert named == typed, "a replacement worker answers from another version than the others"
            seen.add(named)
        assert seen == {before[0]}, "the server answers from the version it started with until it restarts"
    finally:
        app.close()
    fresh = make_app(graph, workers=1, timeout=3.0, memory=memory)
    try:
        named, typed = _answers(fresh)
        assert named == typed != before[0]
    finally:
        fresh.close()


def test_in_memory_workers_answer_from_the_store_until_the_graph_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #29: a `kg serve` worker loading the graph in memory (43 s at 21k papers) answered nothing until then.
    With the store `kg build` made (or the server, once per version of the graph), it answers from it at once,
    then from memory, the same rows."""
    import pyoxigraph as ox

    from kg.endpoint import snapshot as snapshot_module
    from kg.endpoint.snapshot import Warming, open_snapshot, release, take

    graph = kg.write(kg.build([FIXTURES / "mini-papers.jsonl"], **SCHEME), tmp_path / "mini.ttl")
    snapshot = take(graph)
    try:
        assert isinstance(open_snapshot(snapshot, memory=True)[0], ox.Store)  # a small graph: loaded at once
        monkeypatch.setattr(snapshot_module, "WARM_BYTES", 0)  # as if it were large
        store, index = open_snapshot(snapshot, memory=True)
        assert isinstance(store, Warming) and index is not None
        count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
        first = [row[0].value for row in store.query(count)]
        assert store.loaded.wait(60)
        assert isinstance(store.store, ox.Store) and [row[0].value for row in store.query(count)] == first != ["0"]
    finally:
        release(snapshot)
    assert not [p for p in tmp_path.iterdir() if ".kg-serve-" in p.name], "the pinned links are removed"


def test_workers_of_one_server_load_the_graph_in_memory_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36 M4: three workers loading 21k papers in memory at once on two cores slowed every query for a
    minute or more. A worker loads only while no other worker of the server does (the snapshot's lock); until
    then it answers from the store."""
    import fcntl

    from kg.endpoint import snapshot as snapshot_module
    from kg.endpoint.snapshot import WARMING, open_snapshot, release, take

    graph = kg.write(kg.build([FIXTURES / "mini-papers.jsonl"], **SCHEME), tmp_path / "mini.ttl")
    snapshot = take(graph)
    try:
        monkeypatch.setattr(snapshot_module, "WARM_BYTES", 0)  # as if it were large
        assert snapshot.folder is not None
        with (snapshot.folder / WARMING).open("ab") as other:
            fcntl.flock(other, fcntl.LOCK_EX)  # another worker is loading
            store, _ = open_snapshot(snapshot, memory=True)
            assert not store.loaded.wait(1.0)  # waits its turn (it would load in a fraction of that)
            assert [row[0].value for row in store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")] != ["0"]
        assert store.loaded.wait(60)  # the other is done: its turn
        assert store.store is not None and type(store.store).__name__ == "Store"
    finally:
        release(snapshot)


def test_the_server_tells_while_a_worker_loads_the_graph_in_memory(mini_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36 M4 (decision 0058): a query that ran long while a worker loaded the graph is excused
    (kg.endpoint.admission). The server tells by the snapshot's lock, which a worker holds from the start of its load
    to its end."""
    import shutil
    import threading

    from kg.endpoint import snapshot as snapshot_module
    from kg.endpoint.snapshot import loading, open_snapshot, release, take

    graph = Path(shutil.copy(mini_ttl, tmp_path / "mini.ttl"))
    snapshot = take(graph)
    entered, go = threading.Event(), threading.Event()
    real = snapshot_module.in_memory

    def held(path: Path) -> object:
        entered.set()
        assert go.wait(60)
        return real(path)

    monkeypatch.setattr(snapshot_module, "in_memory", held)
    monkeypatch.setattr(snapshot_module, "WARM_BYTES", 0)  # as if it were large
    try:
        assert not loading(snapshot)
        store, _ = open_snapshot(snapshot, memory=True)
        assert entered.wait(60)
        assert loading(snapshot)
        go.set()
        assert store.loaded.wait(60)
        assert not loading(snapshot) and type(store.store).__name__ == "Store"
    finally:
        go.set()
        release(snapshot)
    assert not loading(snapshot)  # the folder gone with the server


def test_the_links_of_a_server_that_was_killed_are_removed_by_the_next_one(tmp_path: Path) -> None:
    """A killed server leaves its folder of links (an old graph and index, 230 MB at 21k papers); the next server
    of the graph removes it once no process holds its lock, and leaves a running server's alone."""
    from kg.endpoint import snapshot as snapshot_module
    from kg.endpoint.snapshot import release, take

    graph = kg.write(kg.build([FIXTURES / "mini-papers.jsonl"], **SCHEME), tmp_path / "mini.ttl")
    killed, running = take(graph), take(graph)
    assert killed.folder is not None and running.folder is not None and killed.folder != running.folder
    snapshot_module._LOCKS.pop(killed.folder).close()  # what the end of its process does to its lock
    third = take(graph)
    try:
        assert not killed.folder.exists() and running.folder.exists() and running.graph.is_file()
        assert third.graph.read_bytes() == graph.read_bytes() and third.index is not None and third.store is not None
    finally:
        release(running)
        release(third)
    assert not [p for p in tmp_path.iterdir() if ".kg-serve-" in p.name]


def test_the_rendered_graph_comes_from_the_version_the_answers_come_from(tmp_path: Path) -> None:
    """#37: `kg serve` pinned the graph, its index and its store but served /graph from the path beside the
    graph, so after `kg build --update` (which draws the page again) the page showed papers no answer had."""
    graph = kg.write(kg.build([FIXTURES / "mini-papers.jsonl"], **SCHEME), tmp_path / "mini.ttl")
    kg.render(graph, graph.with_suffix(".html"))
    app = make_app(graph, workers=1, timeout=3.0, memory=False)
    try:
        status, _, page = call(app, path="/graph")
        assert status == 200 and page == graph.with_suffix(".html").read_bytes()
        before = _answers(app)
        assert kg.update(graph, [_more_papers(tmp_path, 3)], keep_duplicates=True, **SCHEME).added == 15
        kg.render(graph, graph.with_suffix(".html"))
        assert graph.with_suffix(".html").read_bytes() != page  # the page beside the graph is the new version's
        status, _, served = call(app, path="/graph")
        assert status == 200 and served == page, "/graph from another version of the graph than the answers"
        assert _answers(app) == before
    finally:
        app.close()
