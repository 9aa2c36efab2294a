"""`kg build --update` on graphs it did not write, concurrent updates, and outputs equal to inputs (issue 17, items 2, 3, 9)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import cli
from kg.graph import index_file
from kg.graph.files import read_triples
from kg.graph.vocabulary import DCTERMS
from kg.sparql import store

from .conftest import FIXTURES, ROOT


def paper(i: int) -> str:
    return json.dumps({"id": f"n{i}", "title": f"Reinforcement learning study {i}",
                       "abstract": f"We study offline reinforcement learning and diffusion models, case {i}.", "authors": ["A. Author"]})


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny fixture built into a Turtle graph (no HTML), with its query index and store, once for the module:
    a build writes the whole scheme and its index (about 2 s of CPU), and 25 tests here start from this graph."""
    out = tmp_path_factory.mktemp("built") / "g.ttl"
    with pytest.MonkeyPatch.context() as mp:  # a module fixture runs before the autouse one that sets the build time
        mp.setenv("SOURCE_DATE_EPOCH", "1700000000")
        result = CliRunner().invoke(cli, ["build", "--no-render", str(FIXTURES / "tiny.jsonl"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def built(built_once: Path, tmp_path: Path) -> Path:
    """`built_once` and the files beside it copied into the test's folder, modification times kept: the copy's query
    index and store describe the copy (kg.graph.stamp: the name, size, time and digest), as they did the build's."""
    for path in built_once.parent.iterdir():
        if path.is_dir():
            shutil.copytree(path, tmp_path / path.name, symlinks=True)  # the store's `current` link stays a link
        else:
            shutil.copy2(path, tmp_path / path.name)
    graph = tmp_path / built_once.name
    assert index_file.fresh(graph) and store.fresh_folder(graph), "the copy's index and store must be fresh, as a build's are"
    return graph


def papers_of(graph: Path) -> dict[str, str]:
    """dcterms:identifier -> paper IRI, parsed back from the file."""
    return {t.object.value: t.subject.value for t in read_triples(graph) if t.predicate.value == DCTERMS + "identifier"}


def test_update_of_an_empty_file_is_refused_and_leaves_it_alone(tmp_path: Path) -> None:
    graph, new = tmp_path / "g.ttl", tmp_path / "new.jsonl"
    graph.write_bytes(b"")
    new.write_text(paper(1) + "\n")
    result = CliRunner().invoke(cli, ["build", "--no-render", "--update", str(graph), str(new)])
    assert result.exit_code == 1
    assert "g.ttl: not a graph kg built" in result.output and "Traceback" not in result.output
    assert graph.read_bytes() == b""


def test_a_foreign_prefix_at_the_end_does_not_move_the_appended_papers(built: Path, tmp_path: Path) -> None:
    with built.open("a", encoding="utf-8") as stream:
        stream.write("@prefix paper: <http://evil.example/paper/> .\n@prefix dcterms: <http://evil.example/terms/> .\n")
    new = tmp_path / "new.jsonl"
    new.write_text(paper(1) + "\n" + paper(2) + "\n")
    result = CliRunner().invoke(cli, ["build", "--no-render", "--update", str(built), str(new)])
    assert result.exit_code == 0, result.output
    found = papers_of(built)  # parsed back: the file is valid Turtle and the IRIs are kg's
    assert set(found) == {"p1", "p2", "p3", "n1", "n2"}
    assert all(iri.startswith("https://w3id.org/kg/paper/") for iri in found.values()), found
    assert not any("evil.example" in t.subject.value or "evil.example" in t.predicate.value for t in read_triples(built))


def test_the_appended_block_parses_on_its_own(built: Path, tmp_path: Path) -> None:
    before = built.read_bytes()
    new = tmp_path / "new.jsonl"
    new.write_text(paper(3) + "\n")
    assert CliRunner().invoke(cli, ["build", "--no-render", "--update", str(built), str(new)]).exit_code == 0
    block = tmp_path / "block.ttl"
    block.write_bytes(built.read_bytes()[len(before):])
    assert set(papers_of(block)) == {"n3"}


def test_two_concurrent_updates_keep_both_runs_papers(built: Path, tmp_path: Path) -> None:
    inputs = []
    for k in range(2):
        path = tmp_path / f"new{k}.jsonl"
        path.write_text("".join(paper(100 * k + i) + "\n" for i in range(15)))
        inputs.append(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "kg", "build", "--no-render", "--update", str(built)]
    procs = [subprocess.Popen([*command, str(p)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for p in inputs]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    found = papers_of(built)
    assert len(found) == 3 + 30, sorted(found)
    # The index matches the file: a third update with both inputs again adds nothing.
    again = CliRunner().invoke(cli, ["build", "--no-render", "--update", str(built), *map(str, inputs)])
    assert again.exit_code == 0 and "is up to date" in again.output, again.output
    identifiers = [t for t in read_triples(built) if t.predicate.value == DCTERMS + "identifier"]
    assert len(identifiers) == 33  # no paper twice


def test_an_update_refuses_a_graph_changed_under_it(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program rewriting the graph between the read and the rename: nothing is written."""
    from kg.graph.handle import GraphFile

    new = tmp_path / "new.jsonl"
    new.write_text(paper(5) + "\n")
    real = GraphFile.copy_into

    def copy_then_edit(self: GraphFile, stream) -> int:
        size = real(self, stream)
        with self.path.open("a", encoding="utf-8") as other:
            other.write("<http://x/a> <http://x/b> <http://x/c> .\n")
        return size

    monkeypatch.setattr(GraphFile, "copy_into", copy_then_edit)
    result = CliRunner().invoke(cli, ["build", "--no-render", "--update", str(built), str(new)])
    edited_later = built.read_text(encoding="utf-8")
    assert result.exit_code == 1 and "changed while it was being updated" in result.output, result.output
    assert "n5" not in set(papers_of(built)) and edited_later.endswith("<http://x/c> .\n")


@pytest.mark.parametrize("command", [
    ["build", "--no-render", "{jsonl}", "-o", "{jsonl}"],
    ["build", "--no-render", "{jsonl}", "-o", "{link}"],
    ["build", "{jsonl}", "-o", "{stem}.ttl", "--render"],
    ["build", "--no-render", "--update", "{graph}", "{jsonl}", "-o", "{jsonl}"],
    ["render", "{graph}", "-o", "{graph}"],
    ["render", "{graph}", "-o", "{dotted}"],
    ["report", "{graph}", "-o", "{graph}"],
    ["query", "top-concepts", "--graph", "{graph}", "-o", "{graph}"],
    ["query", "{rq}", "--graph", "{graph}", "-o", "{rq}"],
    # every input of a run counts, not only its paper lists and graph (issue 30, M7)
    ["build", "--no-render", "{jsonl}", "--model", "{model}", "-o", "{model}"],
    ["build", "--no-render", "{jsonl}", "--scheme", "{scheme}", "-o", "{scheme}"],
    ["build", "{jsonl}", "--model", "{stem}.html", "-o", "{stem}.ttl", "--render"],  # the page a build writes
    ["build", "--no-render", "--update", "{graph}", "{jsonl}", "--model", "{model}", "-o", "{model}"],
    ["build", "--no-render", "--update", "{graph}", "{jsonl}", "--scheme", "{scheme}", "-o", "{scheme}"],
    ["build", "--update", "{graph}", "{jsonl}", "--model", "{graphpage}"],
    ["build", "--engine", "dask", "{jsonl}", "--scheme", "{scheme}", "-o", "{scheme}"],
    ["export", "{graph}", "-o", "{graph}"],
    ["export", "{graph}", "-f", "nt", "-o", "{graph}"],
    ["train", "--keywords", "{jsonl}", "-o", "{jsonl}"],
], ids=" ".join)
def test_an_output_equal_to_an_input_is_refused_and_the_input_kept(built: Path, tmp_path: Path, command: list[str]) -> None:
    model, scheme = tmp_path / "m.json", tmp_path / "s.ttl"
    shutil.copyfile(FIXTURES / "keyword-scorer.json", model)
    shutil.copyfile(FIXTURES / "tiny-scheme.ttl", scheme)
    graph_page = built.with_suffix(".html")
    shutil.copyfile(model, graph_page)  # a model named like the page an update writes beside its graph
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(paper(7) + "\n")
    (tmp_path / "link.jsonl").symlink_to(jsonl)
    html_input = tmp_path / "p.html"
    html_input.write_text(paper(8) + "\n")  # an input named like the page a build writes beside its output
    rq = tmp_path / "q.rq"
    rq.write_text("SELECT * WHERE { ?s ?p ?o } LIMIT 1\n")
    names = {"jsonl": str(jsonl), "link": str(tmp_path / "link.jsonl"), "graph": str(built), "rq": str(rq),
             "dotted": str(tmp_path / "." / built.name), "stem": str(tmp_path / "p"), "model": str(model), "scheme": str(scheme),
             "graphpage": str(graph_page)}
    args = [part.format(**names) for part in command]
    if command[:2] == ["build", "{jsonl}"] and "--model" not in command:
        args[1] = str(html_input)  # kg build p.html -o p.ttl --render would write p.html over its input
    before = {p: p.read_bytes() for p in (jsonl, built, rq, html_input, model, scheme, graph_page)}
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: ") and "is also an input of this run" in line, result.output
    assert {p: p.read_bytes() for p in before} == before
