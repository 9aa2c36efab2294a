"""GraphML and GEXF exports: networkx views written for Gephi and Cytoscape."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
from kg.cli import cli

READERS = {"graphml": nx.read_graphml, "gexf": nx.read_gexf}


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
@pytest.mark.parametrize("view", ["papers", "concepts"])
def test_network_exports_read_back_with_the_same_counts(sample_ttl: Path, tmp_path: Path, fmt: str, view: str) -> None:
    out = tmp_path / f"sample.{fmt}"
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-f", fmt, "--view", view, "-o", str(out)])
    assert result.exit_code == 0, result.output
    expected = kg.to_networkx(sample_ttl, view=view)
    back = READERS[fmt](out)
    assert (back.number_of_nodes(), back.number_of_edges()) == (expected.number_of_nodes(), expected.number_of_edges())
    assert expected.number_of_edges() > 0
    assert set(back.nodes) == set(expected.nodes)
    some = next(n for n, kind in expected.nodes(data="kind") if kind == "concept")
    assert back.nodes[some]["label"] == expected.nodes[some]["label"]


def test_format_follows_the_output_suffix(two_topics_ttl: Path, tmp_path: Path) -> None:
    out = tmp_path / "graph.graphml"
    assert CliRunner().invoke(cli, ["export", str(two_topics_ttl), "-o", str(out)]).exit_code == 0
    g = nx.read_graphml(out)
    assert g.number_of_nodes() == 10 + 6  # ten papers, six concepts (tests/fixtures/two-topics)


def test_analysis_travels_into_the_export(two_topics_ttl: Path, tmp_path: Path) -> None:
    analysed = tmp_path / "analysed.ttl"
    kg.analyze(two_topics_ttl, analysed)
    g = nx.read_gexf(kg.export(analysed, tmp_path / "concepts.gexf", view="concepts"))
    communities = {g.nodes[n]["community"] for n in g.nodes}
    assert communities == {1, 2}
    assert all(g.nodes[n]["pagerank"] > 0 for n in g.nodes)


def test_gexf_is_reproducible(two_topics_ttl: Path, tmp_path: Path) -> None:
    first = kg.export(two_topics_ttl, tmp_path / "a.gexf")
    second = kg.export(two_topics_ttl, tmp_path / "b.gexf")
    assert first.read_bytes() == second.read_bytes()
    assert b'lastmodifieddate="2023-11-14"' in first.read_bytes()  # SOURCE_DATE_EPOCH=1700000000, not today


def test_unknown_format_lists_every_format(sample_ttl: Path) -> None:
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-f", "dot"])
    assert result.exit_code == 1
    assert "unknown export format 'dot'" in result.output and "graphml" in result.output and "ttl" in result.output


@pytest.mark.parametrize("name", ["papers.tsv", "papers.yaml", "papers"])
def test_an_unknown_output_suffix_is_refused_and_nothing_is_written(sample_ttl: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    result = CliRunner().invoke(cli, ["export", str(sample_ttl), "-o", str(out)])
    assert result.exit_code == 1 and not out.exists()
    assert "cannot tell the export format" in result.output
    for suffix in (".ttl", ".nt", ".jsonld", ".graphml", ".gexf"):
        assert suffix in result.output
    forced = CliRunner().invoke(cli, ["export", str(sample_ttl), "-o", str(out), "-f", "nt"])
    assert forced.exit_code == 0, forced.output
    import pyoxigraph as ox

    assert len(list(ox.parse(out.read_bytes(), format=ox.RdfFormat.N_TRIPLES))) == len(kg.graph.files.read_triples(sample_ttl))
