"""One plan for build and update on every engine (issue #37): the same inputs give the same graph, changed abstracts included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.graph import shards
from kg.graph.files import read_triples
from kg.pipeline import cluster
from kg.pipeline.plan import Entry, Held, Options, plan

DCTERMS = "http://purl.org/dc/terms/"


@pytest.fixture(scope="module")
def old_and_new(corpus_slice: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """300 papers of the corpus, then the same 300 with 5 abstracts changed and 20 papers more."""
    lines = corpus_slice.read_text(encoding="utf-8").splitlines()
    folder = tmp_path_factory.mktemp("plan")
    old = folder / "old.jsonl"
    old.write_text("\n".join(lines[:300]) + "\n", encoding="utf-8")
    records = [json.loads(line) for line in lines[:320]]
    for i in (0, 70, 140, 210, 299):
        records[i]["abstract"] = "We revisit this study with reinforcement learning from human feedback. " + records[i]["abstract"]
    new = folder / "new.jsonl"
    new.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return old, new


def _abstracts(triples: list) -> dict[str, str]:
    """Each paper's id and stored abstract."""
    ids = {t.subject.value: t.object.value for t in triples if t.predicate.value == DCTERMS + "identifier"}
    return {ids[t.subject.value]: t.object.value for t in triples if t.predicate.value == DCTERMS + "abstract"}


def test_local_and_dask_updates_with_changed_abstracts_leave_the_same_papers(dask_client, old_and_new: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 37: on Dask the 5 changed papers kept their old abstracts (with a warning); the local update replaced them."""
    old, new = old_and_new
    local = kg.write(kg.build([old]), tmp_path / "local.ttl")
    updated = kg.update(local, [new])
    assert (updated.added, updated.replaced, updated.unchanged) == (20, 5, 295)
    folder = tmp_path / "shards"
    cluster.build([old], folder, scheduler=dask_client)
    result = cluster.build([new], folder, scheduler=dask_client, update=True)
    local_triples, sharded = list(read_triples(local)), [t for f in shards.files(folder) for t in read_triples(f)]
    abstracts = _abstracts(local_triples)
    assert len(abstracts) == 320 and _abstracts(sharded) == abstracts
    assert (result.added, result.replaced, result.unchanged) == (20, 5, 295) and not result.problems
    assert "We revisit this study" in abstracts[json.loads(new.read_text(encoding="utf-8").splitlines()[70])["id"]]
    assert {str(t) for t in sharded} == {str(t) for t in local_triples}
    assert shards.read(folder).papers == 320
    again = cluster.build([new], folder, scheduler=dask_client, update=True)
    assert (again.added, again.unchanged) == (0, 320)


def test_build_and_export_to_jsonld_give_the_same_triples(tmp_path: Path) -> None:
    runner = CliRunner()
    ttl, built, exported = tmp_path / "built.ttl", tmp_path / "built.jsonld", tmp_path / "exported.jsonld"
    for output in (ttl, built):
        assert runner.invoke(cli, ["build", "--no-render", "--no-store", "-o", str(output)]).exit_code == 0
    assert runner.invoke(cli, ["export", str(ttl), "-o", str(exported)]).exit_code == 0
    assert {str(t) for t in read_triples(built)} == {str(t) for t in read_triples(exported)} == {str(t) for t in read_triples(ttl)}


def test_the_plan_tells_new_changed_unchanged_and_duplicate_papers() -> None:
    held = Held({"a": "a", "b": "b"}, {"a": "h1", "b": "h2"}, {"10.1/x": "b"})
    got = plan([Entry("a", "h1", "f:1"), Entry("b", "h9", "f:2"), Entry("c", "h1", "f:3"), Entry("d", "h4", "f:4", "10.1/x"),
                Entry("A", "h5", "f:5")], held)
    assert got.extract == ("b", "A") and got.changed == {"b": "b"} and got.segments["A"] != "a"
    assert (got.added, got.unchanged, got.duplicates) == (1, 3, 2)
    assert "f:3: already in the graph as <https://w3id.org/kg/paper/a> (same abstract" in got.problems[0]
    assert plan([Entry("c", "h1", "f:3")], held, keep_duplicates=True).extract == ("c",)


def test_options_refuse_a_bad_base_before_any_work() -> None:
    with pytest.raises(kg.KgError, match="base"):
        Options(base="not an iri")
