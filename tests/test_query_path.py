"""The one query path (kg.sparql.run): a query's parameters are bound once, with the look-ups of the backend that
runs it (the query index, the engine, a remote endpoint), and handed as RDF terms to a backend it falls back to;
kg query and kg serve's entry (run_store) choose the backend by one rule."""

from __future__ import annotations

import ast
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.graph import index_file
from kg.sparql import catalog

ROOT = Path(__file__).resolve().parent.parent
OFFLINE = "offline reinforcement learning"
ADHOC = """# Papers about a concept, by their IRI.
#
# Parameters:
#   concept (concept, required)  a label or an IRI
SELECT ?paper WHERE { ?paper dcterms:subject ?concept } ORDER BY ?paper
"""


@pytest.fixture
def binds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Every call of kg.sparql.catalog.bind that kg makes, wherever kg imported it from: (query name, whether the
    binding was completed or broken off by an error)."""
    import kg.sparql.engine
    import kg.sparql.remote
    import kg.sparql.run  # noqa: F401  (imported, so that the spy replaces their names for bind too)

    real = catalog.bind
    calls: list[tuple[str, bool]] = []

    def spy(q: catalog.NamedQuery, params: Any, lookup: catalog.Lookup) -> dict:
        try:
            terms = real(q, params, lookup)
        except BaseException:
            calls.append((q.name, False))
            raise
        calls.append((q.name, True))
        return terms

    for name, module in list(sys.modules.items()):
        if (name == "kg" or name.startswith("kg.")) and getattr(module, "bind", None) is real:
            monkeypatch.setattr(module, "bind", spy)
    return calls


def _copy(graph: Path, folder: Path) -> Path:
    """A copy of a built graph with its query index (the store is made again where a test needs it)."""
    copy = folder / graph.name
    shutil.copy2(graph, copy)
    shutil.copy2(index_file.index_path(graph), index_file.index_path(copy))
    return copy


def _damage(index: Path, tables: set[str] | None = None) -> None:
    """Overwrite the pages of `tables` (None: every table but the schema and `meta`) of a SQLite file with garbage,
    so that its stamp still reads and only the queries reading those tables fail."""
    db = sqlite3.connect(index)
    try:
        pages = db.execute("SELECT name, pageno FROM dbstat").fetchall()
        size = db.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table")
    finally:
        db.close()
    kept = ("sqlite_schema", "sqlite_master", "meta", "sqlite_autoindex_meta_1")
    hit = {n for name, n in pages if (name in tables if tables is not None else name not in kept)}
    data = bytearray(index.read_bytes())
    for page in hit:
        data[(page - 1) * size:page * size] = b"\xa5" * size
    index.write_bytes(bytes(data))


def test_a_named_query_with_sql_is_bound_once_by_the_index(mini_ttl: Path, binds: list) -> None:
    rows = kg.query("papers-by-concept", {"concept": OFFLINE}, graph=mini_ttl)
    assert len(rows) == 1 and binds == [("papers-by-concept", True)]


def test_a_query_in_the_engine_is_bound_once(mini_ttl: Path, binds: list) -> None:
    """paper-graph (no SQL) and an ad-hoc query with a concept parameter: the engine looks the names up, once."""
    paper = kg.query("paper-graph", {"paper": "p1"}, graph=mini_ttl)
    adhoc = kg.query(ADHOC, {"concept": OFFLINE}, graph=mini_ttl)
    assert len(paper.triples) > 5 and len(adhoc) == 1
    assert binds == [("paper-graph", True), ("ad-hoc", True)]


def test_a_remote_query_is_bound_once(oxigraph: str, mini_ttl: Path, binds: list) -> None:
    graph_iri = "https://example.org/graph/query-path"
    kg.push(mini_ttl, f"{oxigraph}/update", graph_iri=graph_iri, replace=True)
    local = [r["identifier"] for r in kg.query("papers-by-concept", {"concept": OFFLINE}, graph=mini_ttl)]
    binds.clear()
    rows = kg.query("papers-by-concept", {"concept": OFFLINE}, endpoint=f"{oxigraph}/query", graph_iri=graph_iri)
    assert [r["identifier"] for r in rows] == local and len(rows) == 1 and binds == [("papers-by-concept", True)]
    capped = kg.query("top-concepts", endpoint=f"{oxigraph}/query", graph_iri=graph_iri, max_rows=2)
    assert len(capped) == 2 and capped.truncated


def test_a_query_falling_back_from_a_damaged_index_keeps_its_terms(mini_ttl: Path, tmp_path: Path, binds: list,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The index binds the concept (its look-up tables read), then its listing cannot be read: kg query makes the
    index again and kg serve's entry answers from the store, each with the terms already bound, not bound again."""
    from kg.sparql.run import resolve, run_store
    from kg.sparql.store import open_store

    expected = [dict(r) for r in kg.query("papers-by-concept", {"concept": OFFLINE}, graph=mini_ttl)]
    binds.clear()
    graph = _copy(mini_ttl, tmp_path)
    _damage(index_file.index_path(graph), {"listed"})
    assert [dict(r) for r in kg.query("papers-by-concept", {"concept": OFFLINE}, graph=graph)] == expected
    assert binds == [("papers-by-concept", True)]
    assert f"cannot be read (database disk image is malformed); making it again from {graph}" in capsys.readouterr().err

    binds.clear()
    _damage(index_file.index_path(graph), {"listed"})  # the index made again, damaged again
    db = index_file.connect(index_file.index_path(graph))
    try:
        rows = run_store(open_store(graph), resolve("papers-by-concept"), {"concept": OFFLINE}, index=db)
    finally:
        db.close()
    assert [dict(r) for r in rows] == expected and binds == [("papers-by-concept", True)]
    assert "cannot be read (database disk image is malformed); answering from the graph's SPARQL store" in capsys.readouterr().err


