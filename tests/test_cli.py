"""The kg command through click's runner: exit codes, messages, files written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rdflib import Graph

from kg.cli import cli

from .conftest import FIXTURES

TINY = ["--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme"]


@pytest.fixture()
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_build_without_inputs_writes_sample_graph_and_html(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build"])
    assert result.exit_code == 0, result.output
    ttl, html = Path("graphs/icml2024.ttl"), Path("graphs/icml2024.html")
    assert ttl.stat().st_size > 10_000 and html.stat().st_size > 10_000
    assert "38 papers" in result.output and "top concepts:" in result.output
    assert len(Graph().parse(ttl, format="turtle")) > 1000


def test_build_inputs_to_named_output(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "out/tiny.ttl", "--no-render", *TINY])
    assert result.exit_code == 0, result.output
    assert "3 papers" in result.output
    assert Path("out/tiny.ttl").exists() and not Path("out/tiny.html").exists()


def test_build_lets_the_extractors_go(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, _extractors_kept: Any) -> None:
    """Once its papers are extracted a build lets its extractor go (tests/conftest.py keeps them for the other tests)."""
    import kg.extract

    monkeypatch.setattr(kg.extract, "forget_extractors", _extractors_kept)  # the real one
    kg.extract.make_extractor(kg.extract.scheme.load())  # one kept before the build
    result = runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "tiny.ttl", "--no-render", "--no-store", *TINY])
    assert result.exit_code == 0, result.output
    assert kg.extract._kept == {}


def test_build_lets_the_papers_go_before_the_page(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The papers and extractions are most of a large build's memory: the page is drawn without them (decision 0059)."""
    import gc
    import shutil

    import kg.cli.build
    from kg.pipeline.build import Built

    source = tmp_path / "held-papers.jsonl"
    shutil.copy(FIXTURES / "tiny.jsonl", source)
    held: list[int] = []

    def page(graph: Path) -> None:
        gc.collect()
        held.append(sum(1 for o in gc.get_objects() if isinstance(o, Built) and o.inputs == (source.name,)))

    monkeypatch.setattr(kg.cli.build, "_page", page)
    result = runner.invoke(cli, ["build", str(source), "-o", "out/held.ttl", "--no-store", *TINY])
    assert result.exit_code == 0, result.output
    assert held == [0]
    assert "3 papers" in result.output  # the summary, taken before they went


