"""A shard folder (kg build --engine dask) is a graph to every command that reads one: the same answers as the file
a local build writes of the same papers, its derived files stamped with its manifest, writes refused with advice."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.endpoint import snapshot
from kg.graph import files, index_file, stamp
from kg.graph.handle import GraphFile
from kg.pipeline import cluster
from kg.pipeline.build import sample_inputs
from kg.pipeline.plan import Options
from kg.sparql import store

pytest.importorskip("distributed", reason='the dask extra is not installed (pip install "kg[dask]")')

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n"


@pytest.fixture(scope="module")
def pair(dask_client, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The bundled sample twice: as the file `kg build` writes and as the folder a cluster build writes, at one build time."""
    where = tmp_path_factory.mktemp("pair")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the session's sample_built may have been built before it was set
        graph = kg.write(kg.build(), where / "icml2024.ttl")
        folder = where / "icml2024-shards"
        cluster.build(None, folder, scheduler=dask_client)
    return graph, folder


def _ok(args: list[str], stdin: str | None = None) -> str:
    result = CliRunner().invoke(cli, args, input=stdin)
    assert result.exit_code == 0, result.output
    return result.stdout


def _one_line_error(args: list[str], *parts: str) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args", [["top-concepts"], ["papers-by-concept", "-p", "concept=reinforcement learning"], ["-"]],
                         ids=["top-concepts", "papers-by-concept", "ad-hoc-count"])
def test_a_query_on_the_folder_gives_the_rows_of_the_file(pair: tuple[Path, Path], args: list[str]) -> None:
    graph, folder = pair
    stdin = COUNT if args == ["-"] else None
    on_file = _ok(["query", *args, "--graph", str(graph), "-f", "csv"], stdin)
    on_folder = _ok(["query", *args, "--graph", str(folder), "-f", "csv"], stdin)
    assert on_folder == on_file and on_file.count("\n") > 1, on_folder
    if args == ["-"]:  # the engine ran it, on the store loaded from the shards, beside the folder
        assert store.fresh_folder(folder) is not None and store.store_dir(folder) == folder.with_name(folder.name + ".oxigraph")
    else:  # the query index answered, made from a parse of the shards, beside the folder
        assert index_file.fresh(folder) == folder.with_name(folder.name + ".kg-query.sqlite")


def test_the_handle_reads_a_folder_as_its_listed_shards(pair: tuple[Path, Path], tmp_path: Path) -> None:
    graph, folder = pair
    handle = GraphFile.existing(folder)
    assert handle.format == "nt"
    assert {str(t) for t in handle.parse()} == {str(t) for t in files.parse(graph)}
    assert stamp.stamp(folder) == {**stamp.stamp(folder / "manifest.json"), "source": folder.name}
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / "part-unlisted-00001.nt").write_text("<urn:x:a> <urn:x:b> <urn:x:c> .\n", encoding="utf-8")
    assert "<urn:x:a>" not in {str(t.subject) for t in GraphFile.existing(copy).parse()}  # the manifest is the commit point


def test_report_render_and_export_read_the_folder(pair: tuple[Path, Path], tmp_path: Path) -> None:
    graph, folder = pair
    _ok(["report", str(folder), "-o", str(tmp_path / "x.html")])
    assert "<html" in (tmp_path / "x.html").read_text(encoding="utf-8")[:500].lower()
    _ok(["export", str(folder), "-o", str(tmp_path / "x.ttl")])
    assert {str(t) for t in files.read_triples(tmp_path / "x.ttl")} == {str(t) for t in files.read_triples(graph)}
    _ok(["render", str(folder), "-o", str(tmp_path / "view.html")])
    assert (tmp_path / "view.html").stat().st_size > 10_000
    _ok(["export", str(folder), "-o", str(tmp_path / "links.csv")])
    _ok(["export", str(graph), "-o", str(tmp_path / "links-file.csv")])
    assert sorted((tmp_path / "links.csv").read_text().splitlines()) == sorted((tmp_path / "links-file.csv").read_text().splitlines())


def test_analyze_reads_the_folder_and_writes_a_file_never_the_folder(pair: tuple[Path, Path], tmp_path: Path) -> None:
    graph, folder = pair
    manifest = (folder / "manifest.json").read_bytes()
    _one_line_error(["analyze", str(folder)], f"{folder}: is a sharded graph", "-o")
    _one_line_error(["analyze", str(graph), "-o", str(folder)], f"{folder}: is a sharded graph")
    _ok(["analyze", str(folder), "-o", str(tmp_path / "analysed.ttl")])
    assert (folder / "manifest.json").read_bytes() == manifest
    top = _ok(["query", "top-concepts", "--graph", str(tmp_path / "analysed.ttl"), "-f", "csv"])
    assert top == _ok(["query", "top-concepts", "--graph", str(graph), "-f", "csv"])


def test_a_query_that_reads_the_analysis_says_how_to_analyse_a_folder(pair: tuple[Path, Path]) -> None:
    _, folder = pair
    result = CliRunner().invoke(cli, ["query", "communities", "--graph", str(folder)])
    assert result.exit_code == 0, result.output
    assert f"run `kg analyze {folder} -o {folder.name}-analysed.ttl`" in result.stderr, result.stderr


def test_a_local_update_of_a_folder_is_refused_with_what_to_do(pair: tuple[Path, Path]) -> None:
    _, folder = pair
    part1, _ = sample_inputs()
    _one_line_error(["build", "--update", str(folder), str(part1)], f"{folder}: is a sharded graph", "--engine dask")


