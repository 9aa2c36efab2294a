"""Faults through the `kg` command: one clean error line, exit codes, and outputs never half-written."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner, Result
from rdflib import Graph, Literal, URIRef

import kg.extract
import kg.pipeline.triples
from kg.cli import cli
from kg.graph import stamp as index

from .conftest import FIXTURES
from .test_index import indexed
from .test_ingest import BAD_CASES, GOOD, jsonl, write

TINY = ["--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme", "--no-store"]  # the store is tested in test_store_versions
TRACEBACK = "Traceback (most recent call last)"


@pytest.fixture()
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KG_DEBUG", raising=False)
    return CliRunner()


def build(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, ["build", *args, *TINY])


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (temporary files included) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def earlier_build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The files of a good build (graph and HTML), made once."""
    out = tmp_path_factory.mktemp("earlier") / "out"
    result = CliRunner().invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", str(out / "g.ttl"), *TINY])
    assert result.exit_code == 0, result.output
    files = snapshot(out)
    assert sorted(files) == ["g.html", "g.kg-query.sqlite", "g.ttl"]  # the index lets updates skip parsing the graph
    return files


@pytest.fixture()
def previous(runner: CliRunner, earlier_build: dict[str, bytes]) -> dict[str, bytes]:
    """A good earlier build in out/ whose bytes a failed run must leave alone."""
    Path("out").mkdir()
    for name, data in earlier_build.items():
        Path("out", name).write_bytes(data)
    return earlier_build


# ---------------------------------------------------------------- bad input: one line, exit 1, nothing written


@pytest.mark.parametrize("name", BAD_CASES)
def test_every_bad_input_is_one_error_line_and_leaves_outputs_alone(
    runner: CliRunner, previous: dict[str, bytes], name: str
) -> None:
    filename, content, message = BAD_CASES[name]
    path = write(Path(filename), content)
    result = build(runner, str(path), "-o", "out/g.ttl")
    assert result.exit_code == 1
    assert result.output == f"Error: {path}{message}\n"
    assert snapshot(Path("out")) == previous  # byte-identical, and no temporary files left


def test_missing_file_directory_and_empty_list_through_the_cli(runner: CliRunner) -> None:
    Path("papers").mkdir()
    write(Path("none.json"), "[]")
    cases = {
        "nope.jsonl": "Error: nope.jsonl: no such file\n",
        "papers": "Error: papers: is a directory; pass the files inside it (e.g. papers/*.jsonl)\n",
        "none.json": "Error: none.json: the JSON list holds no paper records\n",  # the file is named
    }
    for arg, expected in cases.items():
        result = build(runner, arg, "-o", "out/g.ttl")
        assert (result.exit_code, result.output) == (1, expected)
    assert not Path("out").exists()


def test_skip_bad_builds_the_rest_and_warns_on_stderr(runner: CliRunner) -> None:
    path = write(Path("m.jsonl"), jsonl({"id": "a", "abstract": GOOD}) + "{oops\n" + jsonl({"id": "c"}, {"id": "a", "abstract": "Again."}, {"id": "d", "abstract": "Diffusion models plan."}))
    result = build(runner, str(path), "missing.csv", "-o", "g.ttl", "--no-render", "--skip-bad")
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if not line.startswith("note: ")] == [  # notes: advice (no venue)
        "warning: skipped m.jsonl:2: malformed JSON (Expecting property name enclosed in double quotes, column 2)",
        "warning: skipped m.jsonl:3: the record has no abstract",
        "warning: m.jsonl:4: duplicate id 'a', first at m.jsonl:1; kept the first",
        "warning: skipped missing.csv: no such file",
    ]
    assert TRACEBACK not in result.output
    graph = Graph().parse("g.ttl", format="turtle")
    ids = {str(o) for o in graph.objects(None, URIRef("http://purl.org/dc/terms/identifier"))}
    assert ids == {"a", "d"}
    assert (None, None, Literal(GOOD)) in graph  # the first 'a' was kept


def test_skip_bad_with_nothing_left_fails(runner: CliRunner) -> None:
    write(Path("n.jsonl"), jsonl({"id": "c"}))
    result = build(runner, "n.jsonl", "--skip-bad", "-o", "g.ttl")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Error: no papers to build: all 1 records or files were bad, the first: n.jsonl:1: the record has no abstract",
    ]
    assert not Path("g.ttl").exists()


# ---------------------------------------------------------------- faults inside extraction and RDF making


