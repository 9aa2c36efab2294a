"""Papers as researchers have them: BibTeX, RIS, CSL-JSON, OpenAlex, arXiv Atom and download field names, each read
from a file shaped as the tool that makes it writes it (tests/fixtures/inputs/), built into RDF and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rdflib import Graph, Literal, URIRef

from kg import InputError
from kg.cli import cli
from kg.extract import ingest

from .conftest import FIXTURES

INPUTS = FIXTURES / "inputs"
TINY = ["--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme", "--no-store", "--no-render"]
BIBO = "http://purl.org/ontology/bibo/"
DCT = "http://purl.org/dc/terms/"
OFFLINE = "Offline Reinforcement Learning with Large Language Models as Priors"
AUTHORS = ("Jörg Müller", "Ada Lovelace", "Jan van der Berg")


def one(name: str, **options) -> list[ingest.Paper]:
    return list(ingest.read([INPUTS / name], keep_duplicates=True, **options).papers)


def test_zotero_bibtex_decodes_latex_and_names_first_last() -> None:
    first, second, third = one("zotero.bib")
    assert (first.id, first.title, first.authors) == ("muller_offline_2024", OFFLINE, AUTHORS)
    assert (first.venue, first.year, first.doi) == ("Proceedings of the 41st International Conference on Machine Learning", 2024, "10.5555/icml.2024.1201")
    assert "LaPrior" in first.abstract and "by 12% on average" in first.abstract and "\\" not in first.abstract
    assert second.authors == ("Éva Kovács", "Søren Østergaard") and second.venue == "Journal of Machine Learning Research"
    assert third.authors == ("Thị Nguyễn", "John Smith") and third.arxiv == "2402.01234" and third.venue == "arXiv"


def test_ris_reads_authors_venue_year_and_doi() -> None:
    first, second = one("zotero.ris")
    assert (first.title, first.authors, first.year, first.doi) == (OFFLINE, AUTHORS, 2024, "10.5555/icml.2024.1201")
    assert first.venue == "Proceedings of the 41st International Conference on Machine Learning"
    assert second.where.endswith("zotero.ris:18") and second.venue == "Transactions on Machine Learning Research"


def test_csl_json_from_zotero() -> None:
    first, second = one("zotero-csl.json")
    assert (first.title, first.authors, first.venue, first.year, first.doi) == (
        "Federated Learning under Client Drift: A Variance-Reduced View", ("Éva Kovács", "Søren Østergaard"),
        "Journal of Machine Learning Research", 2023, "10.5555/jmlr.2023.112")
    assert second.authors == ("Layla Haddad", "OpenVision Team") and second.year == 2024


def test_openalex_works_rebuild_the_inverted_index_abstract() -> None:
    first, second = one("openalex.json")
    assert first.id == "W4390001234" and first.authors == AUTHORS and first.doi == "10.5555/icml.2024.1201"
    assert first.abstract.startswith("Offline reinforcement learning (RL) learns a policy from a fixed data set")
    assert first.abstract.endswith("by 12% on average.")
    assert (first.venue, first.year) == ("International Conference on Machine Learning", 2024)
    assert second.abstract.startswith("Mixture-of-experts layers let language models grow their parameters without growing their compute.")


def test_arxiv_atom_feed() -> None:
    first, second = one("arxiv.atom")
    assert (first.id, first.arxiv, first.title, first.authors) == ("2402.01234", "2402.01234", "Diffusion Models for Tabular Data Synthesis", ("Thị Nguyễn", "John Smith"))
    assert (first.venue, first.year) == ("arXiv", 2024)
    assert first.abstract.startswith("Diffusion models generate images of high quality, but tabular data mixes numerical")
    assert (second.venue, second.doi) == ("ACL 2024", "10.5555/acl.2024.55")
    # --venue names where the preprints appeared; a record's own venue stays
    assert [p.venue for p in one("arxiv.atom", venue="ICML")] == ["ICML", "ACL 2024"]


def test_paper_list_download_reads_author_and_the_bibtex_field() -> None:
    first, second = one("paperlist.json")
    assert first.authors == AUTHORS and second.authors == ("Sara Lindqvist", "Tomás García")
    assert (first.venue, first.year) == ("Forty-first International Conference on Machine Learning", 2024)
    assert [(p.venue, p.year) for p in one("paperlist.json", venue="ICML", year=2023)] == [("ICML", 2023), ("ICML", 2023)]


def test_zotero_csv_export_field_names() -> None:
    first, second = one("zotero.csv")
    assert (first.id, first.authors, first.venue, first.year, first.doi) == (
        "QWER1234", ("Chidi Okafor", "Yui Tanaka"), "Transactions on Machine Learning Research", 2023, "10.5555/tmlr.2023.77")
    assert second.year == 2022


@pytest.mark.parametrize("authors, expected", [
    ("Lovelace, Ada; Turing, Alan", ("Ada Lovelace", "Alan Turing")),
    ("Ada Lovelace; Alan Turing", ("Ada Lovelace", "Alan Turing")),
    ("Lovelace, Ada and Turing, Alan", ("Ada Lovelace", "Alan Turing")),
    ("Lovelace, Ada", ("Ada Lovelace",)),
    ("Ada Lovelace, Alan Turing", ("Ada Lovelace", "Alan Turing")),
    ([{"firstName": "Ada", "lastName": "Lovelace", "creatorType": "author"}], ("Ada Lovelace",)),
])
def test_author_spellings(tmp_path: Path, authors, expected) -> None:
    path = tmp_path / "a.json"
    key = "creators" if isinstance(authors, list) else "author"
    path.write_text(json.dumps([{"abstract": "We study graph neural networks.", key: authors}]), encoding="utf-8")
    (paper,) = ingest.read([path]).papers
    assert paper.authors == expected


def test_a_field_that_looks_read_but_is_not_is_named_and_no_venue_is_said(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"abstract": "We study graph neural networks.", "paper_authors": "A; B", "conf_name": "ICML"}) + "\n", encoding="utf-8")
    got = ingest.read([path])
    assert any("'paper_authors'" in n and "not read" in n for n in got.notes), got.notes
    assert any("no venue or no year; pass --venue" in n for n in got.notes), got.notes
    assert ingest.read([path], venue="ICML", year=2024).papers[0].venue == "ICML"


def test_every_format_builds_titles_authors_venue_year_and_doi_into_rdf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    files = [str(p) for p in sorted(INPUTS.iterdir())]
    result = CliRunner().invoke(cli, ["build", *files, "-o", "all.ttl", *TINY])
    assert result.exit_code == 0, result.output
    g = Graph().parse(tmp_path / "all.ttl")
    papers = {str(s) for s in g.subjects(URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), URIRef("http://purl.org/spar/fabio/ResearchPaper"))}
    assert len(papers) == 9  # 15 records, 6 of them copies of papers read from another file
    (offline,) = g.subjects(URIRef(DCT + "title"), Literal(OFFLINE))
    assert g.value(offline, URIRef(BIBO + "doi")) == Literal("10.5555/icml.2024.1201")
    assert URIRef("https://doi.org/10.5555/icml.2024.1201") in set(g.objects(offline, URIRef("http://www.w3.org/2000/01/rdf-schema#seeAlso")))
    ids = {str(o) for o in g.objects(offline, URIRef(BIBO + "identifier"))}
    assert ids == {"icml2024-abc123", "muller_offline_2024", "6205f22e67e44a32"}  # the other records' ids, kept
    names = {str(g.value(a, URIRef("http://xmlns.com/foaf/0.1/name"))) for a in g.objects(offline, URIRef(DCT + "creator"))}
    assert names == set(AUTHORS)
    (diffusion,) = g.subjects(URIRef(DCT + "title"), Literal("Diffusion Models for Tabular Data Synthesis"))
    assert Literal("arXiv:2402.01234") in set(g.objects(diffusion, URIRef(BIBO + "identifier")))
    assert URIRef("https://arxiv.org/abs/2402.01234") in set(g.objects(diffusion, URIRef("http://www.w3.org/2000/01/rdf-schema#seeAlso")))
    assert "the same paper as" in result.output and "(same DOI)" in result.output


@pytest.mark.parametrize("name, content, message", [
    ("bad.bib", "@article{good, title={T}, abstract={We study graph neural networks.}, year={2024}}\n\n@article{broken,\n  title = {Unclosed,\n",
     "bad.bib:3: malformed BibTeX (Unexpectedly reached end of file); fix the entry or pass --skip-bad"),
    ("bad.ris", "TY  - JOUR\nTI  - A title\nAB  - We study graph neural networks.\nER  - \n\nTY  - JOUR\nTI  - Never ended\n",
     "bad.ris: malformed RIS (2 'TY  - ' lines but 1 references end with 'ER  - ')"),
    ("bad.xml", '<?xml version="1.0"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n<entry><title>x</title>\n</feed>\n', "bad.xml:4: malformed XML ("),
    ("bad.atom", '<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2401.1v1</id><title>No summary</title></entry></feed>',
     "bad.atom: entry 1: the record has no abstract"),
    ("bad-csl.json", '[{"type": "article-journal", "title": "T", "container-title": "JMLR", "author": [{"family": "A"}]}]', "bad-csl.json: record 1: the record has no abstract"),
    ("bad-openalex.json", '{"results": [{"id": "https://openalex.org/W1", "abstract_inverted_index": null}]}', "bad-openalex.json: record 1: the record has no abstract"),
    ("bad-year.bib", "@inproceedings{k1, title={T}, abstract={We study graph neural networks.}, year={twenty}}\n", "bad-year.bib:1 (k1): year 'twenty' is not a whole year"),
])
def test_a_malformed_file_is_one_line_naming_file_and_record_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["build", name, "-o", "out.ttl", *TINY])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {message}"), result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.ttl").exists()


def test_skip_bad_keeps_the_good_bibtex_entries(tmp_path: Path) -> None:
    path = tmp_path / "bad.bib"
    path.write_text("@article{good, title={T}, abstract={We study graph neural networks.}, year={2024}}\n\n@article{broken,\n  title = {Unclosed,\n", encoding="utf-8")
    got = ingest.read([path], skip_bad=True)
    assert [p.id for p in got.papers] == ["good"] and got.problems[0].startswith(f"skipped {path}:3: malformed BibTeX")
    with pytest.raises(InputError):
        ingest.read([path])


def test_venue_and_year_for_a_whole_file_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "icml.json").write_text(json.dumps([{"title": "T", "abstract": "We study graph neural networks.", "author": "Lovelace, Ada"}]))
    result = CliRunner().invoke(cli, ["build", "icml.json", "-o", "g.ttl", "--venue", "ICML", "--year", "2024", *TINY])
    assert result.exit_code == 0, result.output
    assert "no venue or no year" not in result.output
    g = Graph().parse(tmp_path / "g.ttl")
    (paper,) = g.subjects(URIRef(DCT + "title"), Literal("T"))
    assert str(g.value(g.value(paper, URIRef(DCT + "isPartOf")), URIRef("http://www.w3.org/2000/01/rdf-schema#label"))) == "ICML"
    assert str(g.value(paper, URIRef("http://purl.org/spar/fabio/hasPublicationYear"))) == "2024"
    without = CliRunner().invoke(cli, ["build", "icml.json", "-o", "h.ttl", *TINY])
    assert "note: icml.json: 1 paper has no venue or no year; pass --venue NAME --year YYYY to give them one" in without.output
    assert CliRunner().invoke(cli, ["build", "icml.json", "-o", "i.ttl", "--year", "99999", *TINY]).exit_code == 2
