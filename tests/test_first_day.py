"""A new user's first day: the README tour on their own file, in a fresh folder, with no --graph flags."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import cli

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder holding only the user's own paper list."""
    shutil.copy(FIXTURES / "tiny.jsonl", tmp_path / "my.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_tour_on_my_own_file_needs_no_graph_flag(fresh: Path) -> None:
    runner = CliRunner()
    built = runner.invoke(cli, ["build", "my.jsonl"])
    assert built.exit_code == 0, built.output
    assert (fresh / "graphs" / "my.ttl").is_file() and (fresh / "graphs" / "my.html").is_file()
    top = runner.invoke(cli, ["query", "top-concepts"])
    assert top.exit_code == 0, top.output
    assert "graph: graphs/my.ttl" in top.stderr, "says which graph answered"
    assert "reinforcement learning" in top.stdout and "graph:" not in top.stdout
    assert not (fresh / "graphs" / "icml2024.ttl").exists(), "the sample was never built behind the user's back"
    papers = runner.invoke(cli, ["query", "papers-by-concept", "-p", "concept=diffusion model", "-f", "csv"])
    assert papers.exit_code == 0, papers.output
    assert "Diffusion Models Are Planners" in papers.stdout


def test_the_most_recent_graph_answers(fresh: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["build", "my.jsonl", "-o", "graphs/first.ttl", "--no-render"]).exit_code == 0
    shutil.copy(fresh / "my.jsonl", fresh / "second.jsonl")
    assert runner.invoke(cli, ["build", "second.jsonl", "--no-render"]).exit_code == 0
    later = fresh / "graphs" / "second.ttl"
    os.utime(fresh / "graphs" / "first.ttl", (later.stat().st_mtime - 60, later.stat().st_mtime - 60))
    got = runner.invoke(cli, ["query", "top-concepts"])
    assert got.exit_code == 0 and "graph: graphs/second.ttl" in got.stderr
    os.utime(fresh / "graphs" / "first.ttl")  # touched last: now it answers
    got = runner.invoke(cli, ["query", "top-concepts"])
    assert got.exit_code == 0 and "graph: graphs/first.ttl" in got.stderr


def test_no_graph_yet_says_how_to_build_one(fresh: Path) -> None:
    got = CliRunner().invoke(cli, ["query", "top-concepts"])
    assert got.exit_code == 1
    assert "kg build YOUR_PAPERS.jsonl" in got.output and "Traceback" not in got.output


def test_eval_scores_the_latest_graph(fresh: Path) -> None:
    import json

    runner = CliRunner()
    assert runner.invoke(cli, ["build", "my.jsonl", "--no-render"]).exit_code == 0
    first = json.loads((fresh / "my.jsonl").read_text(encoding="utf-8").splitlines()[0])
    gold = fresh / "gold.jsonl"
    gold.write_text(json.dumps({"abstract_start": first["abstract"][:60], "topics": ["offline reinforcement learning"]}) + "\n", encoding="utf-8")
    got = runner.invoke(cli, ["eval", str(gold)])
    assert got.exit_code == 0, got.output
    assert "graph: graphs/my.ttl" in got.stderr
    assert "precision 1.000  recall 1.000" in got.stdout


def test_readme_sparql_runs_as_written_and_errors_are_one_line(fresh: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["build", "my.jsonl", "--no-render"]).exit_code == 0
    readme = "SELECT ?paper ?method WHERE { ?paper kg:proposes ?m . ?m rdfs:label ?method }"
    got = runner.invoke(cli, ["query", "-", "-f", "csv"], input=readme)
    assert got.exit_code == 0, got.output
    assert got.stdout.splitlines() == ["paper,method", "https://w3id.org/kg/paper/p1,LaMo"]
    (fresh / "mine.rq").write_text("# Papers and their subjects.\nSELECT ?p ?c WHERE {\n  ?p dcterms:subject ?c ;\n     bogus:x ?y }\n", encoding="utf-8")
    got = runner.invoke(cli, ["query", "mine.rq"])
    assert got.exit_code == 1
    (line,) = [ln for ln in got.output.splitlines() if ln.startswith("Error:")]
    assert "SPARQL syntax error at line 4, column" in line and "unknown prefix bogus:" in line
    assert [ln for ln in got.output.splitlines() if not ln.startswith("graph:")] == [line], "one line, no grammar dump"
    got = runner.invoke(cli, ["query", "-"], input="SELECT ?p WHERE { ?p dcterms:subject ?c . FILTER(?c = ) }")
    assert got.exit_code == 1 and len([ln for ln in got.output.splitlines() if not ln.startswith("graph:")]) == 1
    assert "SPARQL syntax error at line 1, column" in got.output and "\\u{" not in got.output


def test_terminal_output_help_and_python_display(fresh: Path) -> None:
    import kg

    runner = CliRunner()
    assert runner.invoke(cli, ["build", "my.jsonl", "--no-render"]).exit_code == 0
    for args in (["-h"], ["query", "-h"], ["build", "-h"], ["render", "-h"], ["serve", "-h"], ["export", "-h"]):
        got = runner.invoke(cli, args)
        assert got.exit_code == 0 and "Usage: " in got.output and "-h, --help" in got.output, args
        if args != ["-h"]:
            assert "Examples:" in got.output and "\n    kg " in got.output, args
    plain = runner.invoke(cli, ["query", "top-concepts", "-f", "tsv", "-n", "2"])
    assert plain.exit_code == 0
    lines = plain.stdout.splitlines()
    assert lines[0] == "concept\tlabel\tpapers\ttotal" and len(lines) == 3
    assert lines[1].split("\t")[:3] == ["https://w3id.org/kg/concept/reinforcement-learning", "reinforcement learning", "2"]
    terms = runner.invoke(cli, ["query", "top-concepts", "-f", "sparql-tsv", "-n", "1"])
    assert terms.stdout.splitlines()[1].startswith('<https://w3id.org/kg/concept/reinforcement-learning>\t"reinforcement learning"@en\t')
    evidence = runner.invoke(cli, ["query", "evidence", "-p", "paper=p2", "-p", "concept=diffusion model"])
    assert evidence.exit_code == 0, evidence.output
    head = evidence.stdout.splitlines()
    assert head[:2] == ["paper: paper:p2", "concept: kgc:diffusion-model"], "parameters said once, not echoed in every row"
    assert head[2].split() == ["mentioned", "label", "start", "end", "exact", "score", "field"]
    as_csv = runner.invoke(cli, ["query", "evidence", "-p", "paper=p2", "-p", "concept=diffusion model", "-f", "csv"])
    assert as_csv.stdout.startswith("paper,concept,mentioned,"), "files keep every column"
    rows = kg.query("top-concepts")
    text = repr(rows)
    assert text.startswith(f"<kg Results top-concepts: {len(rows)} rows × 4 (concept, label, papers, total)>")
    assert len(text.splitlines()) == 1 + 2 + 5 + 1 and text.endswith(f"… {len(rows) - 5} more rows")
    page = rows._repr_html_()
    assert page.count("<tr>") == 1 + min(20, len(rows)) and "kg Results top-concepts" in page


def test_jsonld_export_is_compact_and_reads_back_to_the_same_triples(fresh: Path) -> None:
    import json

    import pyoxigraph as ox

    import kg
    import kg.graph.files

    runner = CliRunner()
    assert runner.invoke(cli, ["build", "my.jsonl", "--no-render"]).exit_code == 0
    got = runner.invoke(cli, ["export", "graphs/my.ttl", "-o", "my.jsonld"])
    assert got.exit_code == 0, got.output
    doc = json.loads((fresh / "my.jsonld").read_text(encoding="utf-8"))
    assert doc["@context"]["dcterms"] == "http://purl.org/dc/terms/" and doc["@context"]["paper"] == "https://w3id.org/kg/paper/"
    paper = next(n for n in doc["@graph"] if n["@id"] == "paper:p1")
    assert paper["dcterms:title"] == ["Offline Reinforcement Learning with Large Language Models"]
    assert {"@id": "kgc:offline-reinforcement-learning"} in paper["dcterms:subject"]

    def key(t):
        return t.subject, t.predicate, t.object

    back = {key(t) for t in ox.parse((fresh / "my.jsonld").read_bytes(), format=ox.RdfFormat.JSON_LD)}
    assert back == {key(t) for t in kg.graph.files.read_triples(fresh / "graphs" / "my.ttl")}


def test_long_steps_say_what_they_do_on_a_terminal_only(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import pty
    import subprocess
    import sys

    assert CliRunner().invoke(cli, ["build", "my.jsonl", "--no-render"]).exit_code == 0
    command = [sys.executable, "-m", "kg", "query", "top-concepts", "-n", "1"]
    piped = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and "indexing" not in piped.stderr, "a pipe gets no progress"
    os.utime(fresh / "graphs" / "my.ttl")  # the query index is stale again: it will be made again
    monkeypatch.setenv("KG_PROGRESS_DELAY", "0")  # shown however quick (kg.core.progress shows steps over a second)
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, text=True) as proc:
        os.close(follower)
        out, _ = proc.communicate(timeout=120)
        said = b""
        try:
            while chunk := os.read(leader, 4096):
                said += chunk
        except OSError:
            pass
    os.close(leader)
    assert proc.returncode == 0 and "reinforcement learning" in out
    assert b"indexing graphs/my.ttl for the named queries" in said
