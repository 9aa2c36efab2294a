"""kg build --engine dask on a real distributed.LocalCluster (two worker processes): same triples as a local build."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
from kg.cli import cli
from kg.graph import shards
from kg.pipeline import cluster
from kg.pipeline.build import sample_inputs
from kg.pipeline.plan import Options
from tests.test_remote import _count

distributed = pytest.importorskip("distributed", reason='the dask extra is not installed (pip install "kg[dask]")')
IDENTIFIER = "<http://purl.org/dc/terms/identifier>"


@pytest.fixture(scope="module")
def client(dask_client):
    """The session's Dask cluster (tests/conftest.py): two single-threaded worker processes."""
    return dask_client


@pytest.fixture(scope="module")
def slice2000(corpus_slice: Path) -> Path:
    return corpus_slice


@pytest.fixture(scope="module")
def local2000(corpus_slice: Path) -> set[str]:
    """The slice built locally with its copies of one paper kept apart: a cluster build does not merge them (yet)."""
    import os

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    return {str(t) for t in kg.build([corpus_slice], keep_duplicates=True, jobs=1).triples()}  # jobs=1: see corpus_slice_built


def _union(folder: Path) -> list[str]:
    """Every triple of every shard the manifest lists, as N-Triples text (duplicates kept)."""
    return [str(t) for f in shards.files(folder) for t in kg.graph.files.read_triples(f)]


def test_sample_on_the_cluster_is_the_local_build(client, sample_built, tmp_path: Path, oxigraph: str) -> None:
    out = tmp_path / "sample-shards"
    got = cluster.build(None, out, scheduler=client)
    triples = _union(out)
    assert set(triples) == {str(t) for t in sample_built.triples()}
    assert len(triples) == len(set(triples))  # every triple in exactly one shard
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["papers"] == got.added == len(sample_built.papers) == 38
    assert manifest["triples"] == len(triples) and sum(s["triples"] for s in manifest["shards"]) == len(triples)
    assert manifest["inputs"] == ["icml2024-part1.txt", "icml2024-part2.txt"] and manifest["kg_version"] == kg.__version__
    assert manifest["scheme_versions"] == list(sample_built.scheme.versions)
    (activity,) = manifest["activities"]
    assert f"<{activity['iri']}> <http://www.w3.org/ns/prov#startedAtTime>" in "\n".join(triples)
    assert {p.name for p in out.iterdir()} == {"manifest.json", *(s["file"] for s in manifest["shards"]),
                                                *(s["file"].replace(".nt", ".ids.tsv") for s in manifest["shards"] if s["papers"])}
    # The shard folder pushed through the Graph Store Protocol: every triple arrives.
    target = "https://example.org/graph/shards"
    out_ = CliRunner().invoke(cli, ["push", str(out), "--store", f"{oxigraph}/store", "--graph", target])
    assert out_.exit_code == 0, out_.output
    assert _count(oxigraph, target) == len(set(triples))


