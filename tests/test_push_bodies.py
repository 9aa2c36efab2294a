"""What kg push sends as SPARQL Update is text kg parsed and wrote itself (issue 36, H3).

An N-Triples file (or a shard of a shard folder) whose line closes the INSERT DATA block and opens an
update of its own must not run that update: every store here is an Oxigraph server of the test's own, a
canary graph stands in for the rest of the store, and after each push the canary is still there.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
from kg.cli import cli
from kg.graph import shards
from kg.graph.terms import Term
from kg.sparql import push
from tests.test_push_replace import own_server  # noqa: F401 (a fixture)
from tests.test_remote import _count

CANARY = "https://example.org/graph/canary"
TARGET = "https://example.org/graph/pushed"
GOOD = '<https://e.org/a> <https://e.org/p> "a" .\n'
# Each closes the INSERT DATA around it and opens an update of its own (into a named graph, and into the default graph).
ESCAPES = {
    "named": '<https://e.org/b> <https://e.org/p> <https://e.org/c> . } } ; DROP ALL ; INSERT DATA { GRAPH <https://e.org/x> {\n',
    "default": '<https://e.org/b> <https://e.org/p> <https://e.org/c> . } ; DROP ALL ; INSERT DATA {\n',
}
Server = Callable[[], tuple[subprocess.Popen, str]]


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _store_with_canary(own_server: Server, tmp_path: Path) -> str:  # noqa: F811
    _, base = own_server()
    assert kg.push(_write(tmp_path / "canary.nt", GOOD), store=f"{base}/store", graph_iri=CANARY) == 1
    return base


def _shard_folder(folder: Path, *lines: str) -> Path:
    folder.mkdir()
    _write(folder / "part-00000.nt", GOOD)
    _write(folder / "part-00001.nt", *lines)
    listed = tuple(shards.Shard(p.name, 1, 1, p.stat().st_size, "test") for p in sorted(folder.glob("*.nt")))
    shards.write(folder, shards.Manifest(listed, ("test",), (), (), "https://w3id.org/kg/", "test"))
    return folder


@pytest.mark.parametrize("into", ["named", "default"])
@pytest.mark.parametrize("source", ["file", "shards"])
def test_an_ntriples_line_cannot_add_an_update_of_its_own(own_server: Server, tmp_path: Path, into: str, source: str) -> None:  # noqa: F811
    base = _store_with_canary(own_server, tmp_path)
    lines = (GOOD, ESCAPES[into], GOOD.replace('"a"', '"b"'))
    graph = _write(tmp_path / "evil.nt", *lines) if source == "file" else _shard_folder(tmp_path / "evil", *lines)
    out = CliRunner().invoke(cli, ["push", str(graph), "--endpoint", f"{base}/update", *(["--graph", TARGET] if into == "named" else [])])
    # Refused as the N-Triples it is not, with a one-line error naming the file; nothing was sent.
    assert out.exit_code == 1, out.output
    assert out.output.startswith("Error: ") and len(out.output.strip().splitlines()) == 1, out.output
    assert "evil" in out.output and "not valid" in out.output, out.output
    assert _count(base, CANARY) == 1
    assert _count(base, TARGET) == 0 and _count(base, "https://e.org/x") == 0


def test_literals_that_look_like_sparql_arrive_as_the_literals_they_are(own_server: Server, tmp_path: Path) -> None:  # noqa: F811
    base = _store_with_canary(own_server, tmp_path)
    # As N-Triples escapes: the second is valid N-Triples whose \\u0022 a SPARQL parser reads as the quote that ends the string.
    words = ['. } } ; DROP ALL ; INSERT DATA { GRAPH <https://e.org/x> {',
             '\\u0022 . } } ; DROP ALL ; INSERT DATA { GRAPH <https://e.org/x> { <https://e.org/a> <https://e.org/p> \\u0022',
             'a\\\\\\"} }', '\\\\u0022 } }', "line\\nnext\\u0001"]
    graph = _write(tmp_path / "odd.nt", *(f'<https://e.org/s{i}> <https://e.org/p> "{w}" .\n' for i, w in enumerate(words)),
                   '<https://e.org/t> <https://e.org/p> "x"^^<https://e.org/type#a> .\n',
                   '<https://e.org/u> <https://e.org/p> "d\\u00e9j\\u00e0"@fr-CA .\n')
    assert kg.push(graph, endpoint=f"{base}/update", graph_iri=TARGET, batch=2) == 7
    assert _count(base, CANARY) == 1
    local = set(kg.graph.files.read_triples(graph))
    held = kg.query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }", endpoint=f"{base}/query", graph_iri=TARGET).rows
    assert {tuple(Term.from_oxigraph(x) for x in (t.subject, t.predicate, t.object)) for t in local} == set(held)



def test_a_quote_goes_into_an_update_as_an_escaped_quote_not_as_a_codepoint_escape(tmp_path: Path) -> None:
    # SPARQL 1.1 (19.2) lets a parser replace \u escapes before it reads the query, so a \u0022 copied from an N-Triples
    # string could end the string in such a store (Oxigraph replaces them inside strings only, and is safe either way).
    graph = _write(tmp_path / "quote.nt", '<https://e.org/s> <https://e.org/p> "\\u0022 } } ; DROP ALL ; #" .\n')
    [(n, body)] = list(push._chunks_of(graph, 10, update=True))
    assert n == 1 and b"\\u0022" not in body and b'"\\" } } ; DROP ALL ; #"' in body
