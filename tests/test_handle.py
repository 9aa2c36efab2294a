"""kg.graph.handle.GraphFile: every way it writes a graph leaves a query index that says what a parse of the file says."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.core.errors import InputError
from kg.graph import index_file, stamp
from kg.graph.handle import GraphFile
from kg.graph.vocabulary import DCTERMS, FABIO, RDF, Namespaces

NS = Namespaces("https://example.org/kg/")


def _paper(n: int) -> list:
    p = ox.NamedNode(NS.base + f"paper/x{n}")
    return [ox.Triple(p, ox.NamedNode(RDF + "type"), ox.NamedNode(FABIO + "ResearchPaper")),
            ox.Triple(p, ox.NamedNode(DCTERMS + "identifier"), ox.Literal(f"x{n}")),
            ox.Triple(p, ox.NamedNode(DCTERMS + "abstract"), ox.Literal(f"abstract {n}"))]


def _agrees(graph: Path) -> None:
    """The graph's index is fresh and knows what one pass over the file finds."""
    index = index_file.fresh(graph)
    assert index is not None, f"{graph}: no fresh index"
    assert index_file.known(index) == stamp.scan(graph)


@pytest.fixture
def copied(sample_ttl: Path, tmp_path: Path) -> GraphFile:
    target = tmp_path / "g.ttl"
    shutil.copyfile(sample_ttl, target)
    assert GraphFile(target).index() is not None  # made from a parse
    return GraphFile(target)


def test_append_copy_and_write_leave_an_index_that_agrees_with_the_file(copied: GraphFile, tmp_path: Path) -> None:
    before = copied.stamp()
    appended = GraphFile(tmp_path / "appended.ttl").append(copied, _paper(1), ns=NS, before=before, base=copied.index())
    _agrees(appended)
    assert NS.base + "paper/x1" in index_file.known(index_file.fresh(appended)).digests
    copy = GraphFile(tmp_path / "copy.ttl").copy_from(GraphFile(appended), index_file.fresh(appended))
    assert copy.read_bytes() == appended.read_bytes()
    _agrees(copy)
    whole = GraphFile(tmp_path / "whole.nt").write(copied.parse(), _paper(2), ns=NS)
    _agrees(whole)
    based = GraphFile(tmp_path / "based.ttl").write(copied.parse(), _paper(3), ns=NS, base=copied.index())
    _agrees(based)


def test_a_base_index_that_no_longer_holds_is_not_kept(copied: GraphFile, tmp_path: Path) -> None:
    out = GraphFile(tmp_path / "out.ttl").write(copied.parse(), _paper(4), ns=NS, base=copied.index(), keep_base=lambda: False)
    assert out.is_file() and index_file.fresh(out) is None


def test_a_source_changed_while_it_was_read_writes_nothing(copied: GraphFile, tmp_path: Path) -> None:
    before = copied.stamp()
    with copied.path.open("a", encoding="utf-8") as other:
        other.write("<http://x/a> <http://x/b> <http://x/c> .\n")
    target = tmp_path / "out.ttl"
    with pytest.raises(InputError, match="changed while it was being updated"):
        GraphFile(target).append(copied, _paper(5), ns=NS, before=before, base=copied.path)
    with pytest.raises(InputError, match="changed while it was being updated"):
        GraphFile(target).write(copied.parse(), _paper(5), ns=NS, source=copied, before=before)
    assert not target.exists() and not index_file.index_path(target).exists()


def test_a_missing_graph_is_the_one_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such graph file; build one with 'kg build"):
        GraphFile.existing(tmp_path / "nope.ttl")