def test_a_binding_the_damaged_index_broke_off_is_done_once_on_the_next_backend(mini_ttl: Path, tmp_path: Path,
                                                                                  binds: list) -> None:
    """Every table damaged: the look-up fails, so the concept is bound by the index made again, and only there."""
    graph = _copy(mini_ttl, tmp_path)
    _damage(index_file.index_path(graph))
    assert len(kg.query("papers-by-concept", {"concept": OFFLINE}, graph=graph)) == 1
    assert binds == [("papers-by-concept", False), ("papers-by-concept", True)]


@pytest.mark.parametrize(("query", "params", "backend"), [
    ("top-concepts", {}, "Index"),
    ("papers-by-concept", {"concept": OFFLINE}, "Index"),
    ("paper-graph", {"paper": "p1"}, "Engine"),
    (ADHOC, {"concept": OFFLINE}, "Engine"),
    ("mine.rq", {}, "Engine"),  # a user's file of the same name as a shipped query, not its text
])
def test_kg_query_and_the_serve_entry_take_the_same_route(mini_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           query: str, params: dict, backend: str) -> None:
    from kg.sparql import backends
    from kg.sparql.run import from_text, resolve, run_store
    from kg.sparql.store import open_store

    if query == "mine.rq":
        mine = tmp_path / "top-concepts.rq"
        mine.write_text((ROOT / "queries" / "top-concepts.rq").read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
        query = str(mine)
    routes: list[str] = []
    for kind in ("Index", "Engine"):
        cls = getattr(backends, kind)
        monkeypatch.setattr(cls, "opened", lambda self, q, deadline, _real=cls.opened, _kind=kind: (routes.append(_kind), _real(self, q, deadline))[1])
    via_query = kg.query(query, params, graph=mini_ttl)
    q = from_text(query) if "\n" in query else resolve(query)
    db = index_file.connect(index_file.index_path(mini_ttl))
    try:
        via_serve = run_store(open_store(mini_ttl), q, params, index=db)
    finally:
        db.close()
    assert routes == [backend, backend]
    assert via_query == via_serve


def test_parameters_are_bound_in_one_place() -> None:
    """kg.sparql.catalog.bind is called from one place in kg (kg.sparql.run), not once per backend."""
    places = []
    for path in sorted((ROOT / "kg").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ((isinstance(node.func, ast.Name) and node.func.id == "bind")
                                               or (isinstance(node.func, ast.Attribute) and node.func.attr == "bind"
                                                   and isinstance(node.func.value, ast.Name) and node.func.value.id == "catalog")):
                places.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert len(places) == 1 and places[0].startswith("kg/sparql/run.py:"), places
