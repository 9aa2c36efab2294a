"""The cheap faults of issue 17's "Low" list: each one a clean error (or the right answer) instead of a crash."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import urllib.parse
import xml.dom.minidom
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.graph.files import read_triples
from kg.graph.vocabulary import DCTERMS

from .conftest import FIXTURES

TINY = ["--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme"]
GOOD = {"id": "g1", "title": "Offline RL", "abstract": "Offline reinforcement learning with large language models."}


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KG_DEBUG", raising=False)
    return CliRunner()


def one_line_error(result, *parts: str) -> None:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for part in parts:
        assert part in lines[0], lines[0]


def test_a_number_of_5000_digits_names_its_line_and_skip_bad_skips_it(runner: CliRunner) -> None:
    Path("p.jsonl").write_text(json.dumps(GOOD) + "\n" + '{"id": "x", "abstract": "Diffusion models.", "year": ' + "9" * 5000 + "}\n")
    one_line_error(runner.invoke(cli, ["build", "p.jsonl", "-o", "g.ttl", "--no-render", *TINY]), "p.jsonl:2: unreadable JSON")
    assert not Path("g.ttl").exists()
    result = runner.invoke(cli, ["build", "p.jsonl", "-o", "g.ttl", "--no-render", "--skip-bad", *TINY])
    assert result.exit_code == 0 and "p.jsonl:2" in result.output, result.output
    assert {t.object.value for t in read_triples("g.ttl") if t.predicate.value == DCTERMS + "identifier"} == {"g1"}
    Path("p.json").write_text('[{"abstract": "x", "year": ' + "9" * 5000 + "}]")
    one_line_error(runner.invoke(cli, ["build", "p.json", "-o", "h.ttl", "--no-render", *TINY]), "p.json: unreadable JSON")


@pytest.mark.parametrize("base", ["http://x/%zz/", "http://x/#a#", "http://x/\x01/", "http://x y/", "relative/", "http://x/no-slash"])
def test_base_values_that_are_not_iris_are_refused(runner: CliRunner, base: str) -> None:
    one_line_error(runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "g.ttl", "--base", base, *TINY]), "base IRI")
    assert not Path("g.ttl").exists()


def test_an_upper_case_scheme_is_an_iri_too(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["build", str(FIXTURES / "tiny.jsonl"), "-o", "g.ttl", "--no-render", "--base", "HTTP://EX.ORG/", *TINY])
    assert result.exit_code == 0, result.output
    assert any(t.subject.value.startswith("HTTP://EX.ORG/paper/") for t in read_triples("g.ttl"))


def test_the_api_takes_one_path_as_a_string(tmp_path: Path) -> None:
    built = kg.build(str(FIXTURES / "tiny.jsonl"), schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False)
    assert sorted(p.id for p in built.papers) == ["p1", "p2", "p3"]


@pytest.mark.parametrize("threshold", [2, -1, math.nan, "0.5"])
def test_a_threshold_outside_0_to_1_is_refused(threshold: object) -> None:
    with pytest.raises(kg.UsageError, match="threshold"):
        kg.build([FIXTURES / "tiny.jsonl"], schemes=[FIXTURES / "tiny-scheme.ttl"], default_scheme=False, threshold=threshold)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [["render", "adir"], ["report", "adir"], ["export", "adir"], ["analyze", "adir", "-o", "a.ttl"]])
def test_a_directory_as_graph_is_named(runner: CliRunner, command: list[str]) -> None:
    Path("adir").mkdir()
    one_line_error(runner.invoke(cli, command), "adir: is a directory")


@pytest.mark.parametrize(("name", "content", "message"), [
    ("p.json", "[]", "p.json: the JSON list holds no paper records"),
    ("p.json", '{"papers": []}', "p.json: the JSON list holds no paper records"),
    ("p.csv", "id,title,abstract\n", "p.csv: the CSV has a header but no rows"),
    ("p.csv", "id,abstract,title,abstract\n1,first,t,second\n", "p.csv:1: the CSV header names the column 'abstract' more than once"),
])
def test_empty_inputs_and_duplicate_columns_name_the_file(runner: CliRunner, name: str, content: str, message: str) -> None:
    Path(name).write_text(content)
    one_line_error(runner.invoke(cli, ["build", name, "-o", "g.ttl", "--no-render", *TINY]), message)


def test_unknown_parameter_names_are_refused(runner: CliRunner, mini_ttl: Path) -> None:
    one_line_error(runner.invoke(cli, ["query", "top-concepts", "--graph", str(mini_ttl), "-p", "zzz=1"]), "no parameter 'zzz'")
    Path("q.rq").write_text("SELECT ?p WHERE { ?p a ?kind }\n")
    one_line_error(runner.invoke(cli, ["query", "q.rq", "--graph", str(mini_ttl), "-p", "knd=x"]), "no parameter 'knd'")
    result = runner.invoke(cli, ["query", "q.rq", "--graph", str(mini_ttl), "-p", "kind=http://purl.org/spar/fabio/ResearchPaper", "-f", "csv"])
    assert result.exit_code == 0 and result.output.count("\n") == 6, result.output  # header + 5 papers


def test_serve_refuses_to_start_on_a_graph_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "bad.ttl").write_text("@prefix : <http://x/> .\n:a :b .\n")
    done = subprocess.run([sys.executable, "-m", "kg", "serve", "bad.ttl", "--port", "0"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)  # (a server that starts anyway never returns: the timeout fails the test)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("Error: bad.ttl: cannot serve it") and "not valid RDF" in lines[0], lines[0]


def test_xml_results_are_well_formed_or_refused(mini_ttl: Path) -> None:
    from kg.endpoint.app import make_app

    app = make_app(mini_ttl, workers=1, timeout=10.0)
    try:
        def xml_of(literal: str) -> tuple[int, bytes]:
            query = f'SELECT ?x WHERE {{ BIND("{literal}" AS ?x) }}'
            environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/sparql", "QUERY_STRING": urllib.parse.urlencode({"query": query}),
                       "wsgi.input": io.BytesIO(b""), "HTTP_ACCEPT": "application/sparql-results+xml"}
            got: dict = {}
            body = b"".join(app(environ, lambda status, headers: got.setdefault("status", int(status.split()[0]))))
            return got["status"], body

        status, body = xml_of("a\\rb")
        assert status == 200
        text = xml.dom.minidom.parseString(body).getElementsByTagName("literal")[0].firstChild.data  # type: ignore[union-attr]
        assert text == "a\rb"
        status, body = xml_of("a\\u0001b")
        assert status == 406 and b"U+0001" in body and b"JSON" in body
    finally:
        app.close()
