"""The sidecar index of a graph: equal to a scan of the graph, ignored as soon as it no longer matches it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import kg
from kg import index
from kg.graphio import read_triples
from kg.vocabulary import DCTERMS, FOAF, RDF

CORPUS = Path(__file__).parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


@pytest.fixture(scope="module")
def authored_ttl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Forty real abstracts with authors, venues and proposed methods, written as Turtle (with its index)."""
    if not CORPUS.is_file():
        pytest.skip(f"{CORPUS} is not here")
    lines = [line for line in CORPUS.read_text(encoding="utf-8").split("\n")[:: 500] if line.strip()][:40]
    folder = tmp_path_factory.mktemp("authored")
    source = folder / "papers.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return kg.write(kg.build([source]), folder / "g.ttl")


@pytest.mark.parametrize("graph", ["sample_ttl", "hostile_ttl", "authored_ttl"])
def test_the_index_a_build_writes_equals_a_scan_of_its_graph(graph: str, request: pytest.FixtureRequest) -> None:
    ttl = request.getfixturevalue(graph)
    written = index.read(ttl)
    assert written is not None and index.index_path(ttl).is_file()
    scanned = index.scan(ttl)
    assert written == scanned
    # And the scan itself says what the graph holds.
    triples = read_triples(ttl)
    assert set(scanned.ids) == {t.object.value for t in triples if t.predicate.value == DCTERMS + "identifier"}
    assert scanned.authors == {t.subject.value for t in triples if t.predicate.value == RDF + "type" and t.object.value == FOAF + "Person"}


def test_the_authored_graph_exercises_every_field(authored_ttl: Path) -> None:
    found = index.read(authored_ttl)
    assert found is not None
    assert len(found.ids) == len(found.digests) == 40
    assert found.authors and found.venues and found.versions and len(found.builds) == 1


def _copy(graph: Path, folder: Path) -> Path:
    folder.mkdir()
    out = folder / graph.name
    out.write_bytes(graph.read_bytes())
    os.utime(out, ns=(graph.stat().st_atime_ns, graph.stat().st_mtime_ns))
    index.index_path(out).write_bytes(index.index_path(graph).read_bytes())
    return out


def test_an_index_of_another_version_of_the_graph_is_ignored(authored_ttl: Path, tmp_path: Path) -> None:
    graph = _copy(authored_ttl, tmp_path / "copy")
    assert index.read(graph) is not None  # same bytes, same mtime: still valid beside the copy
    st = graph.stat()
    data = bytearray(graph.read_bytes())
    data[-5] = ord("X") if data[-5] != ord("X") else ord("Y")  # same size; the mtime is put back below
    graph.write_bytes(bytes(data))
    os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert index.read(graph) is None
    found, scanned = index.load(_copy(authored_ttl, tmp_path / "again"))
    assert scanned is None and found == index.scan(authored_ttl)


def test_an_appended_graph_or_a_touched_one_makes_the_index_stale(authored_ttl: Path, tmp_path: Path) -> None:
    graph = _copy(authored_ttl, tmp_path / "a")
    with graph.open("ab") as stream:
        stream.write(b"<https://example.org/a> <https://example.org/b> <https://example.org/c> .\n")
    found, scanned = index.load(graph)
    assert scanned == index.stamp(graph) and "https://example.org/a" not in found.digests
    graph = _copy(authored_ttl, tmp_path / "b")
    os.utime(graph, ns=(graph.stat().st_atime_ns, graph.stat().st_mtime_ns + 1))
    assert index.read(graph) is None


@pytest.mark.parametrize("content", ["", "{not json", "[]", '{"format": 1}', '{"format": 999, "stamp": {}}'])
def test_a_missing_or_broken_index_falls_back_to_a_scan(authored_ttl: Path, tmp_path: Path, content: str) -> None:
    graph = _copy(authored_ttl, tmp_path / "g")
    if content:
        index.index_path(graph).write_text(content, encoding="utf-8")
    else:
        index.index_path(graph).unlink()
    found, scanned = index.load(graph)
    assert scanned is not None and found == index.scan(authored_ttl)


def test_writing_an_index_is_best_effort(authored_ttl: Path, tmp_path: Path) -> None:
    graph = _copy(authored_ttl, tmp_path / "g")
    index.index_path(graph).unlink()
    index.index_path(graph).mkdir()  # cannot be replaced by a file
    assert index.write(graph, index.scan(graph), index.stamp(graph)) is None
    assert index.read(graph) is None


def test_only_formats_an_update_appends_to_get_an_index(sample_built, tmp_path: Path) -> None:
    kg.write(sample_built, tmp_path / "g.nt")
    kg.write(sample_built, tmp_path / "g.jsonld")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonld", "g.kg-index.json", "g.kg-query.sqlite", "g.nt"]
    stamp = json.loads((tmp_path / "g.kg-index.json").read_text(encoding="utf-8"))["stamp"]
    assert stamp["source"] == "g.nt" and index.read(tmp_path / "g.nt") == index.scan(tmp_path / "g.jsonld")


def test_an_index_is_stamped_with_the_file_it_was_made_for_not_what_is_there_later(authored_ttl: Path, tmp_path: Path) -> None:
    # A scan stamps the graph before reading it: if the file is replaced meanwhile, the index is stale, never wrong.
    graph = _copy(authored_ttl, tmp_path / "g")
    index.index_path(graph).unlink()
    before = index.stamp(graph)
    found = index.scan(graph)
    graph.write_bytes(graph.read_bytes() + b"<https://example.org/a> <https://example.org/b> <https://example.org/c> .\n")
    assert index.write(graph, found, before) is not None
    assert index.read(graph) is None
