"""kg push's fast paths against a real Oxigraph server: N-Triples sent as bytes, and the store's bulk loader."""

from __future__ import annotations

import http.server
import random
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
import kg.sparql.push
from kg.cli import cli
from tests.test_remote import _count


@pytest.fixture(scope="module")
def sample_nt(sample_ttl: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample graph as N-Triples, with a comment, blank lines and an indented line a hand-edited file may have."""
    out = tmp_path_factory.mktemp("nt") / "sample.nt"
    kg.export(sample_ttl, out)
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[3] = "  " + lines[3]
    out.write_text("# the ICML sample\n\n" + "\n".join(lines[:10]) + "\n\n" + "\n".join(lines[10:]) + "\n", encoding="utf-8")
    return out


def _sample_found(base: str, graph_iri: str, triples: list, k: int = 40) -> int:
    found = 0
    for t in random.Random(19).sample(triples, k):
        found += bool(kg.query(f"ASK {{ {t.subject} {t.predicate} {t.object} }}", endpoint=f"{base}/query", graph_iri=graph_iri).boolean)
    return found


def test_ntriples_are_sent_as_they_are_and_all_arrive(oxigraph: str, sample_nt: Path) -> None:
    local = kg.graph.files.read_triples(sample_nt)
    target = "https://example.org/graph/nt"
    out = CliRunner().invoke(cli, ["push", str(sample_nt), "--store", f"{oxigraph}/store", "--graph", target, "--batch", "2000"])
    assert out.exit_code == 0, out.output
    # The count is of triples, not of lines: the comment and blank lines are not counted.
    assert f"pushed {len(local)} triples" in out.output
    assert _count(oxigraph, target) == len(set(local))
    assert _sample_found(oxigraph, target, local) == 40


def test_bulk_loader_of_oxigraph(oxigraph: str, sample_ttl: Path) -> None:
    local = kg.graph.files.read_triples(sample_ttl)
    target = "https://example.org/graph/bulk"
    sent = kg.push(sample_ttl, store=f"{oxigraph}/store", graph_iri=target, bulk=True, batch=3000)
    assert sent == len(local) and _count(oxigraph, target) == len(set(local))
    assert _sample_found(oxigraph, target, local) == 40
    # With --replace the bulk-loaded temporary graph is swapped in whole; the target holds the graph once.
    out = CliRunner().invoke(cli, ["push", str(sample_ttl), "--store", f"{oxigraph}/store", "--endpoint", f"{oxigraph}/update",
                                   "--graph", target, "--replace", "--bulk", "--batch", "3000"])
    assert out.exit_code == 0, out.output
    assert _count(oxigraph, target) == len(set(local))


def test_bulk_failure_says_the_failed_request_may_be_partly_loaded(oxigraph: str, sample_ttl: Path) -> None:
    # Two bulk requests are under way at once (kg.sparql.push.BULK_IN_FLIGHT): both may be partly loaded when the first fails.
    with pytest.raises(kg.sparql.push.PushError, match=r"stopped after 0 triples were loaded, and up to 6000 more of the requests under way when one"):
        kg.push(sample_ttl, store=f"{oxigraph}/no-such-store", graph_iri="https://example.org/graph/x", bulk=True, batch=3000)


class _Other(http.server.BaseHTTPRequestHandler):
    server_version = "OtherStore/1.0"

    def do_HEAD(self) -> None:
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_bulk_is_refused_for_a_store_kg_knows_no_bulk_loader_of(sample_ttl: Path) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Other)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/data"
        out = CliRunner().invoke(cli, ["push", str(sample_ttl), "--store", url, "--bulk"])
        assert out.exit_code == 1 and "answers as OtherStore" in out.output and "Oxigraph only" in out.output, out.output
    finally:
        server.shutdown()
    out = CliRunner().invoke(cli, ["push", str(sample_ttl), "--endpoint", "http://127.0.0.1:9/update", "--bulk"])
    assert out.exit_code == 1 and "--bulk loads through the Graph Store Protocol" in out.output


def test_blank_nodes_in_ntriples_are_refused_and_literals_that_look_like_them_are_not(oxigraph: str, tmp_path: Path) -> None:
    lookalike = tmp_path / "ok.nt"
    lookalike.write_text('<https://e.org/a> <https://e.org/p> "a _:b c" .\n', encoding="utf-8")
    assert kg.push(lookalike, store=f"{oxigraph}/store", graph_iri="https://example.org/graph/ok") == 1
    blank = tmp_path / "blank.nt"
    blank.write_text('<https://e.org/a> <https://e.org/p> _:b1 .\n', encoding="utf-8")
    out = CliRunner().invoke(cli, ["push", str(blank), "--store", f"{oxigraph}/store"])
    assert out.exit_code == 1 and "has blank nodes" in out.output and "blank.nt" in out.output, out.output
