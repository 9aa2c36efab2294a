"""RDF/XML with a DTD ("billion laughs"): every command that reads a graph refuses it at once, in little memory.

pyoxigraph's RDF/XML parser expands the entities a DOCTYPE declares, wherever the DOCTYPE stands, so a file of
under a kilobyte of nested entities reads as gigabytes. The one reader of graph files (kg.graph.files) refuses it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.cli import cli
from kg.core.errors import InputError
from kg.graph import files as graphio

from .conftest import FIXTURES

RDF = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"'


def laughs(levels: int, base: str = "lol") -> str:
    """A DOCTYPE of nested entities, each ten of the one before: the last is len(base) * 10**levels characters."""
    entities = [f'<!ENTITY l0 "{base}">'] + [f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1)]
    return f'<!DOCTYPE rdf:RDF [\n{chr(10).join(entities)}\n]>\n'


def bomb(path: Path, levels: int, *, where: str = "prolog") -> Path:
    """An RDF/XML file whose one literal is the last entity; its DOCTYPE in the prolog or after the root element starts."""
    doctype = laughs(levels)
    body = f'<rdf:Description rdf:about="http://example.org/s"><ex:p>&l{levels};</ex:p></rdf:Description>\n'
    if where == "prolog":
        text = f'<?xml version="1.0"?>\n{doctype}<rdf:RDF {RDF}>\n{body}</rdf:RDF>\n'
    else:  # pyoxigraph reads a DOCTYPE anywhere, also inside the root element
        text = f'<?xml version="1.0"?>\n<rdf:RDF {RDF}>\n{doctype}{body}</rdf:RDF>\n'
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KG_DEBUG", raising=False)
    (tmp_path / "new.jsonl").write_text(json.dumps({"id": "n1", "title": "Offline RL", "abstract": "Offline reinforcement learning."}) + "\n")
    (tmp_path / "gold.jsonl").write_text(json.dumps({"abstract_start": "Offline", "topics": ["reinforcement learning"]}) + "\n")
    return CliRunner()


TINY = ["--scheme", str(FIXTURES / "tiny-scheme.ttl"), "--no-default-scheme"]
COMMANDS = {
    "render": ["render", "G", "-o", "out.html"],
    "export": ["export", "G", "-o", "out.ttl"],
    "report": ["report", "G", "-o", "out-report.html"],
    "query": ["query", "SELECT * WHERE { ?s ?p ?o } LIMIT 1", "--graph", "G"],
    "query-named": ["query", "papers-by-concept", "-p", "concept=RL", "--graph", "G"],
    "analyze": ["analyze", "G", "-o", "out.ttl"],
    "serve": ["serve", "G", "--port", "0"],
    "build-update": ["build", "--update", "G", "new.jsonl", *TINY],
    "build-scheme": ["build", "new.jsonl", "-o", "out.ttl", "--scheme", "G", "--no-default-scheme"],
    "eval": ["eval", "gold.jsonl", "G"],
    "push": ["push", "G", "--endpoint", "http://127.0.0.1:9/update"],
}


@pytest.mark.parametrize("where", ["prolog", "inside"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_refuses_an_rdf_xml_file_with_entities_at_once(runner: CliRunner, tmp_path: Path, command: str, where: str) -> None:
    # 10**7 * 3 characters (30 MB) once expanded: far from a billion, so that a regression fails the test, not the machine.
    graph = bomb(tmp_path / "laughs.rdf", 7, where=where)
    args = [str(graph) if a == "G" else a for a in COMMANDS[command]]
    started = time.process_time()  # CPU time: the machine's other work does not count, expanding entities would
    result = runner.invoke(cli, args)
    spent = time.process_time() - started
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert lines[0].startswith(f"Error: {graph}:") and "DOCTYPE" in lines[0] and "Turtle" in lines[0], lines[0]
    assert spent < 1.0, f"{command} took {spent:.2f} s of CPU"
    assert not list(tmp_path.glob("out*")), "no output is written"


# Run in a small Python of its own: a child's peak RSS counts the process it was forked from until its exec, and
# this one holds the test session. The cap on the address space (2 GB, inherited) makes a regression fail, not the machine.
MEASURE = """
import json, resource, subprocess, sys, time
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
started = time.monotonic()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": done.returncode, "stderr": done.stderr, "seconds": time.monotonic() - started,
                  "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}))
"""


def test_a_billion_laughs_is_refused_in_little_memory(tmp_path: Path) -> None:
    graph = bomb(tmp_path / "laughs.rdf", 9)  # 3 * 10**9 characters once expanded
    assert graph.stat().st_size < 1024
    run = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "kg", "export", str(graph), "-o", str(tmp_path / "out.ttl")],
                         capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(run.stdout)
    assert got["rc"] == 1 and got["stderr"].startswith(f"Error: {graph}:") and "DOCTYPE" in got["stderr"], got
    assert got["peak_mb"] < 200, got
    assert got["cpu"] < 1.0 and got["seconds"] < 10.0, got  # most of it starting Python
    assert not (tmp_path / "out.ttl").exists()


def test_the_scan_finds_a_declaration_wherever_the_blocks_are_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graphio, "_BLOCK", 16)
    path = tmp_path / "g.rdf"
    for pad in range(24):  # the 9 bytes of "<![CDATA[" and of "<!DOCTYPE" fall on every cut of the 16-byte blocks
        path.write_bytes(b"\n" * pad + b"<!-- c --><r><![CDATA[ x ]]></r>\n")
        graphio.refuse_dtd(path)  # a comment and a CDATA section are no declaration
        path.write_bytes(b"\n" * pad + b"<r><!-- c --><!doctype r [<!ENTITY e 'x'>]></r>\n")
        with pytest.raises(InputError, match=rf"^{path}:{pad + 1}: an XML document type declaration"):
            graphio.refuse_dtd(path)


def test_rdf_xml_that_kg_writes_reads_back(tmp_path: Path) -> None:
    import pyoxigraph as ox

    text = '<!DOCTYPE x [<!ENTITY e "&e;&e;">]> <![CDATA[ ]]> <!-- -->'  # a literal that looks like markup is escaped
    triples = [ox.Triple(ox.NamedNode("http://example.org/s"), ox.NamedNode("http://example.org/p"), ox.Literal(text))]
    with (tmp_path / "g.rdf").open("wb") as stream:
        graphio.write(triples, stream, "xml")
    assert [(t.subject, t.predicate, t.object) for t in graphio.read_triples(tmp_path / "g.rdf")] == [(t.subject, t.predicate, t.object) for t in triples]
