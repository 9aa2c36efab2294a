"""A shard folder is held to what a graph file is held to (issue #36: H1, H2, H5, M1 and two low findings).

Each test builds a hostile folder by hand (a manifest and the files it lists) and runs the real commands on it:
what they read, delete or write must stay the folder's own listed N-Triples shards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kg.cli import cli
from kg.core.errors import InputError, UsageError
from kg.graph import index_file, shards
from kg.pipeline.plan import Options

from .test_entity_expansion import RDF, laughs

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n"
TRIPLE = "<http://example.org/s> <http://example.org/p> <http://example.org/o> .\n"


def manifest(folder: Path, entries: list[dict[str, Any]]) -> Path:
    """Write a kg-shards/1 manifest listing `entries` (each a shard entry; missing counts filled in) into `folder`."""
    folder.mkdir(exist_ok=True)
    full = [{"papers": 0, "triples": 1, "bytes": 0, "activity": "urn:x:build", **e} for e in entries]
    data = {"format": shards.FORMAT, "kg_version": "0", "base": "https://w3id.org/kg/", "scheme_versions": [], "inputs": [],
            "papers": 0, "triples": len(full), "activities": [], "shards": full}
    (folder / shards.MANIFEST).write_text(json.dumps(data), encoding="utf-8")
    return folder


def plain_folder(tmp_path: Path) -> Path:
    """A folder of two good N-Triples shards."""
    folder = tmp_path / "shards"
    folder.mkdir()
    for name in ("part-a-00000.nt", "part-a-00001.nt"):
        (folder / name).write_text(TRIPLE.replace("/s>", f"/{name[:-3]}>"), encoding="utf-8")
    return manifest(folder, [{"file": "part-a-00000.nt"}, {"file": "part-a-00001.nt"}])


def one_line_error(args: list[str], *parts: str, stdin: str | None = None) -> str:
    result = CliRunner().invoke(cli, args, input=stdin)
    assert result.exit_code != 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


# ---- H1: entity expansion through a folder: every shard is checked as a graph file is ---------------------------


def test_an_rdf_xml_doctype_split_over_two_shards_is_refused(tmp_path: Path) -> None:
    """The store loaded the shards as one joined stream, checking only the first for a DOCTYPE: `a.rdf` opened the
    RDF/XML, `b.rdf` declared nested entities, and an ad-hoc query expanded them (2.4 GB at nine levels)."""
    folder = tmp_path / "bomb"
    folder.mkdir()
    (folder / "a.rdf").write_text(f'<?xml version="1.0"?>\n<rdf:RDF {RDF}>\n', encoding="utf-8")
    (folder / "b.rdf").write_text(laughs(3) + '<rdf:Description rdf:about="http://example.org/s"><ex:p>&l3;</ex:p>'
                                  "</rdf:Description>\n</rdf:RDF>\n", encoding="utf-8")
    manifest(folder, [{"file": "a.rdf"}, {"file": "b.rdf"}])
    for args in (["query", "-", "--graph", str(folder)], ["query", "top-concepts", "--graph", str(folder)],
                 ["export", str(folder), "-o", str(tmp_path / "out.ttl")]):
        one_line_error(args, f"{folder / shards.MANIFEST}: shard 'a.rdf'", "N-Triples", stdin=COUNT)
    assert not (tmp_path / "bomb.oxigraph").exists() and not (tmp_path / "out.ttl").exists()


def test_every_shard_is_checked_as_a_graph_file_is_before_the_store_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's loader reads every shard through kg.graph.files.parse, which asks rdf_format of each, not of the
    first only."""
    from kg.graph import files
    from kg.sparql import store

    folder = plain_folder(tmp_path)
    asked: list[str] = []
    real = files.rdf_format
    monkeypatch.setattr(files, "rdf_format", lambda path: asked.append(Path(path).name) or real(path))
    store.in_memory(folder)
    assert asked == ["part-a-00000.nt", "part-a-00001.nt"]


# ---- H2: a manifest names only plain files inside its folder ------------------------------------------------------


