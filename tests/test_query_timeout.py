"""One time limit for a query, whoever asks: `kg query`, `kg.query()`, `kg query --endpoint` and `kg render --query`
take the same default (kg.core.defaults.QUERY_TIMEOUT), read 0 as no limit, start one deadline per query
(kg.sparql.deadline.start) that every engine holds, and say the same when it passes."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Iterator

import click
import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.core.defaults import QUERY_TIMEOUT
from kg.core.errors import QueryError
from kg.sparql import deadline, remote
from kg.sparql.store import ensure_store

from .conftest import JsonAnswers, local_server

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }"


def _option(command: str, name: str) -> click.Option:
    found = next(p for p in cli.commands[command].params if p.name == name)
    assert isinstance(found, click.Option)
    return found


def test_one_default_time_limit_for_the_command_line_and_the_api() -> None:
    assert _option("query", "timeout").default == QUERY_TIMEOUT
    assert _option("render", "timeout").default == QUERY_TIMEOUT
    assert inspect.signature(kg.query).parameters["timeout"].default == QUERY_TIMEOUT
    assert inspect.signature(kg.render).parameters["timeout"].default == QUERY_TIMEOUT


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The time limits of the query deadlines started (kg.sparql.deadline.start), query by query."""
    seen: list[float | None] = []
    real = deadline.started

    def spy(timeout: float | None, what: str, *args: Any) -> deadline.Deadline:
        got = real(timeout, what, *args)
        if what.startswith("query "):
            seen.append(got.seconds)
        return got

    monkeypatch.setattr(deadline, "started", spy)
    return seen


def test_kg_query_timeout_0_is_no_limit(sample_ttl: Path, limits: list[float | None]) -> None:
    ensure_store(sample_ttl)
    got = CliRunner().invoke(cli, ["query", "-", "--graph", str(sample_ttl), "--timeout", "0", "-f", "csv"], input=COUNT)
    assert got.exit_code == 0 and got.stdout.splitlines() == ["n", "38"], got.output
    assert limits == [None]


def test_kg_query_api_timeout_0_is_no_limit(sample_ttl: Path, limits: list[float | None]) -> None:
    assert kg.query(COUNT, graph=sample_ttl, timeout=0).rows[0][0].value == "38"
    assert limits == [None]


