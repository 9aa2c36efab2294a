"""One time limit for a query, whoever asks: `kg query`, `kg.query()`, `kg query --endpoint` and `kg render --query`
take the same default (kg.core.defaults.QUERY_TIMEOUT) and read 0 as no limit (kg.sparql.deadline.limit)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import click
import pytest
from click.testing import CliRunner

import kg
from kg.cli import cli
from kg.core.defaults import QUERY_TIMEOUT
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
    """The time limits the local engine's waiting thread was given, query by query."""
    seen: list[float | None] = []
    real = deadline.with_deadline

    def spy(work: Any, timeout: float | None, name: str, **kw: Any) -> Any:
        seen.append(timeout)
        return real(work, timeout, name, **kw)

    monkeypatch.setattr(deadline, "with_deadline", spy)
    return seen


def test_kg_query_timeout_0_is_no_limit(sample_ttl: Path, limits: list[float | None]) -> None:
    ensure_store(sample_ttl)
    got = CliRunner().invoke(cli, ["query", "-", "--graph", str(sample_ttl), "--timeout", "0", "-f", "csv"], input=COUNT)
    assert got.exit_code == 0 and got.stdout.splitlines() == ["n", "38"], got.output
    assert limits and all(deadline.limit(t) is None for t in limits)


def test_kg_query_api_timeout_0_is_no_limit(sample_ttl: Path, limits: list[float | None]) -> None:
    assert kg.query(COUNT, graph=sample_ttl, timeout=0).rows[0][0].value == "38"
    assert limits and all(deadline.limit(t) is None for t in limits)


class _Answers(JsonAnswers):
    def answer(self, path: str) -> bytes:
        return json.dumps({"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "literal", "value": "7"}}]}}).encode()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with local_server(_Answers) as url:
        yield f"{url}/query"


@pytest.mark.parametrize(("given", "expected"), [("0", None), ("2.5", 2.5), (None, QUERY_TIMEOUT)])
def test_endpoint_timeout_is_the_limit_given(given: str | None, expected: float | None, endpoint: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
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
    assert sockets == [expected]


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
