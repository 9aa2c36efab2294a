"""Every named query gives the same rows, in the same order, as the answers recorded before the query side was rebuilt.

The fixtures hold the analyzed sample graph and a 2,000-paper slice of the 21k-paper corpus (by its hash) with
each query's answers as TSV (rows in order; a CONSTRUCT's triples sorted). They are recorded from the engine
(the portable .rq on pyoxigraph) and compared through the public API, which answers from the query index
where a NAME.sql exists: the recording is the specification's answer. The whole 21k corpus, analysed, is
compared with the engine live (`-m slow`: minutes). Re-record only on purpose:

    python -m tests.test_same_answers --record
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import write_analyzed

FIXTURES = Path(__file__).parent / "fixtures" / "answers"
SAMPLE_GRAPH = FIXTURES / "sample-analyzed.ttl.gz"
CORPUS = Path(__file__).parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
SLICE = 2000


def answer_text(graph: Path, name: str, params: dict[str, str], in_engine: bool = False) -> str:
    """One query's answer through the public API (or, `in_engine`, the engine alone), as TSV (a graph answer as
    sorted N-Triples lines)."""
    import kg

    if in_engine:
        from kg.sparql.run import resolve, run_store
        from kg.sparql.store import open_store

        results = run_store(open_store(graph), resolve(name), params)
    else:
        results = kg.query(name, params, graph=graph)
    if results.kind == "graph":
        return "".join(sorted(results.serialize("nt").decode("utf-8").splitlines(keepends=True)))
    return results.serialize("tsv").decode("utf-8")


def cases(graph: Path) -> list[tuple[str, dict[str, str]]]:
    """The queries and parameters to compare, chosen from the graph (labels, so label lookup is part of it) by the
    engine's answers, as the recorded answers are: nothing recorded comes from the query index under test."""

    def rows(name: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
        from kg.sparql.run import resolve, run_store
        from kg.sparql.store import open_store

        return list(run_store(open_store(graph), resolve(name), params or {}))

    top = [r["label"] for r in rows("top-concepts")]
    papers = sorted(r["identifier"] for r in rows("papers-by-concept", {"concept": top[0]}))
    paper = papers[0]
    mention = rows("concepts-of-paper", {"paper": paper})[0]["label"]
    concepts = [*top[:3], *(["machine learning"] if "machine learning" not in top[:3] else [])]
    out: list[tuple[str, dict[str, str]]] = [
        ("top-concepts", {}), ("co-occurrence", {}), ("co-occurrence", {"min": "3"}), ("concept-tree", {}),
        ("concept-tree", {"root": top[0]}), ("trend", {}), ("trend", {"concept": top[1]}), ("proposed-methods", {}),
        ("communities", {}), ("communities", {"min": "1"}), ("related-concepts", {}), ("related-concepts", {"concept": top[0]}),
        ("similar-papers", {}), ("similar-papers", {"paper": paper}), ("concepts-of-paper", {"paper": paper}),
        ("evidence", {"paper": paper, "concept": mention}), ("paper-graph", {"paper": paper}),
        ("bridging-papers", {"a": top[0], "b": top[1]}), ("bridging-papers", {"a": top[1], "b": top[2]}),
    ]
    out += [("papers-by-concept", {"concept": c}) for c in concepts]
    out += [("search", {"words": w}) for w in ("learning", "reinforcement learning", "human feedback", "xyzzy", "de")]
    return out


def record(graph: Path) -> list[dict[str, Any]]:
    """Each case's answer from the engine (the .rq on pyoxigraph), the oracle the query index is compared with."""
    return [{"name": n, "params": p, "answer": answer_text(graph, n, p, in_engine=True)} for n, p in cases(graph)]


def _slice_graph(folder: Path) -> Path:
    """The first SLICE papers of the corpus built, written and analysed, as tests/conftest.py's
    corpus_slice_analyzed is made (from a file of the same name, so the graph is the same)."""
    import kg

    source = folder / "slice.jsonl"
    with CORPUS.open(encoding="utf-8") as stream:
        source.write_text("".join(next(stream) for _ in range(SLICE)), encoding="utf-8")
    return write_analyzed(kg.build([source]), folder)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load(name: str) -> dict[str, Any]:
    return json.loads(gzip.decompress((FIXTURES / name).read_bytes()))


def _compare(graph: Path, recorded: list[dict[str, Any]]) -> None:
    assert len(recorded) >= 25
    for case in recorded:
        assert answer_text(graph, case["name"], case["params"]) == case["answer"], (case["name"], case["params"])


def test_the_sample_gives_the_recorded_answers(tmp_path: Path) -> None:
    graph = tmp_path / "sample.ttl"
    graph.write_bytes(gzip.decompress(SAMPLE_GRAPH.read_bytes()))
    recorded = _load("sample-answers.json.gz")["cases"]
    assert sum(c["answer"].count("\n") for c in recorded) > 500  # real answers, not empty ones
    _compare(graph, recorded)


def test_a_corpus_slice_gives_the_recorded_answers(corpus_slice_analyzed: Path) -> None:
    """Skips only where the shared corpus is absent; a slice that builds another graph than the recorded one fails
    (a skip there left the test green without running whenever extraction changed)."""
    graph = corpus_slice_analyzed
    data = _load("slice-answers.json.gz")
    _same_graph(graph, data["graph"])
    _compare(graph, data["cases"])


def _same_graph(graph: Path, recorded: str) -> None:
    assert _digest(graph) == recorded, (
        f"{graph.name} is another graph than the one the answers were recorded from (extraction or analysis changed): "
        "if that is on purpose, re-record with `python -m tests.test_same_answers --record` and review the diff"
    )


def test_a_stale_recording_fails_and_says_how_to_re_record(tmp_path: Path) -> None:
    graph = tmp_path / "slice.ttl"
    graph.write_text("<https://example.org/a> <https://example.org/b> <https://example.org/c> .\n", encoding="utf-8")
    _same_graph(graph, _digest(graph))
    with pytest.raises(AssertionError, match=r"slice\.ttl is another graph .*python -m tests\.test_same_answers --record"):
        _same_graph(graph, "0" * 64)


def test_the_recording_asks_only_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded answers and the cases' parameters come from the .rq on pyoxigraph, never from the query index
    (the SQL path under test) nor the public API that uses it."""
    import kg
    from kg.sparql import index as qindex

    graph = tmp_path / "sample.ttl"
    graph.write_bytes(gzip.decompress(SAMPLE_GRAPH.read_bytes()))

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the recording asked the code under test")

    monkeypatch.setattr(kg, "query", refused)
    monkeypatch.setattr(qindex, "answer", refused)
    recorded = record(graph)
    assert len(recorded) >= 25 and sum(c["answer"].count("\n") for c in recorded) > 500


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_file(), reason="needs ../shared/corpora/ml-abstracts.jsonl")
def test_the_whole_corpus_gives_the_engines_answers(tmp_path: Path) -> None:
    """At 21,368 papers, analysed: every case answered through the API (the index) is the engine's answer to the .rq
    (minutes: run with -m slow)."""
    import kg

    graph = kg.write(kg.build([CORPUS], jobs=2), tmp_path / "corpus.ttl")
    kg.analyze(graph, graph)
    found = cases(graph)
    assert len(found) >= 25
    for name, params in found:
        assert answer_text(graph, name, params) == answer_text(graph, name, params, in_engine=True), (name, params)


def main() -> None:
    """Record the fixtures from the current code (run from the repository root)."""
    import os
    import tempfile

    os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
    FIXTURES.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="kg-answers-"))
    try:
        import kg

        if not SAMPLE_GRAPH.is_file():
            built = kg.write(kg.build(), folder / "built.ttl")
            kg.analyze(built, folder / "analyzed.ttl")
            SAMPLE_GRAPH.write_bytes(gzip.compress((folder / "analyzed.ttl").read_bytes(), mtime=0))
        sample = folder / "sample.ttl"
        sample.write_bytes(gzip.decompress(SAMPLE_GRAPH.read_bytes()))
        (FIXTURES / "sample-answers.json.gz").write_bytes(gzip.compress(json.dumps({"cases": record(sample)}).encode(), mtime=0))
        if CORPUS.is_file():
            graph = _slice_graph(folder)
            data = {"graph": _digest(graph), "cases": record(graph)}
            (FIXTURES / "slice-answers.json.gz").write_bytes(gzip.compress(json.dumps(data).encode(), mtime=0))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__" and "--record" in sys.argv:
    main()
