"""What an update knows of a graph: read from its query index, equal to a scan of the graph, never from a stale index."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import kg
from kg.graph import index_file
from kg.graph import stamp as index
from kg.graph.files import read_triples
from kg.graph.vocabulary import DCTERMS, FOAF, RDF, RDFS

CORPUS = Path(__file__).parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


def indexed(graph: Path) -> index.GraphIndex | None:
    """What the query index beside a graph says of it, or None when that index is missing or stale."""
    found = index_file.fresh(graph)
    return index_file.known(found) if found is not None else None


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


@pytest.mark.parametrize("graph", ["sample_ttl", "hostile_ttl", "authored_ttl", "sample_analyzed_ttl"])
def test_the_index_a_build_writes_knows_what_a_scan_of_its_graph_finds(graph: str, request: pytest.FixtureRequest) -> None:
    ttl = request.getfixturevalue(graph)
    written = indexed(ttl)
    scanned = index.scan(ttl)
    assert written == scanned
    # And the scan itself says what the graph holds.
    triples = read_triples(ttl)
    assert set(scanned.ids) == {t.object.value for t in triples if t.predicate.value == DCTERMS + "identifier"}
    assert scanned.authors == {t.subject.value for t in triples if t.predicate.value == RDF + "type" and t.object.value == FOAF + "Person"}


def test_the_authored_graph_exercises_every_field(authored_ttl: Path) -> None:
    found = indexed(authored_ttl)
    assert found is not None
    assert len(found.ids) == len(found.digests) == 40
    assert found.authors and found.venues and found.versions and len(found.builds) == 1


def _copy(graph: Path, folder: Path) -> Path:
    folder.mkdir()
    out = folder / graph.name
    shutil.copy2(graph, out)
    shutil.copy2(index_file.index_path(graph), index_file.index_path(out))
    return out


def test_an_index_of_another_version_of_the_graph_is_not_read(authored_ttl: Path, tmp_path: Path) -> None:
    graph = _copy(authored_ttl, tmp_path / "copy")
    assert indexed(graph) is not None  # same bytes, same mtime: still valid beside the copy
    st = graph.stat()
    data = bytearray(graph.read_bytes())
    data[-5] = ord("X") if data[-5] != ord("X") else ord("Y")  # same size; the mtime is put back below
    graph.write_bytes(bytes(data))
    os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert indexed(graph) is None
    graph = _copy(authored_ttl, tmp_path / "touched")
    os.utime(graph, ns=(graph.stat().st_atime_ns, graph.stat().st_mtime_ns + 1))
    assert indexed(graph) is None


def test_a_scan_names_a_missing_or_broken_graph(tmp_path: Path) -> None:
    with pytest.raises(kg.InputError, match="missing.ttl: no such graph file"):
        index.scan(tmp_path / "missing.ttl")
    (tmp_path / "bad.ttl").write_text("<a> <b> .\n", encoding="utf-8")
    with pytest.raises(kg.InputError, match="bad.ttl: not valid RDF"):
        index.scan(tmp_path / "bad.ttl")


def test_every_format_gets_a_query_index_that_knows_its_graph(sample_built, tmp_path: Path) -> None:
    for name in ("g.nt", "h.jsonld"):
        graph = kg.write(sample_built, tmp_path / name)
        assert indexed(graph) == index.scan(graph) and len(index.scan(graph).ids) == len(sample_built.papers), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.kg-query.sqlite", "g.nt", "h.jsonld", "h.kg-query.sqlite"]


def test_an_update_with_no_index_to_be_had_scans_the_graph(sample_built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder where no index can be made (here: the index writer fails) still updates, from a scan of the graph."""
    from kg.graph import index_writer

    def boom(self: object, term: object) -> int:
        raise RuntimeError("no index today")

    monkeypatch.setattr(index_writer.Writer, "_tid", boom)
    graph = kg.write(sample_built, tmp_path / "g.ttl")
    source = tmp_path / "new.jsonl"
    source.write_text('{"id": "new-1", "title": "Federated learning at the edge", "abstract": "We study federated learning '
                      'of language models on phones."}\n', encoding="utf-8")
    result = kg.update(graph, [source])
    assert (result.added, result.unchanged) == (1, 0) and index_file.fresh(graph) is None
    assert len(index.scan(graph).ids) == len(sample_built.papers) + 1


def test_a_graph_edited_in_the_middle_with_size_and_mtime_kept_is_answered_as_edited(sample_ttl: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp hashes the whole file: an edit that keeps the size, its mtime set back, makes the query index and
    the SPARQL store stale (issue 30, L5). A hash of the last 64 KiB did not see it."""
    from click.testing import CliRunner

    from kg.cli import cli

    monkeypatch.setattr(index, "SETTLE", 0.0)  # the copy counts as settled: readers record what they verified
    graph = tmp_path / sample_ttl.name
    shutil.copy2(sample_ttl, graph)
    shutil.copy2(index_file.index_path(sample_ttl), index_file.index_path(graph))
    data = graph.read_bytes()
    found = re.search(rb'a fabio:ResearchPaper ;\n\tdcterms:identifier "[^"]*" ;\n\trdfs:label "([A-Za-z][^"]*)"', data)
    assert found is not None and len(data) - found.start(1) > 4 * 65536  # the first paper's label, far from the end of the file
    start, title = found.start(1), found[1].decode()
    paper = next(t.subject.value for t in read_triples(graph) if t.predicate.value == RDFS + "label" and t.object.value == title)
    concept = next(t.object.value for t in read_triples(graph) if t.subject.value == paper and t.predicate.value == DCTERMS + "subject")
    named = ["query", "papers-by-concept", "-p", f"concept={concept}", "--graph", str(graph), "-f", "csv"]
    adhoc = ["query", f"SELECT ?label WHERE {{ <{paper}> rdfs:label ?label }}", "--graph", str(graph), "-f", "csv"]
    runner = CliRunner()
    for args in (named, adhoc, named, adhoc):  # the second time from what the first recorded as verified
        out = runner.invoke(cli, args)
        assert out.exit_code == 0 and title in out.stdout, out.output
    edited = ("X" if title[0] != "X" else "Y") + title[1:]
    st = graph.stat()
    graph.write_bytes(data[:start] + edited[0].encode() + data[start + 1:])
    os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (graph.stat().st_size, graph.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    for args in (named, adhoc):
        out = runner.invoke(cli, args)
        assert out.exit_code == 0 and edited in out.stdout and title not in out.stdout, out.output


def test_a_verified_graph_is_not_hashed_again_until_it_changes(sample_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hashing reads the whole graph (0.2 s at 21k papers): a reader that verified it records the file's identity,
    and the next one reads only that. A file changed in the last SETTLE seconds is hashed every time."""
    graph = tmp_path / sample_ttl.name
    shutil.copy2(sample_ttl, graph)
    shutil.copy2(index_file.index_path(sample_ttl), index_file.index_path(graph))
    hashed: list[Path] = []
    real = index.stamp
    monkeypatch.setattr(index, "stamp", lambda g: hashed.append(g) or real(g))
    assert index_file.fresh(graph) is not None and index_file.fresh(graph) is not None
    assert len(hashed) == 2  # just copied: not settled, so nothing recorded
    monkeypatch.setattr(index, "SETTLE", 0.0)
    assert index_file.fresh(graph) is not None and index_file.fresh(graph) is not None and index_file.fresh(graph) is not None
    assert len(hashed) == 3  # hashed once more, then known
    os.chmod(graph, 0o600)  # a new ctime: hashed again (and still the same graph)
    assert index_file.fresh(graph) is not None and len(hashed) == 4