def test_the_index_and_store_of_a_folder_go_stale_after_an_update(dask_client, tmp_path: Path) -> None:
    part1, part2 = sample_inputs()
    folder = tmp_path / "shards"
    cluster.build([part1], folder, scheduler=dask_client)
    before = _ok(["query", "top-concepts", "--graph", str(folder), "-f", "csv"])
    _ok(["query", "-", "--graph", str(folder), "-f", "csv"], COUNT)
    index, version = index_file.fresh(folder), store.fresh_folder(folder)
    assert index is not None and version is not None
    _ok(["build", "--engine", "dask", "--scheduler", dask_client.scheduler.address, "--update", str(folder), str(part1), str(part2)])
    assert index_file.fresh(folder) is None and store.fresh_folder(folder) is None
    after = _ok(["query", "top-concepts", "--graph", str(folder), "-f", "csv"])
    assert after != before and index_file.fresh(folder) is not None
    counted = _ok(["query", "-", "--graph", str(folder), "-f", "csv"], COUNT)
    assert int(counted.split()[-1]) == len({str(t) for t in files.parse(folder)})


def test_a_folder_without_a_manifest_keeps_its_one_line_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for args in (["report", str(plain)], ["export", str(plain)], ["query", "top-concepts", "--graph", str(plain)],
                 ["query", "-", "--graph", str(plain)], ["serve", str(plain)], ["push", str(plain), "--store", "http://127.0.0.1:9/store"]):
        _one_line_error(args, f"{plain}: is a directory; pass a graph file in it", "or a shard folder (one holding manifest.json")
    os.mkdir(tmp_path / "broken")
    (tmp_path / "broken" / "manifest.json").write_text("{", encoding="utf-8")
    _one_line_error(["query", "top-concepts", "--graph", str(tmp_path / "broken")], "manifest.json: not a kg shard manifest")


def test_serve_pins_the_folder_as_it_is(pair: tuple[Path, Path]) -> None:
    """kg serve's snapshot of a folder: its listed shards and manifest hard-linked into a pinned folder (a later
    update adds shards and rewrites the manifest; the pinned one keeps its own), its index and store with it."""
    _, folder = pair
    taken = snapshot.take(folder)
    try:
        assert taken.folder is not None and taken.graph != folder and taken.graph.is_dir()
        assert taken.index is not None and taken.store is not None
        assert {str(t) for t in files.parse(taken.graph)} == {str(t) for t in files.parse(folder)}
        assert (taken.graph / "manifest.json").read_bytes() == (folder / "manifest.json").read_bytes()
        assert os.stat(taken.graph / "manifest.json").st_ino == os.stat(folder / "manifest.json").st_ino
        assert index_file.fresh(taken.graph) == taken.index  # the pinned index describes the pinned folder
    finally:
        snapshot.release(taken)
    assert not taken.folder.exists()


@pytest.mark.parametrize("memory", [True, False], ids=["memory", "on-disk"])
def test_kg_serve_answers_from_the_folder_as_from_the_file(pair: tuple[Path, Path], memory: bool) -> None:
    from kg.endpoint.app import make_app
    from tests.test_serve import call

    answers = []
    for graph in pair:
        app = make_app(graph, workers=1, timeout=20.0, memory=memory)
        try:
            named = call(app, path="/queries/top-concepts", query={"format": "csv"})
            typed = call(app, query={"query": COUNT, "format": "csv"})
            assert named[0] == typed[0] == 200, (named, typed)
            answers.append((named[2], typed[2]))
        finally:
            app.close()
    assert answers[0] == answers[1] and answers[0][0].count(b"\n") > 1


def test_a_rebuild_of_the_same_papers_writes_over_no_shard_the_manifest_lists(dask_client, tmp_path: Path) -> None:
    """The folder's stamp is its manifest's (kg.graph.stamp.stamped), which holds while no shard a manifest lists is
    written again. A rebuild of the same papers named its shards as the first build had and wrote over them before
    its new manifest: a rebuild stopped there left the old manifest listing the new shards, and the index made from
    the old ones still fresh."""
    from kg.graph import shards

    part1, _ = sample_inputs()
    folder = tmp_path / "shards"
    cluster.build([part1], folder, scheduler=dask_client)
    first = {f.name for f in shards.files(folder)}
    _ok(["query", "top-concepts", "--graph", str(folder), "-f", "csv"])
    assert index_file.fresh(folder) is not None
    cluster.build([part1], folder, scheduler=dask_client, options=Options(threshold=0.99))
    second = {f.name for f in shards.files(folder)}
    assert not first & second, "a rebuild wrote over shards the old manifest listed"
    assert not any((folder / name).exists() for name in first)  # removed once the new manifest was written
    assert index_file.fresh(folder) is None
    cluster.build([part1], folder, scheduler=dask_client)
    assert not second & {f.name for f in shards.files(folder)}


def test_a_broken_shard_is_named_when_the_store_is_loaded(pair: tuple[Path, Path], tmp_path: Path) -> None:
    """The store loads a folder's shards as one stream; a syntax error still names the shard and its line."""
    from kg.graph import shards

    _, folder = pair
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    bad = shards.files(copy)[1]
    lines = bad.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = "<urn:x:a> <urn:x:b> .\n"
    bad.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(kg.InputError, match=rf"^{bad}: not valid RDF \(.*line 3"):
        store.in_memory(copy)


def test_a_local_build_into_a_folder_is_refused_before_it_extracts(pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import kg.pipeline.build

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("extracted before refusing the output")

    monkeypatch.setattr(kg.pipeline.build, "build", no_build)
    _, folder = pair
    part1, _ = sample_inputs()
    result = CliRunner().invoke(cli, ["build", str(part1), "-o", str(folder), "--no-render", "--no-store"])
    assert result.exit_code == 1 and result.output.startswith(f"Error: {folder}: is a sharded graph"), result.output
