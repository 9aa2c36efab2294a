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


@pytest.mark.parametrize("name", ["communities", "similar-papers", "related-concepts"])
def test_a_query_of_analysis_results_on_a_graph_without_them_says_to_run_kg_analyze(built: Path, name: str) -> None:
    result = CliRunner().invoke(cli, ["query", name, "--graph", str(built)])
    assert result.exit_code == 0, result.output
    assert "(0 rows)" in result.stdout
    assert f"run `kg analyze {built}` and ask again" in result.stderr


def test_a_query_of_analysis_results_with_rows_says_nothing_more(built: Path, tmp_path: Path) -> None:
    analysed = tmp_path / "analysed.ttl"
    runner = CliRunner()
    assert runner.invoke(cli, ["analyze", str(built), "-o", str(analysed)]).exit_code == 0
    result = runner.invoke(cli, ["query", "related-concepts", "--graph", str(analysed)])
    assert result.exit_code == 0 and "(0 rows)" not in result.stdout and "kg analyze" not in result.stderr, result.output


def _concepts_of(result) -> list[str]:
    return sorted({line.split(",")[0] for line in result.stdout.strip().splitlines()[1:]})


def test_every_name_kg_prints_for_a_concept_or_paper_is_taken_back(built: Path) -> None:
    """Label, slug, kgc: name and IRI of a concept; identifier as written, paper: name and IRI of a paper."""
    runner = CliRunner()

    def run(*params: str) -> object:
        result = runner.invoke(cli, ["query", "evidence", "--graph", str(built), "-f", "csv", *[x for p in params for x in ("-p", p)]])
        assert result.exit_code == 0, result.output
        return result

    paper_iri = "https://w3id.org/kg/paper/p1"
    concept_iri = "https://w3id.org/kg/concept/offline-reinforcement-learning"
    answers = {
        run(f"paper={paper}", f"concept={concept}").stdout
        for paper in ("p1", "paper:p1", paper_iri, f"<{paper_iri}>")
        for concept in ("offline reinforcement learning", "offline-reinforcement-learning", "kgc:offline-reinforcement-learning", concept_iri)
    }
    assert len(answers) == 1 and "offline" in answers.pop()


def test_a_word_of_a_label_is_suggested_by_the_labels_that_hold_it(built: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "papers-by-concept", "--graph", str(built), "-p", "concept=diffusion"])
    assert result.exit_code == 1
    assert "did you mean: diffusion model" in result.output, result.output


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("min=999999999999999999999999999999", "parameter 'min' must be a whole number from -9223372036854775808 to 9223372036854775807"),
        ("min=\udcff\udcfe", "parameter 'min' is not UTF-8 text"),
    ],
)
def test_a_parameter_out_of_range_or_not_text_is_one_line(built: Path, param: str, message: str) -> None:
    """A huge integer and bytes that are not UTF-8 were 'a bug in kg' (issue 30 L4)."""
    result = CliRunner().invoke(cli, ["query", "co-occurrence", "--graph", str(built), "-p", param])
    assert result.exit_code == 1 and message in result.output, result.output
