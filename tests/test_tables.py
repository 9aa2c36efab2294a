"""kg.tables: the persisted store's tables answer the long listings with the engine's rows, in order."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.query import catalog, resolve, run_store
from kg.store import ensure_store, fresh_folder, open_store
from kg.tables import FILE
from tests.test_stats import KGC, _portable, _tricky_graph

LISTING = ("concept", "paper", "identifier", "label", "year", "via", "viaLabel")


class Watched:
    """A store that records the SPARQL it is asked, to tell an answer from the tables from one by the engine."""

    def __init__(self, store: Any) -> None:
        self.store, self.asked = store, []

    def query(self, text: str, *args: Any, **kwargs: Any) -> Any:
        self.asked.append(text)
        return self.store.query(text, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _graph(tmp_path: Path, source: Path) -> Path:
    graph = Path(shutil.copy(source, tmp_path / "g.ttl"))
    ensure_store(graph)
    return graph


def _listing_written(graph: Path, name: str = "papers-by-concept") -> bool:
    db = sqlite3.connect(fresh_folder(graph) / FILE)
    try:
        return db.execute("SELECT value FROM meta WHERE key = ?", (f"answers:{name}",)).fetchone() == (1,)
    finally:
        db.close()


def _concepts(store) -> list[str]:
    """Concepts with papers at or below them (each paper's subjects and what is above them), by IRI."""
    return sorted(s[0].value for s in store.query(
        "SELECT DISTINCT ?c WHERE { ?p <http://purl.org/dc/terms/subject>/<http://www.w3.org/2004/02/skos/core#broader>* ?c . "
        "?c a <http://www.w3.org/2004/02/skos/core#Concept> }"))


@pytest.mark.parametrize("which", ["sample", "tricky", "tricky-shared", "tricky-seed-3"])
def test_papers_by_concept_from_the_tables_for_every_concept(which: str, sample_ttl: Path, tmp_path: Path) -> None:
    source = sample_ttl if which == "sample" else _tricky_graph(tmp_path / "t.ttl", seed=3 if which.endswith("3") else 7,
                                                                   labels="shared" if which.endswith("shared") else "unique")
    graph = _graph(tmp_path, source)
    assert _listing_written(graph)
    store, q = Watched(open_store(graph)), resolve("papers-by-concept")
    concepts = _concepts(store)
    assert len(concepts) >= 12
    nonempty = 0
    for concept in concepts:
        store.asked.clear()
        ours = run_store(store, q, {"concept": concept}, folder=fresh_folder(graph))
        assert not [t for t in store.asked if "ORDER BY" in t], concept  # the tables answered, not the engine
        assert ours.variables == LISTING
        assert list(ours.rows) == _portable(store.store, "papers-by-concept", {"concept": concept}), concept
        nonempty += bool(ours.rows)
    assert nonempty == len(concepts)


def test_a_cycle_and_a_second_parent_roll_up_once(tmp_path: Path) -> None:
    graph = _graph(tmp_path, _tricky_graph(tmp_path / "t.ttl"))
    rows = run_store(open_store(graph), resolve("papers-by-concept"), {"concept": KGC + "c2"}, folder=fresh_folder(graph)).rows
    keys = [(r[1].value, r[5].value, r[4] and r[4].value) for r in rows]
    # c9 is below c2 twice (through its parent c4 and directly): still one row per paper, via and year
    assert len(keys) == len(set(keys)) and KGC + "c9" in {via for _, via, _ in keys}
    # c2 -> c0 -> c11 -> c5 -> c2 is a cycle: each of them has all of them below it, and the walk ends
    top = run_store(open_store(graph), resolve("papers-by-concept"), {"concept": KGC + "c11"}, folder=fresh_folder(graph)).rows
    assert sorted(keys) == sorted((r[1].value, r[5].value, r[4] and r[4].value) for r in top) and KGC + "c11" in {via for _, via, _ in keys}


@pytest.mark.parametrize("which", ["sample", "tricky"])
def test_default_answers_are_stored_and_equal_the_engine(which: str, sample_ttl: Path, tmp_path: Path) -> None:
    graph = _graph(tmp_path, sample_ttl if which == "sample" else _tricky_graph(tmp_path / "t.ttl"))
    store, folder = Watched(open_store(graph)), fresh_folder(graph)
    defaults = [q for q in catalog().values() if not any(p.required for p in q.params)]
    assert {"co-occurrence", "proposed-methods", "top-concepts", "trend"} <= {q.name for q in defaults}
    for q in defaults:
        store.asked.clear()
        ours = run_store(store, q, folder=folder)
        assert store.asked == [], q.name  # read back, nothing run
        assert ours == run_store(store.store, q), q.name
    assert run_store(store, resolve("proposed-methods"), folder=folder).rows  # not vacuous
    # other parameter values run in the engine (unless a NAME.sql answers them), and agree with it
    store.asked.clear()
    top = run_store(store.store, resolve("top-concepts")).rows[0][0].value
    assert run_store(store, resolve("trend"), {"concept": top}, folder=folder) == run_store(store.store, resolve("trend"), {"concept": top})
    assert [t for t in store.asked if "ORDER BY" in t]


def test_the_row_cap_applies_to_stored_answers(sample_ttl: Path, tmp_path: Path) -> None:
    graph = _graph(tmp_path, sample_ttl)
    store, folder = open_store(graph), fresh_folder(graph)
    for name, params in (("co-occurrence", {}), ("papers-by-concept", {"concept": "machine learning"})):
        capped = run_store(store, resolve(name), params, max_rows=5, folder=folder)
        full = run_store(store, resolve(name), params)
        assert capped.truncated and capped.rows == full.rows[:5] and len(full.rows) > 5, name


def test_a_graph_the_tables_cannot_order_runs_in_the_engine(tmp_path: Path) -> None:
    """A paper with two labels: the listing is not written, and papers-by-concept still gives the portable rows."""
    graph = _graph(tmp_path, _tricky_graph(tmp_path / "t.ttl", labels="two"))
    assert not _listing_written(graph)
    store = Watched(open_store(graph))
    for concept in _concepts(store)[:4]:
        store.asked.clear()
        assert list(run_store(store, resolve("papers-by-concept"), {"concept": concept}, folder=fresh_folder(graph)).rows) == \
            _portable(store.store, "papers-by-concept", {"concept": concept})
        assert [t for t in store.asked if "ORDER BY" in t]


def test_a_wrong_order_would_be_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: positions that ignore the year give rows out of the portable order."""
    from kg import tables

    real = tables._listing

    def yearless(facts: dict) -> Any:
        tables, answers = real(facts)
        tables["paper"] = [(p, i, lab, y, n) for n, (p, i, lab, y, _) in enumerate(sorted(tables["paper"], key=lambda r: r[2].value))]
        return tables, answers

    monkeypatch.setattr(tables, "_listing", yearless)
    graph = _graph(tmp_path, _tricky_graph(tmp_path / "t.ttl"))
    store = open_store(graph)
    q = resolve("papers-by-concept")
    assert any(list(run_store(store, q, {"concept": c}, folder=fresh_folder(graph)).rows) != _portable(store, q.name, {"concept": c})
               for c in _concepts(store))


def test_missing_or_damaged_tables_fall_back_to_the_engine(sample_ttl: Path, tmp_path: Path) -> None:
    graph = _graph(tmp_path, sample_ttl)
    expected = {name: kg.query(name, p, graph=graph).rows for name, p in (("co-occurrence", {}), ("papers-by-concept", {"concept": "reinforcement learning"}))}
    assert all(expected.values())
    tables = fresh_folder(graph) / FILE
    for damage in (lambda: tables.write_bytes(b"not a database" * 100), tables.unlink):
        damage()
        assert {name: kg.query(name, p, graph=graph).rows for name, p in (("co-occurrence", {}), ("papers-by-concept", {"concept": "reinforcement learning"}))} == expected


@pytest.mark.parametrize("which", ["sample", "tricky", "tricky-shared"])
def test_bridging_papers_from_the_tables_for_pairs_of_concepts(which: str, sample_ttl: Path, tmp_path: Path) -> None:
    source = sample_ttl if which == "sample" else _tricky_graph(tmp_path / "t.ttl", labels="shared" if which.endswith("shared") else "unique")
    graph = _graph(tmp_path, source)
    assert _listing_written(graph, "bridging-papers")
    store, q = Watched(open_store(graph)), resolve("bridging-papers")
    concepts = [r["concept"] for r in run_store(store.store, resolve("top-concepts"))][:6] if which == "sample" else _concepts(store)
    nonempty = 0
    for a in concepts:
        for b in concepts:
            store.asked.clear()
            ours = run_store(store, q, {"a": a, "b": b}, folder=fresh_folder(graph))
            assert not [t for t in store.asked if "ORDER BY" in t], (a, b)
            assert list(ours.rows) == _portable(store.store, "bridging-papers", {"a": a, "b": b}), (a, b)
            nonempty += bool(ours.rows)
    assert nonempty > len(concepts) ** 2 // 2


@pytest.mark.parametrize("label", ['"concept 3"@de', "<https://example.org/not-a-literal>"])
def test_labels_the_tables_cannot_compare_leave_bridging_and_co_occurrence_to_the_engine(label: str, tmp_path: Path) -> None:
    source = _tricky_graph(tmp_path / "t.ttl")
    text = source.read_text(encoding="utf-8")
    assert '"concept 3"@en' in text
    source.write_text(text.replace('"concept 3"@en', label), encoding="utf-8")
    graph = _graph(tmp_path, source)
    assert _listing_written(graph) and not _listing_written(graph, "bridging-papers") and not _listing_written(graph, "co-occurrence")
    store = Watched(open_store(graph))
    for name, params in (("bridging-papers", {"a": KGC + "c1", "b": KGC + "c3"}), ("co-occurrence", {"min": "2"})):
        store.asked.clear()
        assert list(run_store(store, resolve(name), params, folder=fresh_folder(graph)).rows) == _portable(store.store, name, params)
        assert [t for t in store.asked if "ORDER BY" in t], name


def test_a_wrong_first_label_would_be_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: label ranks in reverse make bridging-papers name the last label, not MIN's,
    and co-occurrence sort pairs with equal counts the wrong way."""
    from kg import tables

    real = tables._listing

    def reversed_ranks(facts: dict) -> Any:
        out, answers = real(facts)
        out["concept"] = [(c, lab, n, -r) for c, lab, n, r in out["concept"]]
        return out, answers

    monkeypatch.setattr(tables, "_listing", reversed_ranks)
    graph = _graph(tmp_path, _tricky_graph(tmp_path / "t.ttl"))
    store, q = open_store(graph), resolve("bridging-papers")
    concepts = _concepts(store)
    assert any(list(run_store(store, q, {"a": a, "b": b}, folder=fresh_folder(graph)).rows) != _portable(store, q.name, {"a": a, "b": b})
               for a in concepts for b in concepts)
    # and co-occurrence lists pairs with equal counts in the wrong order
    assert list(run_store(store, resolve("co-occurrence"), {"min": "2"}, folder=fresh_folder(graph)).rows) != \
        _portable(store, "co-occurrence", {"min": "2"})


@pytest.mark.parametrize("which", ["sample", "tricky", "tricky-shared"])
def test_co_occurrence_from_the_tables_for_any_least_number(which: str, sample_ttl: Path, tmp_path: Path) -> None:
    source = sample_ttl if which == "sample" else _tricky_graph(tmp_path / "t.ttl", papers=160, labels="shared" if which.endswith("shared") else "unique")
    graph = _graph(tmp_path, source)
    assert _listing_written(graph, "co-occurrence")
    store, q = Watched(open_store(graph)), resolve("co-occurrence")
    sizes = set()
    for least in ("-1", "0", "+2", "3", "5", "9", "1000"):
        store.asked.clear()
        ours = run_store(store, q, {"min": least}, folder=fresh_folder(graph))
        assert store.asked == [], least  # no SQL text of the engine ran, not even the stored default's
        assert list(ours.rows) == _portable(store.store, "co-occurrence", {"min": least}), least
        sizes.add(len(ours.rows))
    assert len(sizes) >= (2 if which == "sample" else 4)  # the least number really filters


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), papers=st.integers(1, 60), labels=st.sampled_from(["unique", "shared"]))
def test_generated_graphs_give_the_portable_rows(seed: int, papers: int, labels: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Random hierarchies, subjects, years and labels: the three SQL answers equal the portable queries."""
    folder = tmp_path_factory.mktemp("gen")
    graph = _graph(folder, _tricky_graph(folder / "t.ttl", seed=seed, papers=papers, labels=labels))
    assert all(_listing_written(graph, name) for name in ("papers-by-concept", "bridging-papers", "co-occurrence"))
    store, concepts = open_store(graph), [KGC + f"c{i}" for i in (0, 3, 4, 9, 11)]
    cases = [("papers-by-concept", {"concept": c}) for c in concepts] + [("co-occurrence", {"min": m}) for m in ("0", "2")]
    cases += [("bridging-papers", {"a": a, "b": b}) for a in concepts[:3] for b in concepts[2:]]
    for name, params in cases:
        assert list(run_store(store, resolve(name), params, folder=fresh_folder(graph)).rows) == _portable(store, name, params), (name, params)