@pytest.mark.parametrize("entry", ["../outside.nt", "ABSOLUTE", "sub/inner.nt", "..", "link.nt", ".", "", "a\nb.nt"],
                         ids=["parent", "absolute", "subfolder", "dotdot", "symlink-out", "dot", "empty", "newline"])
def test_a_manifest_names_only_plain_files_inside_its_folder(tmp_path: Path, entry: str) -> None:
    outside = tmp_path / "outside.nt"
    outside.write_text("SECRET-TOKEN is not RDF\n", encoding="utf-8")
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.nt").write_text(TRIPLE, encoding="utf-8")
    (folder / "link.nt").symlink_to(outside)
    name = str(outside) if entry == "ABSOLUTE" else entry
    manifest(folder, [{"file": name}])
    where = f"{folder / shards.MANIFEST}: shard {name!r}"
    for args in (["query", "-", "--graph", str(folder)], ["query", "top-concepts", "--graph", str(folder)],
                 ["report", str(folder), "-o", str(tmp_path / "r.html")], ["serve", str(folder), "--port", "0"],
                 ["push", str(folder), "--store", "http://127.0.0.1:9/store"]):
        line = one_line_error(args, where, stdin=COUNT)
        assert "SECRET" not in line
    assert outside.read_text(encoding="utf-8") == "SECRET-TOKEN is not RDF\n"
    assert not list(tmp_path.glob(".shards.kg-serve-*"))


def test_a_symlink_inside_the_folder_to_a_listed_file_of_it_is_read(tmp_path: Path) -> None:
    folder = plain_folder(tmp_path)
    (folder / "part-a-00001.nt").rename(folder / "real.nt")
    (folder / "part-a-00001.nt").symlink_to("real.nt")
    assert [p.name for p in shards.files(folder)] == ["part-a-00000.nt", "part-a-00001.nt"]


# ---- Low: manifest counts --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field,value", [("papers", 10**400), ("triples", -1), ("bytes", "12"), ("papers", 1.5), ("triples", True),
                                         ("bytes", None), ("activity", 3)])
def test_manifest_counts_are_whole_numbers_in_range(tmp_path: Path, field: str, value: Any) -> None:
    folder = plain_folder(tmp_path)
    data = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))
    data["shards"][1][field] = value
    (folder / shards.MANIFEST).write_text(json.dumps(data), encoding="utf-8")
    line = one_line_error(["query", "-", "--graph", str(folder)], f"{folder / shards.MANIFEST}: shard 'part-a-00001.nt'", field,
                          stdin=COUNT)
    assert len(line) < 400, line


def test_a_manifest_of_a_huge_number_is_one_short_line(tmp_path: Path) -> None:
    folder = plain_folder(tmp_path)
    text = (folder / shards.MANIFEST).read_text(encoding="utf-8").replace('"papers": 0', '"papers": ' + "9" * 5000, 1)
    (folder / shards.MANIFEST).write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="not a kg shard manifest") as caught:
        shards.read(folder)
    assert len(str(caught.value)) < 400


# ---- M1: no output lands on an input's shard, manifest or derived file ----------------------------------------------


