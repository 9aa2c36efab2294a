"""Answers from a store or endpoint are read within the time limit and a size cap (issue 30, L2): a server that
sends without end, or a byte at a time, neither fills the machine nor holds kg for ever."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Iterator

import pytest

import kg
from kg.core import defaults
from kg.core.errors import KgError

from .conftest import local_server

ODD = {  # results documents that are not what SPARQL 1.1 JSON results say
    "/false-as-text": b'{"boolean": "false"}',
    "/binding-without-type": b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"value": "y"}}]}}',
}


class _Endless(BaseHTTPRequestHandler):
    """Answers every POST with a body that never ends: fast (`/flood`) or a byte every 20 ms (`/trickle`)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.end_headers()
        if self.path in ODD:
            self.wfile.write(ODD[self.path])
            return
        try:
            self.wfile.write(b'{"head": {"vars": ["x"]}, "results": {"bindings": [')
            while True:
                if self.path == "/flood":
                    self.wfile.write(b'{"x": {"type": "literal", "value": "' + b"y" * 60_000 + b'"}},')
                else:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.02)
        except OSError:
            return  # the client stopped reading

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def endless() -> Iterator[str]:
    with local_server(_Endless) as url:
        yield url


def test_an_answer_without_end_is_cut_at_the_size_cap(endless: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "REMOTE_MAX_BYTES", 4 << 20)
    with pytest.raises(KgError, match=r"sent more than 4 MB in one answer"):
        kg.query("SELECT * WHERE { ?s ?p ?o }", endpoint=f"{endless}/flood", timeout=30)


def test_an_answer_sent_a_byte_at_a_time_stops_at_the_time_limit(endless: str) -> None:
    started = time.monotonic()
    with pytest.raises(KgError, match=r"did not finish in 0.4 s"):
        kg.query("SELECT * WHERE { ?s ?p ?o }", endpoint=f"{endless}/trickle", timeout=0.4)
    assert time.monotonic() - started < 3


def test_a_push_whose_store_answers_without_end_stops(endless: str, mini_ttl: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "REMOTE_MAX_BYTES", 4 << 20)
    with pytest.raises(KgError, match=r"sent more than 4 MB"):
        kg.push(mini_ttl, f"{endless}/flood")


@pytest.mark.parametrize("path", sorted(ODD))
def test_a_malformed_results_document_is_a_one_line_error(endless: str, path: str) -> None:
    """`{"boolean": "false"}` was read as true and a binding without a type was a KeyError ("a bug in kg"):
    remote answers are parsed by pyoxigraph's SPARQL results parser, which refuses both."""
    with pytest.raises(KgError, match=r"with something that is not application/sparql-results\+json"):
        kg.query("ASK { ?s ?p ?o }", endpoint=f"{endless}{path}", timeout=30)
