"""The build verb at scale: --jobs gives the same bytes, --update adds only what is new, progress stays quiet."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.graph.files import read_triples
from kg.graph.vocabulary import DCTERMS, OA, PROV

CORPUS = Path(__file__).parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


@pytest.fixture(scope="module")
def corpus_lines() -> list[str]:
    """A few hundred real abstracts: enough for several extraction chunks, quick to build."""
    if not CORPUS.is_file():
        pytest.skip(f"{CORPUS} is not here")
    lines = CORPUS.read_text(encoding="utf-8").split("\n")
    return [line for line in lines[:: len(lines) // 600][:600] if line.strip()]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _build(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(cli, ["build", "--no-render", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _objects(ttl: Path, predicate: str) -> list[tuple[str, str]]:
    return [(t.subject.value, t.object.value) for t in read_triples(ttl) if t.predicate.value == predicate]


@pytest.fixture(scope="module")
def one_ttl(tmp_path_factory: pytest.TempPathFactory, corpus_lines: list[str]) -> Path:
    """The papers built by `kg build --jobs 1` (extracted in the one process), once for the module: the graph the
    builds with workers and the full build beside an update are compared with."""
    d = tmp_path_factory.mktemp("one")
    corpus = _write(d / "c.jsonl", corpus_lines)
    with pytest.MonkeyPatch.context() as mp:  # a module fixture runs before the autouse one that sets the build time
        mp.setenv("SOURCE_DATE_EPOCH", "1700000000")
        _build(CliRunner(), str(corpus), "-o", str(d / "one.ttl"), "--jobs", "1")
    return d / "one.ttl"


def test_jobs_2_writes_the_same_bytes_as_jobs_1_and_the_first_papers_while_the_workers_extract_the_rest(
    tmp_path: Path, corpus_lines: list[str], one_ttl: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers give the bytes of one process (the CLI's --jobs reaches kg.build: the default-build test below).
    With everything after extraction in the parent, waiting for all the papers left a core idle for half the build."""
    from kg.pipeline import parallel, triples

    received: list[int] = []
    seen: dict[str, int] = {}
    in_workers, paper_triples = parallel._in_workers, triples.paper_triples

    def counting(*args, **kwargs):
        chunks = in_workers(*args, **kwargs)

        def each():
            for chunk in chunks:
                received.append(len(chunk))
                yield chunk

        return each()

    def watched(*args, **kwargs):
        for i, t in enumerate(paper_triples(*args, **kwargs)):
            if i == 0:
                seen["chunks read at the first paper's triples"] = len(received)
            yield t

    monkeypatch.setattr(parallel, "_in_workers", counting)
    monkeypatch.setattr(triples, "paper_triples", watched)
    corpus = _write(tmp_path / "c.jsonl", corpus_lines)
    kg.write(kg.build([corpus], jobs=2), tmp_path / "two.ttl")
    assert sum(received) == len(corpus_lines) and len(received) >= 3
    assert seen["chunks read at the first paper's triples"] == 1
    assert len(_objects(one_ttl, DCTERMS + "identifier")) == len(corpus_lines)
    assert len(_objects(one_ttl, OA + "hasBody")) > 0
    assert (tmp_path / "two.ttl").read_bytes() == one_ttl.read_bytes()


class Failing:
    """An extractor that fails on one paper; at module level, so the spawned workers unpickle it."""

    per_paper = True

    def __init__(self, run: object, bad: str) -> None:
        self.run, self.bad = run, bad

    def __call__(self, papers):
        if any(p.id == self.bad for p in papers):
            raise ValueError("boom")
        return self.run(papers)  # type: ignore[operator]