def test_outputs_into_a_shard_folder_or_onto_derived_files_are_refused(tmp_path: Path) -> None:
    folder = plain_folder(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for args in (["render", str(folder), "-o", str(folder / "part-a-00000.nt")],
                 ["export", str(folder), "-o", str(folder / shards.MANIFEST)],
                 ["report", str(folder), "-o", str(folder / "report.html")],
                 ["query", "-", "--graph", str(folder), "-o", str(folder / "part-a-00001.nt")],
                 ["export", str(folder), "-f", "ttl", "-o", str(index_file.index_path(folder))],
                 ["export", str(folder), "-o", str(tmp_path / "shards.oxigraph" / "x.ttl")]):
        one_line_error(args, "is also an input of this run", stdin=COUNT)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not index_file.index_path(folder).exists() and not (tmp_path / "shards.oxigraph").exists()


def test_refuse_overwrite_covers_a_graph_files_derived_files(tmp_path: Path) -> None:
    from kg.graph.handle import refuse_overwrite  # the one check of outputs against inputs

    graph = tmp_path / "g.ttl"
    graph.write_text(TRIPLE, encoding="utf-8")
    for out in (graph, tmp_path / "g.kg-query.sqlite", tmp_path / "g.oxigraph", tmp_path / "g.oxigraph" / "current" / "db" / "x"):
        with pytest.raises(UsageError, match="is also an input of this run"):
            refuse_overwrite(out, [graph])
    folder = plain_folder(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link.nt").symlink_to(folder / "part-a-00000.nt")
    for out in (folder, folder / "part-a-00000.nt.ids.tsv", folder / "new.ttl", tmp_path / "shards.kg-query.sqlite",
                tmp_path / "elsewhere" / "link.nt"):
        with pytest.raises(UsageError, match="is also an input of this run"):
            refuse_overwrite(out, [folder])
    for out in (tmp_path / "g.nt", tmp_path / "shards.ttl", tmp_path / "other" / "g.kg-query.sqlite"):
        refuse_overwrite(out, [graph, folder])  # beside the inputs, not on them


# ---- H5: a rebuild deletes only its own folder's files ---------------------------------------------------------------


def test_a_rebuild_deletes_no_file_outside_its_folder(dask_client, tmp_path: Path) -> None:
    from kg.pipeline import cluster
    from kg.pipeline.build import sample_inputs

    part1, _ = sample_inputs()
    folder = tmp_path / "shards"
    cluster.build([part1], folder, scheduler=dask_client)
    victims = [tmp_path / "victim.nt", tmp_path / "victim.ids.tsv", tmp_path / "abs.nt", tmp_path / "abs.ids.tsv"]
    for victim in victims:
        victim.write_text(TRIPLE, encoding="utf-8")
    data = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))
    data["shards"] += [{**data["shards"][0], "file": "../victim.nt"}, {**data["shards"][0], "file": str(tmp_path / "abs.nt")}]
    (folder / shards.MANIFEST).write_text(json.dumps(data), encoding="utf-8")
    try:
        cluster.build([part1], folder, scheduler=dask_client, options=Options(threshold=0.99))
        refused = ""
    except InputError as exc:
        refused = str(exc)
    assert [v.name for v in victims if not v.is_file()] == []
    assert f"{folder / shards.MANIFEST}: shard '../victim.nt'" in refused


def test_an_update_reads_no_sidecar_that_links_out_of_the_folder(tmp_path: Path) -> None:
    from kg.pipeline import shard_folder

    (tmp_path / "elsewhere.tsv").write_text("p1\tp1\tSECRET\n", encoding="utf-8")
    folder = plain_folder(tmp_path)
    data = json.loads((folder / shards.MANIFEST).read_text(encoding="utf-8"))
    data["shards"][1]["papers"] = 1
    (folder / shards.MANIFEST).write_text(json.dumps(data), encoding="utf-8")
    (folder / "part-a-00001.ids.tsv").symlink_to(tmp_path / "elsewhere.tsv")
    with pytest.raises(InputError, match="shard 'part-a-00001.ids.tsv' is a link to .*outside the folder"):
        shard_folder.held(folder, shards.read(folder))


# ---- Low: SIGTERM removes kg serve's pin folder as Ctrl-C does -----------------------------------------------------


def test_sigterm_removes_the_pin_folder_of_kg_serve(tmp_path: Path, mini_ttl: Path) -> None:
    from .test_serve_load import load

    graph = tmp_path / "mini.ttl"
    shutil.copy2(mini_ttl, graph)
    proc, _ = load.start_server(graph, workers=1)
    try:
        assert list(tmp_path.glob(".mini.kg-serve-*")), "no pin folder while serving"
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its workers too, should any outlive it
        except ProcessLookupError:
            pass
    assert not list(tmp_path.glob(".mini.kg-serve-*")), sorted(p.name for p in tmp_path.iterdir())
    assert proc.returncode == 0  # as after Ctrl-C: stopped, not killed (-15 before)