@pytest.fixture()
def poisoned_extractor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real extractor, except that it crashes on any abstract containing 'POISON'."""
    real = kg.extract.PhraseExtractor

    def factory(scheme: Any, threshold: float | None, model: Any = None) -> Any:
        inner = real(scheme, threshold, model)

        def run(papers: Any) -> Any:
            if any("POISON" in p.abstract for p in papers):
                raise ValueError("tokenizer exploded")
            return inner(papers)

        return run

    monkeypatch.setattr(kg.extract, "PhraseExtractor", factory)


def test_a_crash_inside_extraction_names_the_record(runner: CliRunner, previous: dict[str, bytes], poisoned_extractor: None) -> None:
    write(Path("p.jsonl"), jsonl({"id": "a", "abstract": GOOD}, {"id": "b", "abstract": "POISON here."}, {"id": "c", "abstract": "Diffusion models."}))
    result = build(runner, "p.jsonl", "-o", "out/g.ttl")
    assert (result.exit_code, result.output) == (1, "Error: p.jsonl:2: extraction failed on this record (ValueError: tokenizer exploded)\n")
    assert snapshot(Path("out")) == previous
    result = build(runner, "p.jsonl", "-o", "out/g.ttl", "--skip-bad")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: skipped p.jsonl:2: extraction failed on this record (ValueError: tokenizer exploded)\n")
    assert all(line.startswith("note: ") for line in result.stderr.splitlines()[1:])  # advice (no venue), nothing else
    ids = {str(o) for o in Graph().parse("out/g.ttl").objects(None, URIRef("http://purl.org/dc/terms/identifier"))}
    assert ids == {"a", "c"}


def test_a_record_that_cannot_become_rdf_is_named(runner: CliRunner, previous: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    real = kg.pipeline.triples._paper

    def _paper(paper: Any, *args: Any) -> Iterator:
        if paper.id == "b":
            raise ValueError("Invalid IRI code point ' '")
        return real(paper, *args)

    monkeypatch.setattr(kg.pipeline.triples, "_paper", _paper)
    write(Path("p.jsonl"), jsonl({"id": "a", "abstract": GOOD}, {"id": "b", "abstract": "Second."}))
    result = build(runner, "p.jsonl", "-o", "out/g.ttl")
    assert (result.exit_code, result.output) == (1, "Error: p.jsonl:2: cannot turn this record into RDF (ValueError: Invalid IRI code point ' ')\n")
    assert snapshot(Path("out")) == previous


# ---------------------------------------------------------------- faults while writing: previous output intact, no temp files


def serializer_failing_midway(exc: BaseException) -> Any:
    """A pyoxigraph.serialize that writes part of the output, then fails with `exc`."""
    import pyoxigraph

    real = pyoxigraph.serialize

    def serialize(items: Any, output: Any, **kwargs: Any) -> None:
        items = list(items)
        real(items[: len(items) // 2], output, **kwargs)
        output.flush()
        assert output.tell() > 1000  # really half-written
        raise exc

    return serialize


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (OSError(28, "No space left on device"), 1, "Error: out/g.ttl: cannot write (No space left on device)"),
        (RuntimeError("boom"), 1, "Error: unexpected RuntimeError: boom (a bug in kg: please report it; KG_DEBUG=1 shows the traceback)"),
        (KeyboardInterrupt(), 130, "Error: interrupted; outputs not yet written were left as they were"),
    ],
)
def test_a_failure_midway_through_writing_leaves_the_previous_outputs_byte_identical(
    runner: CliRunner, previous: dict[str, bytes], monkeypatch: pytest.MonkeyPatch, exc: BaseException, code: int, line: str
) -> None:
    import pyoxigraph

    write(Path("other.jsonl"), jsonl({"id": "new", "abstract": GOOD}))
    monkeypatch.setattr(pyoxigraph, "serialize", serializer_failing_midway(exc))
    result = build(runner, "other.jsonl", "-o", "out/g.ttl")
    assert result.exit_code == code
    assert result.output == line + "\n"
    assert snapshot(Path("out")) == previous


def test_kg_debug_shows_the_traceback_of_a_bug(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyoxigraph

    monkeypatch.setattr(pyoxigraph, "serialize", serializer_failing_midway(RuntimeError("boom")))
    monkeypatch.setenv("KG_DEBUG", "1")
    result = build(runner, str(FIXTURES / "tiny.jsonl"), "-o", "g.ttl", "--no-render")
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)
    assert not Path("g.ttl").exists() and os.listdir(".") == []


@contextlib.contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """A real file-size limit (writes beyond it fail with EFBIG) for the body of a with-block only.

    The limit is process-wide: it must be lifted before pytest reports the test, or pytest's own
    writes to a redirected log (CI's) fail too.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def test_a_real_write_fault_in_the_graph_leaves_everything_as_it_was(runner: CliRunner, previous: dict[str, bytes]) -> None:
    write(Path("other.jsonl"), jsonl(*({"id": f"n{i}", "abstract": f"{GOOD} Number {i}."} for i in range(200))))
    with file_size_limit(len(previous["g.ttl"]) + 100):  # the new graph is far larger
        result = build(runner, "other.jsonl", "-o", "out/g.ttl")
    assert (result.exit_code, result.output) == (1, "Error: out/g.ttl: cannot write (File too large)\n")
    assert snapshot(Path("out")) == previous


def test_html_is_written_atomically_after_the_graph(runner: CliRunner, previous: dict[str, bytes]) -> None:
    # The graph (small) fits under the limit, the HTML page (which inlines vis-network) does not:
    # the graph is replaced, the old page stays whole, and no temporary file is left.
    write(Path("other.jsonl"), jsonl({"id": "new", "abstract": GOOD}))
    with file_size_limit(len(previous["g.html"]) // 2):
        result = build(runner, "other.jsonl", "-o", "out/g.ttl")
    assert result.exit_code == 1
    assert result.output.splitlines() == ["wrote out/g.ttl", "Error: out/g.html: cannot write (File too large)"]
    now = snapshot(Path("out"))
    assert sorted(now) == ["g.html", "g.kg-query.sqlite", "g.ttl"]
    assert indexed(Path("out/g.ttl")) == index.scan(Path("out/g.ttl"))  # the index was written with the new graph
    assert now["g.html"] == previous["g.html"]
    assert b'"new"' in now["g.ttl"] and now["g.ttl"] != previous["g.ttl"]


def test_output_paths_that_cannot_be_files(runner: CliRunner) -> None:
    Path("adir").mkdir()
    write(Path("afile"), "x")
    result = build(runner, str(FIXTURES / "tiny.jsonl"), "-o", "adir", "--no-render")
    assert (result.exit_code, result.output) == (1, "Error: adir: is a directory; give a file name for the output\n")
    result = build(runner, str(FIXTURES / "tiny.jsonl"), "-o", "afile/g.ttl", "--no-render")
    assert result.exit_code == 1
    assert result.output.startswith("Error: afile/g.ttl: cannot write (") and TRACEBACK not in result.output
    assert sorted(os.listdir(".")) == ["adir", "afile"] and os.listdir("adir") == []


def test_export_to_rdf_xml_refuses_characters_xml_cannot_carry(runner: CliRunner) -> None:
    # A graph made elsewhere may hold a NUL; pyoxigraph would write it raw into invalid XML.
    write(Path("g.nt"), '<https://example.org/a> <https://example.org/p> "nul\\u0000here" .\n')
    write(Path("old.rdf"), "previous")
    result = runner.invoke(cli, ["export", "g.nt", "-f", "xml", "-o", "old.rdf"])
    assert result.exit_code == 1
    assert result.output == "Error: cannot write RDF/XML: 'nul\\x00here'… holds U+0000, which XML 1.0 cannot carry; use ttl, nt or jsonld\n"
    assert Path("old.rdf").read_text() == "previous" and sorted(os.listdir(".")) == ["g.nt", "old.rdf"]


def test_same_ids_in_other_case_or_spacing_stay_distinct_papers(runner: CliRunner) -> None:
    write(Path("ids.jsonl"), jsonl({"id": "A B", "abstract": "First."}, {"id": "a-b", "abstract": "Second."}, {"id": "..", "abstract": "Dots."}))
    result = build(runner, "ids.jsonl", "-o", "g.ttl", "--no-render")
    assert result.exit_code == 0, result.output
    graph = Graph().parse("g.ttl", format="turtle")
    dcterms = "http://purl.org/dc/terms/"
    papers = {str(graph.value(s, URIRef(dcterms + "identifier"))): s for s in graph.subjects(URIRef(dcterms + "abstract"), None)}
    assert sorted(papers) == ["..", "A B", "a-b"]
    assert len(set(papers.values())) == 3
    for paper in papers.values():
        assert len(list(graph.objects(paper, URIRef(dcterms + "abstract")))) == 1
    assert str(papers[".."]).endswith("/paper/%2E%2E")  # not a dot-segment that IRI resolution would remove
    assert json.dumps(str(papers["A B"])).count(" ") == 0