class _Answers(JsonAnswers):
    def answer(self, path: str) -> bytes:
        return json.dumps({"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "literal", "value": "7"}}]}}).encode()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with local_server(_Answers) as url:
        yield f"{url}/query"


@pytest.mark.parametrize(("given", "expected"), [("0", None), ("2.5", 2.5), (None, QUERY_TIMEOUT)])
def test_endpoint_timeout_is_the_limit_given(given: str | None, expected: float | None, endpoint: str,
                                             monkeypatch: pytest.MonkeyPatch, limits: list[float | None]) -> None:
    """`--endpoint … --timeout 0` waits as long as the endpoint takes (it waited 60 s at most, the help said no limit)."""
    sockets: list[float | None] = []
    real = remote.urlopen

    def spy(req: Any, timeout: float | None) -> Any:
        sockets.append(timeout)
        return real(req, timeout)

    monkeypatch.setattr(remote, "urlopen", spy)
    args = ["query", "-", "--endpoint", endpoint, "-f", "csv"] + (["--timeout", given] if given is not None else [])
    got = CliRunner().invoke(cli, args, input="SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert got.exit_code == 0 and got.stdout.splitlines() == ["n", "7"], got.output
    assert limits == [expected] and len(sockets) == 1  # the socket waits what is left of the one deadline
    assert sockets[0] is None if expected is None else expected - 1 < sockets[0] <= expected


RUNAWAY = "CONSTRUCT { ?a ?b ?c } WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # hours on any real graph


def test_render_query_honours_the_time_limit(sample_ttl: Path, tmp_path: Path) -> None:
    """In its own process, as `kg query`'s runaway test: the given-up query runs on in the engine until the process ends."""
    ensure_store(sample_ttl)
    query = tmp_path / "runaway.rq"
    query.write_text(RUNAWAY + "\n", encoding="utf-8")
    got = subprocess.run([sys.executable, "-m", "kg", "render", str(sample_ttl), "--query", str(query), "--timeout", "1",
                          "-o", str(tmp_path / "page.html")], capture_output=True, text=True, timeout=60)
    assert got.returncode == 1 and "did not finish in 1 s" in got.stderr and "Traceback" not in got.stderr, got.stderr
    assert not (tmp_path / "page.html").exists()


def test_render_query_of_triples_in_memory_honours_the_time_limit(sample_built, limits: list[float | None]) -> None:
    page = kg.render(sample_built, query="paper-graph", params={"paper": "paper:" + _a_paper(sample_built)}, timeout=7)
    assert page.nodes > 0 and limits == [7]


def _a_paper(built: Any) -> str:
    from kg.graph.facts import read_facts

    return next(iter(read_facts(built).papers)).rsplit("/", 1)[-1]


class _Slow(JsonAnswers):
    """Every request answered after 0.7 s: one concept, whatever was asked (a look-up finds it, a query lists it)."""

    def answer(self, path: str) -> bytes:
        time.sleep(0.7)
        row = {"concept": {"type": "uri", "value": "https://w3id.org/kg/concept/x"}}
        return json.dumps({"head": {"vars": ["concept"]}, "results": {"bindings": [row]}}).encode()


class _Silent(BaseHTTPRequestHandler):
    """Reads the request and says nothing for 5 s: a store that hangs."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(5)

    def log_message(self, *args: object) -> None:
        pass


def test_an_endpoint_query_and_its_look_ups_share_one_time_limit() -> None:
    """A concept's look-up and the query each took 0.7 s, under a limit of 1 s each: 1.4 s in all went through."""
    with local_server(_Slow) as url, pytest.raises(QueryError, match=r"query 'papers-by-concept' did not finish in 1 s"):
        kg.query("papers-by-concept", {"concept": "https://w3id.org/kg/concept/x"}, endpoint=f"{url}/query", timeout=1)


def test_an_endpoint_that_says_nothing_is_past_the_time_limit_not_unreachable() -> None:
    """The socket's timeout said "cannot reach …; is the store running?" of a store that was running and slow."""
    with local_server(_Silent) as url, pytest.raises(QueryError) as caught:
        kg.query(COUNT, endpoint=f"{url}/query", timeout=0.5)
    assert "did not finish in 0.5 s" in str(caught.value) and "cannot reach" not in str(caught.value)


def test_every_engine_says_the_same_when_past_the_limit(sample_ttl: Path) -> None:
    """The index's SQL, the engine and an endpoint stop with one message (kg.sparql.deadline.Deadline.error); the
    engine's runaway query in a process of its own (given up, it runs on until its process ends)."""
    ensure_store(sample_ttl)
    messages = []
    with local_server(_Slow) as url:
        for run in (lambda: kg.query("top-concepts", graph=sample_ttl, timeout=1e-9),
                    lambda: kg.query(COUNT, endpoint=f"{url}/query", timeout=0.2)):
            with pytest.raises(QueryError) as caught:
                run()
            messages.append(str(caught.value))
    engine = subprocess.run([sys.executable, "-m", "kg", "query", "-", "--graph", str(sample_ttl), "--timeout", "0.5"],
                            input=RUNAWAY.replace("CONSTRUCT { ?a ?b ?c }", "SELECT *"), capture_output=True, text=True, timeout=60)
    messages.append(engine.stderr.strip().splitlines()[-1].removeprefix("Error: "))
    said = {re.sub(r"query '[^']*'|\d[\d.e-]* s", "…", m) for m in messages}
    assert len(said) == 1 and "did not finish in … ; " not in said, messages