def test_two_thousand_papers_on_the_cluster(client, slice2000: Path, local2000: set[str], tmp_path: Path) -> None:
    out = tmp_path / "p2000"
    runner = CliRunner()
    result = runner.invoke(cli, ["build", str(slice2000), "--engine", "dask", "--scheduler", client.scheduler.address, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "2000 papers built" in result.output
    triples = _union(out)
    assert set(triples) == local2000 and len(triples) == len(local2000)


def test_partitions_name_the_right_line(client, slice2000: Path, tmp_path: Path) -> None:
    lines = slice2000.read_text(encoding="utf-8").split("\n")[:300]
    lines[249] = '{"id": "broken", "abstract": '  # line 250, in a later partition
    lines[280] = lines[10]  # a duplicate of line 11
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(kg.InputError, match=rf"^{bad}:250: malformed JSON"):
        cluster.build([bad], tmp_path / "out", scheduler=client, blocksize=60_000)
    got = cluster.build([bad], tmp_path / "out", scheduler=client, blocksize=60_000, options=Options(skip_bad=True))
    assert got.added == 298 and len(shards.read(got.folder).shards) > 5
    assert any(p.startswith(f"skipped {bad}:250: malformed JSON") for p in got.problems)
    assert f"{bad}:281: duplicate id" in "\n".join(got.problems) and f"first at {bad}:11;" in "\n".join(got.problems)


def test_update_adds_new_shards(client, tmp_path: Path) -> None:
    part1, part2 = sample_inputs()
    out = tmp_path / "shards"
    cluster.build([part1], out, scheduler=client)
    before = shards.read(out)
    runner = CliRunner()
    result = runner.invoke(cli, ["build", "--engine", "dask", "--scheduler", client.scheduler.address, "--update", str(out), str(part1), str(part2)])
    assert result.exit_code == 0, result.output
    after = shards.read(out)
    assert after.shards[: len(before.shards)] == before.shards and len(after.shards) > len(before.shards)
    assert after.papers == 38 and len(after.activities) == 2
    # The same triples as a local graph of part 1 updated with part 2.
    graph = kg.write(kg.build([part1]), tmp_path / "local.ttl")
    kg.update(graph, [part1, part2])
    assert set(_union(out)) == {str(t) for t in kg.graph.files.read_triples(graph)}
    again = runner.invoke(cli, ["build", "--engine", "dask", "--scheduler", client.scheduler.address, "--update", str(out), str(part2)])
    assert again.exit_code == 0 and "up to date" in again.output and shards.read(out) == after


def test_a_killed_worker_loses_and_duplicates_nothing(client, slice2000: Path, tmp_path: Path) -> None:
    papers = tmp_path / "p600.jsonl"
    papers.write_text("".join(slice2000.read_text(encoding="utf-8").splitlines(keepends=True)[:600]), encoding="utf-8")
    out = tmp_path / "killed"
    pids = client.run(os.getpid)
    done: dict = {}
    thread = threading.Thread(target=lambda: done.update(r=cluster.build([papers], out, scheduler=client, blocksize=60_000)))
    thread.start()
    deadline = time.monotonic() + 120
    while not list(out.glob("part-*-0000[1-9].nt")) and time.monotonic() < deadline:
        time.sleep(0.02)
    victim = min(pids.values())
    os.kill(victim, signal.SIGKILL)  # mid-build: a shard written, the rest still to come
    thread.join(300)
    assert "r" in done, "the build did not finish after a worker was killed"
    assert victim not in client.run(os.getpid).values()  # the worker really died (and was replaced)
    assert done["r"].manifest.papers == 600 and len(done["r"].manifest.shards) >= 8
    triples = _union(out)
    assert len(triples) == len(set(triples)) == done["r"].manifest.triples  # nothing written twice
    ids = Counter(t.split(" ", 2)[2] for t in triples if f" {IDENTIFIER} " in t)
    want = {json.dumps(json.loads(line)["id"]) for line in papers.read_text(encoding="utf-8").splitlines()}
    assert set(ids) == want and set(ids.values()) == {1}  # every paper, once


def test_a_scheme_that_needs_corpus_counts_is_refused_and_leaves_nothing(client, tmp_path: Path) -> None:
    folder = Path(__file__).parent / "fixtures" / "two-topics"
    out = tmp_path / "refused"
    with pytest.raises(kg.UsageError, match="local engine"):
        cluster.build([folder / "papers.jsonl"], out, scheduler=client, options=Options(schemes=(folder / "scheme.ttl",), default_scheme=False))
    assert not out.exists() or not list(out.iterdir())


def test_two_updates_of_one_folder_at_once_lose_no_paper(client, tmp_path: Path) -> None:
    """Issue 30 M4: both updates succeeded and one's papers were on disk but listed in no manifest."""
    part1, part2 = sample_inputs()
    out = tmp_path / "shards"
    cluster.build([part1], out, scheduler=client)
    tiny = Path(__file__).parent / "fixtures" / "tiny.jsonl"
    errors: list[BaseException] = []

    def update(inputs: list[Path]) -> None:
        try:
            cluster.build(inputs, out, scheduler=client, update=True)
        except BaseException as exc:  # reported below
            errors.append(exc)

    runs = [threading.Thread(target=update, args=([part2],)), threading.Thread(target=update, args=([tiny],))]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert not errors
    manifest = shards.read(out)
    tiny_papers = len({json.loads(line)["id"] for line in tiny.read_text().splitlines() if line.strip()})
    assert manifest.papers == 38 + tiny_papers and len(manifest.activities) == 3
    listed = {s.file for s in manifest.shards}
    assert {p.name for p in out.glob("part-*.nt")} == listed  # no shard on disk that no manifest lists