def test_build_starts_the_store_and_lets_the_papers_go_before_the_index_tables(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's process reads only the graph file: it loads beside the index's tables and the page, not after the
    tables, and the tables are made without the papers and extractions in memory (decision 0060)."""
    import gc
    import shutil

    import kg.sparql.store
    from kg.graph import index_writer
    from kg.pipeline.build import Built

    source = tmp_path / "early-store.jsonl"
    shutil.copy(FIXTURES / "tiny.jsonl", source)
    events: list[str] = []
    load_aside, close = kg.sparql.store.load_aside, index_writer.Writer.close

    def aside(graph: Path) -> kg.sparql.store.Loading:
        events.append("store started")
        return load_aside(graph)

    def tables(self: index_writer.Writer, stamp: dict | None) -> Path | None:
        gc.collect()
        held = sum(1 for o in gc.get_objects() if isinstance(o, Built) and o.inputs == (source.name,))
        events.append(f"index tables with {held} builds held")
        return close(self, stamp)

    monkeypatch.setattr(kg.sparql.store, "load_aside", aside)
    monkeypatch.setattr(index_writer.Writer, "close", tables)
    result = runner.invoke(cli, ["build", str(source), "-o", "out/early.ttl", "--no-render", *TINY])
    assert result.exit_code == 0, result.output
    assert events == ["store started", "index tables with 0 builds held"]
    assert "3 papers" in result.output and Path("out/early.oxigraph").is_dir()
    assert int(kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", graph=Path("out/early.ttl")).rows[0][0].value) > 100


def test_build_default_output_is_named_after_first_input(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build", str(FIXTURES / "tiny.csv"), "--no-render", *TINY])
    assert result.exit_code == 0, result.output
    assert Path("graphs/tiny.ttl").exists()


def test_missing_input_is_one_clean_line(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build", "nope.jsonl"])
    assert result.exit_code == 1
    assert result.output == "Error: nope.jsonl: no such file\n"
    assert not Path("graphs").exists()


def test_unknown_input_format_lists_known_ones(runner: CliRunner) -> None:
    Path("papers.xlsx").write_text("x")
    result = runner.invoke(cli, ["build", "papers.xlsx"])
    assert result.exit_code == 1
    assert "papers.xlsx: unknown input format '.xlsx' (known: .atom, .bib, .bibtex, .csljson, .csv, .json, .jsonl, .ndjson, .ris, .txt, .xml)" in result.output


def test_bad_base_is_rejected_before_any_work(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build", "nope.jsonl", "--base", "relative/"])
    assert result.exit_code == 1
    assert "base IRI 'relative/' must be an absolute IRI" in result.output


@pytest.mark.parametrize(("fmt", "parser"), [("nt", "nt"), ("jsonld", "json-ld"), ("xml", "xml"), ("ttl", "turtle")])
def test_export_formats_parse_back(runner: CliRunner, fmt: str, parser: str) -> None:
    assert runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "g.ttl", "--no-render", *TINY]).exit_code == 0
    result = runner.invoke(cli, ["export", "g.ttl", "--format", fmt, "-o", f"out.{fmt}"])  # (-o g.ttl is its input: refused)
    assert result.exit_code == 0, result.output
    assert len(Graph().parse(f"out.{fmt}", format=parser)) == len(Graph().parse("g.ttl", format="turtle"))


def test_export_to_stdout_and_unknown_format(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "g.ttl", "--no-render", *TINY]).exit_code == 0
    result = runner.invoke(cli, ["export", "g.ttl", "--format", "nt"])
    assert result.exit_code == 0 and "<https://w3id.org/kg/paper/p1>" in result.output
    result = runner.invoke(cli, ["export", "g.ttl", "--format", "docx"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: unknown export format 'docx' (available: ttl, nt")


def test_export_of_a_missing_graph_says_how_to_make_one(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["export", "graphs/none.ttl"])
    assert result.exit_code == 1
    assert "graphs/none.ttl: no such graph file; build one with 'kg build YOUR_PAPERS.jsonl" in result.output


MISSING = "graphs/none.ttl"
ONE_MESSAGE = (f"Error: {MISSING}: no such graph file; build one with 'kg build YOUR_PAPERS.jsonl -o {MISSING}' "
               "(or 'kg build' for the bundled sample), or pass the path of an existing graph")


@pytest.mark.parametrize("args", [
    ["export", MISSING],
    ["render", MISSING],
    ["report", MISSING],
    ["analyze", MISSING],
    ["query", "top-concepts", "--graph", MISSING],
    ["query", "-", "--graph", MISSING],
    ["serve", MISSING],
    ["push", MISSING, "--store", "http://127.0.0.1:9/store"],
    ["build", str(FIXTURES / "tiny.jsonl"), "--update", MISSING, *TINY],
], ids=lambda a: " ".join(a[:2]))
def test_every_command_says_the_same_of_a_missing_graph(runner: CliRunner, args: list[str]) -> None:
    """One error for a graph that is not there, whichever command is asked (#28: five wordings and two error types before)."""
    result = runner.invoke(cli, args, input="SELECT * { ?s ?p ?o } LIMIT 1")
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == ONE_MESSAGE


def test_render_writes_html_beside_graph(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "g.ttl", "--no-render", *TINY]).exit_code == 0
    result = runner.invoke(cli, ["render", "g.ttl"])
    assert result.exit_code == 0, result.output
    assert "<html" in Path("g.html").read_text(encoding="utf-8").lower()


def test_a_result_shown_as_bytes_prints_what_its_text_prints(capsysbinary) -> None:
    """kg query hands its table to `show` as bytes, written as they are when that is what the text would print (issue
    #38): the same bytes for plain and non-ASCII text, and escape sequences taken out for a pipe as click does."""
    from kg.cli.common import show

    for text in ["a  b\n", "é … \u2028 ✓\n", "red \x1b[31mx\x1b[0m end\n", "cr\r\n", ""]:
        show(text)
        as_text = capsysbinary.readouterr().out
        show(text.encode("utf-8"))
        assert capsysbinary.readouterr().out == as_text, text
    show(b"\x1b[1mbold\x1b[0m")
    assert capsysbinary.readouterr().out == b"bold"


def test_a_long_result_on_a_terminal_goes_through_a_pager(monkeypatch):
    """Like git: a table taller than the terminal is paged (less -FRSX unless $LESS says otherwise); a short one, or a pipe, is printed."""
    import os
    import sys

    from kg.cli import common as cli_module

    paged: list[str] = []
    printed: list[str] = []
    monkeypatch.setattr(cli_module.click, "echo_via_pager", lambda text: paged.append(text))
    monkeypatch.setattr(cli_module.click, "echo", lambda text, nl=True: printed.append(text))
    monkeypatch.setattr("shutil.get_terminal_size", lambda *a: os.terminal_size((80, 10)))
    monkeypatch.delenv("LESS", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    cli_module.show("row\n" * 50)
    cli_module.show("row\n" * 3)
    assert paged == ["row\n" * 50] and printed == ["row\n" * 3] and os.environ["LESS"] == "FRSX"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    cli_module.show("row\n" * 50)
    assert len(paged) == 1 and printed[-1] == "row\n" * 50


def test_serve_names_the_option_to_change_when_it_cannot_listen(runner: CliRunner, mini_ttl: Path, tmp_path: Path) -> None:
    """A taken port asks for another --port; a host name that resolves to nothing asks for another --host."""
    import shutil
    import socket

    graph = shutil.copy(mini_ttl, tmp_path / "g.ttl")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(cli, ["serve", str(graph), "--port", str(port)])
    assert result.exit_code != 0 and result.output.strip().splitlines()[-1] == (
        f"Error: cannot listen on 127.0.0.1:{port} (Address already in use); pick another --port")
    result = runner.invoke(cli, ["serve", str(graph), "--host", "no-such-host.invalid", "--port", "0"])
    last = result.output.strip().splitlines()[-1]
    assert result.exit_code != 0 and last.startswith("Error: cannot listen on no-such-host.invalid:0 (") and last.endswith("); check --host"), last
