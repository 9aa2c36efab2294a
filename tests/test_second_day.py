"""A second day with kg: the dead ends a user met at 21k papers, each on a small real graph."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import cli

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with graphs/my.ttl built from the tiny paper list."""
    folder = tmp_path_factory.mktemp("second-day")
    shutil.copy(FIXTURES / "tiny.jsonl", folder / "my.jsonl")
    result = CliRunner().invoke(cli, ["build", str(folder / "my.jsonl"), "-o", str(folder / "graphs" / "my.ttl"), "--no-render"])
    assert result.exit_code == 0, result.output
    return folder / "graphs" / "my.ttl"


@pytest.mark.parametrize(
    "path",
    [
        "dcterms:subject/skos:broader*",  # the docs' own idiom, written without spaces
        "dcterms:subject/skos:broader+|dcterms:subject",
        "^dcterms:subject/dcterms:subject",  # inverse: papers sharing a concept (?c is a paper then)
    ],
)
def test_property_paths_of_prefixed_names_need_no_prefix_lines(built: Path, path: str) -> None:
    query = f"SELECT ?p ?c WHERE {{ ?p {path} ?c }} LIMIT 3"
    result = CliRunner().invoke(cli, ["query", "-", "--graph", str(built), "-f", "csv"], input=query)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) == 4, result.stdout  # a header and three rows