def test_jobs_2_names_the_record_a_worker_fails_on(tmp_path: Path, corpus_lines: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from kg import extract

    bad = json.loads(corpus_lines[400])["id"]
    make = extract.make_extractor
    monkeypatch.setattr(extract, "make_extractor", lambda *args, **kwargs: Failing(make(*args, **kwargs), bad))
    corpus = _write(tmp_path / "c.jsonl", corpus_lines)
    with pytest.raises(kg.InputError, match=r"c\.jsonl:401: extraction failed on this record \(ValueError: boom\)"):
        kg.write(kg.build([corpus], jobs=2), tmp_path / "two.ttl")
    assert not (tmp_path / "two.ttl").exists()


_HERE: list[int] = []  # the papers of each chunk SlowInWorkers extracted in the process that made it


class SlowInWorkers:
    """An extractor that is slow in the worker processes and counts the chunks it extracts in the process that made it.

    The process that made it starts its first chunk only once a worker has started one (`started`, a file the
    worker makes): on a busy machine the spawned worker took longer to start than the writer took to extract every
    chunk, and the test saw no chunk in the worker."""

    per_paper = True

    def __init__(self, run: object, started: Path) -> None:
        import os

        self.run, self.parent, self.started = run, os.getpid(), started

    def __call__(self, papers):
        import os
        import time

        if os.getpid() == self.parent:
            deadline = time.monotonic() + 120
            while not self.started.exists() and time.monotonic() < deadline:
                time.sleep(0.01)  # a wait for the worker's start, not a timing: it ends when the file appears
            _HERE.append(len(papers))
        else:
            self.started.touch()
            time.sleep(0.5)  # a worker far behind the writer, as one worker is on 2 CPUs
        return self.run(papers)  # type: ignore[operator]


def test_the_writer_extracts_the_next_chunks_instead_of_waiting_for_its_worker(
        tmp_path: Path, corpus_lines: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """On 2 CPUs the one worker extracted while the writer waited for it (decision 0064); the same bytes."""
    from kg import extract
    from kg.pipeline import parallel

    corpus = _write(tmp_path / "c.jsonl", corpus_lines)
    kg.write(kg.build([corpus], jobs=1), tmp_path / "one.ttl")
    make = extract.make_extractor
    monkeypatch.setattr(extract, "make_extractor", lambda *args, **kwargs: SlowInWorkers(make(*args, **kwargs), tmp_path / "started"))
    monkeypatch.setattr(parallel, "CHUNK", 50)  # 12 chunks
    _HERE.clear()
    built = kg.build([corpus], jobs=2)
    assert isinstance(built.extractions, parallel.Streamed)
    kg.write(built, tmp_path / "two.ttl")
    assert 0 < sum(_HERE) < len(corpus_lines)  # some chunks here, some in the worker
    assert (tmp_path / "two.ttl").read_bytes() == (tmp_path / "one.ttl").read_bytes()


def test_a_script_without_a_main_guard_builds_with_workers(tmp_path: Path, corpus_lines: list[str]) -> None:
    """The workers are spawned: they must not run again the script that calls kg.build (it failed in each worker)."""
    import subprocess
    import sys

    corpus = _write(tmp_path / "c.jsonl", corpus_lines)
    script = tmp_path / "script.py"
    script.write_text(f"import kg\nbuilt = kg.build([{str(corpus)!r}], jobs=2)\nprint(len(list(built.extractions)))\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(len(corpus_lines))]


def test_jobs_must_be_positive(tmp_path: Path) -> None:
    for given in ("0", "some"):
        result = CliRunner().invoke(cli, ["build", "--no-render", "--jobs", given, "-o", str(tmp_path / "x.ttl")])
        assert result.exit_code == 2 and "--jobs" in result.output and "auto" in result.output
    for jobs in (0, "some"):
        with pytest.raises(kg.UsageError, match="at least 1 or auto"):
            kg.build(jobs=jobs)


def test_jobs_auto_is_a_worker_a_cpu_but_the_writers_beyond_a_few_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 0060: the default build extracts on the idle cores while it writes; a small one does not start workers."""
    import os

    from kg.pipeline import parallel

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert parallel.workers("auto", parallel.AUTO_CHUNKS * parallel.CHUNK) == 0
    assert parallel.workers("auto", parallel.AUTO_CHUNKS * parallel.CHUNK + 1) == 1
    assert parallel.workers(1, 10**6) == 0 and parallel.workers(2, 10) == 2 and parallel.processes("auto") == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert parallel.workers("auto", 10**6) == parallel.AUTO_MAX - 1 and parallel.workers(7, 10) == 7
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert parallel.workers("auto", 10**6) == 0 and parallel.processes("auto") == 1


def test_the_default_build_extracts_in_workers_with_the_same_bytes(
        tmp_path: Path, corpus_lines: list[str], one_ttl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from kg.pipeline import parallel

    corpus = _write(tmp_path / "c.jsonl", corpus_lines)
    runner = CliRunner()
    started: list[int] = []
    streamed = parallel.streamed

    def counted(*args: object, jobs: int, **kwargs: object) -> parallel.Streamed:
        started.append(jobs)
        return streamed(*args, jobs=jobs, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "streamed", counted)
    monkeypatch.setattr(parallel, "AUTO_CHUNKS", 1)  # the 600 papers count as a large build
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    _build(runner, str(corpus), "-o", str(tmp_path / "auto.ttl"))
    assert started == [1]  # one worker extracts, this process writes
    assert (tmp_path / "auto.ttl").read_bytes() == one_ttl.read_bytes()


@pytest.fixture(scope="module")
def updated(tmp_path_factory: pytest.TempPathFactory, corpus_lines: list[str], one_ttl: Path) -> dict:
    """A graph of 90 % of the papers, then --update with the rest (and some old ones again); "full" is the build of
    all of them at once."""
    d = tmp_path_factory.mktemp("update")
    cut = len(corpus_lines) * 9 // 10
    old = _write(d / "old.jsonl", corpus_lines[:cut])
    new = _write(d / "new.jsonl", corpus_lines[cut - 20 :])  # 20 papers the graph has already
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1700000000")
        _build(runner, str(old), "-o", str(d / "graph.ttl"))
        before = (d / "graph.ttl").read_bytes()
        output = _build(runner, "--update", str(d / "graph.ttl"), str(new))
    return {"dir": d, "before": before, "output": output, "cut": cut, "new": new, "old": old, "n": len(corpus_lines), "full": one_ttl}


def test_update_adds_the_new_papers_once(updated: dict) -> None:
    graph = updated["dir"] / "graph.ttl"
    ids = [o for _, o in _objects(graph, DCTERMS + "identifier")]
    assert len(ids) == len(set(ids)) == updated["n"]
    assert f"{updated['n'] - updated['cut']} papers added" in updated["output"]
    assert "20 already in the graph" in updated["output"]
    # The old graph is kept byte for byte at the head of the file: nothing was re-extracted or re-ordered.
    assert graph.read_bytes().startswith(updated["before"])


def test_update_gives_new_papers_their_own_build_activity(updated: dict) -> None:
    graph = updated["dir"] / "graph.ttl"
    activities = {s for s, o in _objects(graph, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type") if o == PROV + "Activity"}
    assert len(activities) == 2
    informed = _objects(graph, PROV + "wasInformedBy")
    assert len(informed) == 1 and informed[0][1] in activities and informed[0][0] in activities
    generated = {}
    for paper, build in _objects(graph, PROV + "wasGeneratedBy"):
        generated.setdefault(build, set()).add(paper)
    assert sorted(len(p) for p in generated.values()) == sorted([updated["cut"], updated["n"] - updated["cut"]])


def test_update_describes_the_new_papers_as_a_full_build_does(updated: dict) -> None:
    """Annotations, subjects and authors of the added papers equal those of a full build (the extractor is per paper)."""
    graph, full = updated["dir"] / "graph.ttl", updated["full"]

    def described(path: Path) -> set:
        skip = {PROV + "wasGeneratedBy", PROV + "wasInformedBy", PROV + "startedAtTime"}
        activity = {t.subject.value for t in read_triples(path) if t.object.value == PROV + "Activity"}
        return {
            (t.subject.value, t.predicate.value, t.object.value)
            for t in read_triples(path)
            if t.predicate.value not in skip and t.subject.value not in activity
        }

    assert described(graph) == described(full)
    # Authors are described once even when they wrote both an old and a new paper.
    names = _objects(graph, "http://xmlns.com/foaf/0.1/name")
    assert len(names) == len({s for s, _ in names})


def test_update_again_changes_nothing(updated: dict, tmp_path: Path) -> None:
    graph = updated["dir"] / "graph.ttl"
    before, stat = graph.read_bytes(), graph.stat()
    result = CliRunner().invoke(cli, ["build", "--no-render", "--update", str(graph), str(updated["old"]), str(updated["new"])])
    assert result.exit_code == 0, result.output
    assert "is up to date" in result.output
    assert graph.read_bytes() == before and graph.stat().st_mtime_ns == stat.st_mtime_ns


def test_update_replaces_a_paper_whose_abstract_changed(tmp_path: Path, corpus_lines: list[str]) -> None:
    import json

    graph = tmp_path / "g.ttl"
    kg.write(kg.build([_write(tmp_path / "a.jsonl", corpus_lines[:30])]), graph)
    record = json.loads(corpus_lines[0])
    record["abstract"] = "We study reinforcement learning and large language models. " + record["abstract"]
    changed = _write(tmp_path / "b.jsonl", [json.dumps(record)])
    result = kg.update(graph, [changed])
    assert (result.added, result.replaced, result.unchanged) == (0, 1, 0)
    abstracts = {s: o for s, o in _objects(graph, DCTERMS + "abstract")}
    assert len(abstracts) == 30 and record["abstract"] in abstracts.values()
    # The old annotations of the paper are gone: every quote still points into the current abstract.
    sources = dict(_objects(graph, OA + "hasSource"))
    selectors = {}
    for target, selector in _objects(graph, OA + "hasSelector"):
        selectors.setdefault(target, []).append(selector)
    starts = dict(_objects(graph, OA + "start"))
    ends = dict(_objects(graph, OA + "end"))
    exact = dict(_objects(graph, OA + "exact"))
    titled = {target for target, _ in _objects(graph, "https://w3id.org/kg/ontology#onProperty")}  # spans of the title
    for target, paper in sources.items():
        if target in titled:
            continue
        pos = next(s for s in selectors[target] if s in starts)
        quote = next(s for s in selectors[target] if s in exact)
        assert abstracts[paper][int(starts[pos]) : int(ends[pos])] == exact[quote]
    from kg.graph import stamp as index

    from .test_index import indexed

    assert indexed(graph) == index.scan(graph)  # the rewritten graph has a fresh index too


def test_update_needs_an_existing_graph_and_inputs(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["build", "--no-render", "--update", str(tmp_path / "missing.ttl"), str(tmp_path / "x.jsonl")])
    assert result.exit_code == 1 and "no such graph file" in result.output
    result = runner.invoke(cli, ["build", "--no-render", "--update", str(tmp_path / "missing.ttl")])
    assert result.exit_code == 1 and "needs the new inputs" in result.output


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path: Path, corpus_lines: list[str]) -> None:
    corpus = _write(tmp_path / "c.jsonl", corpus_lines[:300])
    result = CliRunner().invoke(cli, ["build", "--no-render", str(corpus), "-o", str(tmp_path / "g.ttl")])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_progress_bar_when_asked(tmp_path: Path, corpus_lines: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_PROGRESS_DELAY", "0")  # shown however quick (kg.core.progress shows steps over a second)
    corpus = _write(tmp_path / "c.jsonl", corpus_lines[:300])
    result = CliRunner().invoke(cli, ["build", "--no-render", "--progress", str(corpus), "-o", str(tmp_path / "g.ttl")])
    assert result.exit_code == 0, result.output
    assert "extract:" in result.stderr and "/300 papers" in result.stderr and "writing " in result.stderr


def test_update_leaves_an_index_equal_to_a_scan_of_the_result(updated: dict) -> None:
    from kg.graph import stamp as index

    from .test_index import indexed

    graph = updated["dir"] / "graph.ttl"
    found = indexed(graph)
    assert found is not None and found == index.scan(graph)
    assert len(found.ids) == updated["n"] and len(found.builds) == 2


def test_update_writes_the_same_bytes_with_a_fresh_stale_or_missing_index(tmp_path: Path, corpus_lines: list[str]) -> None:
    import shutil

    from kg.graph import index_file
    from kg.graph import stamp as index

    from .test_index import indexed

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    kg.write(kg.build([_write(tmp_path / "a.jsonl", corpus_lines[:40])]), a / "g.ttl")
    kg.write(kg.build([_write(tmp_path / "b.jsonl", corpus_lines[:30])]), b / "g.ttl")
    new = _write(tmp_path / "new.jsonl", corpus_lines[25:50])
    results = {}
    # "stale" has the index of the 40-paper graph beside the 30-paper one: if it were believed,
    # papers 30-39 would count as already in the graph and never be added.
    for name, index_from in (("fresh", b), ("missing", None), ("stale", a)):
        folder = tmp_path / name
        folder.mkdir()
        graph = folder / "g.ttl"
        shutil.copy2(b / "g.ttl", graph)
        if index_from is not None:
            shutil.copy2(index_file.index_path(index_from / "g.ttl"), index_file.index_path(graph))
        result = kg.update(graph, [new])
        assert (result.added, result.replaced, result.unchanged) == (20, 0, 5), name
        assert indexed(graph) == index.scan(graph), name
        results[name] = graph.read_bytes()
    assert results["fresh"] == results["missing"] == results["stale"]
    ids = [o for _, o in _objects(tmp_path / "stale" / "g.ttl", DCTERMS + "identifier")]
    assert len(ids) == len(set(ids)) == 50


def test_update_with_nothing_new_writes_only_a_missing_index(tmp_path: Path, corpus_lines: list[str]) -> None:
    from kg.graph import index_file
    from kg.graph import stamp as index

    from .test_index import indexed

    graph = tmp_path / "g.ttl"
    source = _write(tmp_path / "a.jsonl", corpus_lines[:10])
    kg.write(kg.build([source]), graph)
    index_file.index_path(graph).unlink()
    before, stat = graph.read_bytes(), graph.stat()
    result = kg.update(graph, [source])
    assert not result.changed and result.unchanged == 10
    assert graph.read_bytes() == before and graph.stat().st_mtime_ns == stat.st_mtime_ns
    assert indexed(graph) == index.scan(graph)
    # To another file: a copy of the same bytes, with its own index.
    result = kg.update(graph, [source], output=tmp_path / "copy.ttl")
    assert (tmp_path / "copy.ttl").read_bytes() == before and indexed(tmp_path / "copy.ttl") == index.scan(graph)
