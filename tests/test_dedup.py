"""One paper once: the same paper in two files or under two ids is found on build and on update, reported, kept once."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kg.cli import cli
from kg.extract import dedup, ingest

from .conftest import FIXTURES

TINY = ["--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme", "--no-store", "--no-render"]
ABSTRACTS = [
    "We study reinforcement learning with graph neural networks and show that message passing improves sample efficiency on navigation tasks.",
    "Large language models are fine-tuned with reinforcement learning from human feedback; we propose a cheaper reward model trained on fewer labels.",
    "Federated learning with differential privacy loses accuracy; we show that clipping per client rather than per example recovers most of it.",
]


def site(tmp_path: Path) -> Path:
    """A paper-list site's download: ids of its own, venue and year."""
    path = tmp_path / "icml.jsonl"
    path.write_text("".join(json.dumps({"id": f"icml24-{i}", "title": f"Paper number {i} on a long enough title", "abstract": a,
                                        "author": "Ada Lovelace; Alan Turing", "venue": "ICML", "year": 2024}) + "\n" for i, a in enumerate(ABSTRACTS)))
    return path


def corpus(tmp_path: Path) -> Path:
    """The same papers in another corpus: other ids, the abstracts with other spacing and case, no venue."""
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": f"c-{i}", "abstract": "  " + a.replace(" ", "  ").upper()}) + "\n" for i, a in enumerate(ABSTRACTS))
                    + json.dumps({"id": "c-new", "abstract": "Diffusion models generate images; we distil them into one step."}) + "\n")
    return path


def venue_counts(graph: Path) -> dict[str, int]:
    from rdflib import Graph, URIRef

    g = Graph().parse(graph)
    counts: dict[str, int] = {}
    for _, venue in g.subject_objects(URIRef("http://purl.org/dc/terms/isPartOf")):
        counts[str(venue)] = counts.get(str(venue), 0) + 1
    return counts


@given(st.text() | st.text(alphabet=st.characters(max_codepoint=127)))
def test_words_are_the_letters_and_digits_between_the_gaps_of_any_text(text: str) -> None:
    """ASCII texts take a translation table, others the regular expression; both give the words of the one rule."""
    plain = text.casefold()
    if not plain.isascii():
        plain = re.sub(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]", "", unicodedata.normalize("NFKD", plain))
    assert dedup.words(text) == " ".join(re.findall(r"[^\W_]+", plain))


def test_keys_ignore_case_accents_and_spacing() -> None:
    assert dedup.fingerprint("Über  RL, a study.") == dedup.fingerprint("uber rl a STUDY")


def test_the_same_papers_in_two_sources_are_reported_and_kept_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    alone = runner.invoke(cli, ["build", str(site(tmp_path)), "-o", "alone.ttl", *TINY])
    both = runner.invoke(cli, ["build", str(site(tmp_path)), str(corpus(tmp_path)), "-o", "both.ttl", *TINY])
    assert alone.exit_code == 0 and both.exit_code == 0, both.output
    assert "4 papers" in both.output  # three kept once, one new
    assert both.output.count("the same paper as") == 3 and "(same abstract); kept once, with both ids ('icml24-0', 'c-0')" in both.output
    assert venue_counts(tmp_path / "both.ttl") == venue_counts(tmp_path / "alone.ttl") == {"https://w3id.org/kg/venue/icml": 3}
    apart = runner.invoke(cli, ["build", str(site(tmp_path)), str(corpus(tmp_path)), "-o", "apart.ttl", "--keep-duplicates", *TINY])
    assert "7 papers" in apart.output and "the same paper as" not in apart.output


def test_an_update_with_the_same_papers_under_other_ids_adds_none_of_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["build", str(site(tmp_path)), "-o", "g.ttl", *TINY]).exit_code == 0
    before = venue_counts(tmp_path / "g.ttl")
    other = tmp_path / "other-ids.jsonl"  # the same records under the ids another corpus gives them
    other.write_text("".join(json.dumps({"id": f"corpus-{i}", "abstract": a, "venue": "ICML", "year": 2024}) + "\n" for i, a in enumerate(ABSTRACTS)))
    size = (tmp_path / "g.ttl").stat().st_size
    result = runner.invoke(cli, ["build", "--update", "g.ttl", str(other), *TINY])
    assert result.exit_code == 0, result.output
    assert "is up to date: all 3 papers of the inputs are in it (3 of them under another id)" in result.output
    assert "already in the graph as <https://w3id.org/kg/paper/icml24-0> (same abstract, id 'corpus-0')" in result.output
    assert (tmp_path / "g.ttl").stat().st_size == size and venue_counts(tmp_path / "g.ttl") == before
    kept = runner.invoke(cli, ["build", "--update", "g.ttl", str(other), "--keep-duplicates", *TINY])
    assert "3 papers added" in kept.output


def test_title_and_first_author_find_a_copy_with_another_abstract(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps({"id": "a", "title": "Offline RL with Language Priors", "author": "Lovelace, Ada", "abstract": ABSTRACTS[0]}) + "\n")
    b.write_text(json.dumps({"id": "b", "title": "Offline RL with language priors.", "authors": ["Ada Lovelace"], "abstract": ABSTRACTS[1]}) + "\n")
    got = ingest.read([a, b])
    assert [(p.id, p.aliases) for p in got.papers] == [("a", ("b",))]
    assert "(same title and first author)" in got.problems[0]


def test_a_workshop_paper_and_its_conference_version_stay_two_papers(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    title = "Offline RL with Language Priors"
    path.write_text(json.dumps({"id": "w", "title": title, "author": "Ada Lovelace", "abstract": ABSTRACTS[0], "venue": "ICLR Workshop", "year": 2023}) + "\n"
                    + json.dumps({"id": "c", "title": title, "author": "Ada Lovelace", "abstract": ABSTRACTS[0], "venue": "ICML", "year": 2023}) + "\n")
    got = ingest.read([path])
    assert [p.id for p in got.papers] == ["w", "c"] and got.problems == ()


def test_an_update_finds_a_paper_by_its_doi_whatever_its_abstract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first, later = tmp_path / "zotero.jsonl", tmp_path / "openalex.jsonl"
    first.write_text(json.dumps({"id": "z1", "abstract": ABSTRACTS[0], "doi": "10.5555/ABC.1", "venue": "ICML", "year": 2024}) + "\n")
    later.write_text(json.dumps({"id": "W1", "abstract": ABSTRACTS[0] + " Code is public.", "doi": "https://doi.org/10.5555/abc.1"}) + "\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["build", str(first), "-o", "g.ttl", *TINY]).exit_code == 0
    result = runner.invoke(cli, ["build", "--update", "g.ttl", str(later), *TINY])
    assert result.exit_code == 0, result.output
    assert "(same DOI, id 'W1'); not added again" in result.output and "is up to date" in result.output
