"""`kg serve` under load and abuse, over a real loopback socket: the CLI started as a subprocess."""

from __future__ import annotations

import http.client
import importlib.util
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any, Iterator

import pytest

from .conftest import ROOT

spec = importlib.util.spec_from_file_location("kg_bench_load", ROOT / "bench" / "load.py")
load = importlib.util.module_from_spec(spec)  # the load-test script, so the tests exercise what it measures
assert spec.loader is not None
sys.modules[spec.name] = load  # dataclasses look their module up there
spec.loader.exec_module(load)

TIMEOUT = 2.0


@pytest.fixture(scope="module")
def server(mini_ttl: Path) -> Iterator[str]:
    """`kg serve` on the mini graph, port 0, 2 workers, a 2 s time limit; yields its base URL."""
    proc, url = load.start_server(mini_ttl, workers=2, timeout=TIMEOUT)
    yield url
    load.stop_server(proc)
    assert proc.returncode is not None


def request(url: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """One raw HTTP request (headers exactly as given, e.g. a lying Content-Length)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest(method, path)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        if body:
            conn.send(body)
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def test_eight_concurrent_clients_without_a_failure(server: str) -> None:
    stats, elapsed = load.run_load(server, clients=8, duration=30, queries=120)
    assert stats.failures == []
    assert len(stats.latencies) == 120
    assert stats.percentile(99) < 5, stats.report(elapsed)


def test_a_runaway_query_is_stopped_while_others_answer_promptly(server: str) -> None:
    background = load.runaway_in_background(server)
    runaway = next(background)
    time.sleep(0.3)  # the runaway now holds one worker
    quick: list[tuple[int, float]] = []
    while "answer" not in runaway and len(quick) < 200:
        t = time.perf_counter()
        status, _ = load.get(server, "/sparql", {"query": load.COUNT})
        quick.append((status, time.perf_counter() - t))
    next(background, None)
    status, body, seconds = runaway["answer"]
    assert status == 503 and b"time limit" in body
    assert TIMEOUT <= seconds < TIMEOUT + 4
    assert len(quick) >= 5 and all(s == 200 for s, _ in quick)
    latencies = sorted(dt for _, dt in quick)
    assert latencies[len(latencies) // 2] < 0.25 and latencies[-1] < 1.0, latencies  # measured: p50 ~5 ms
    assert load.get(server, "/sparql", {"query": load.COUNT})[0] == 200  # the killed worker was replaced


def test_oversized_requests_are_refused_without_reading_them(server: str) -> None:
    big = ("SELECT * WHERE { ?s ?p ?o } #" + "x" * 300_000).encode()
    assert request(server, "POST", "/sparql", big, {"Content-Type": "application/sparql-query", "Content-Length": str(len(big))})[0] == 413
    # A client that claims a gigabyte and sends nothing is answered at once, not waited on.
    t = time.perf_counter()
    status, body = request(server, "POST", "/sparql", b"", {"Content-Type": "application/sparql-query", "Content-Length": str(10**9)})
    assert status == 413 and b"over the limit" in body and time.perf_counter() - t < 2
    long_get = "/sparql?" + urllib.parse.urlencode({"query": "ASK {} #" + "x" * 300_000})
    assert request(server, "GET", long_get)[0] in (400, 413, 414)


@pytest.mark.parametrize(
    ("method", "params", "body", "ctype"),
    [
        ("POST", {}, b"INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }", "application/sparql-update"),
        ("POST", {}, urllib.parse.urlencode({"update": "CLEAR ALL"}).encode(), "application/x-www-form-urlencoded"),
        ("GET", {"query": "DELETE WHERE { ?s ?p ?o }"}, b"", ""),
        ("GET", {"query": "LOAD <http://127.0.0.1:9/x.ttl>"}, b"", ""),
        ("GET", {"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"}, b"", ""),
        ("GET", {"query": "select * where { service silent <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"}, b"", ""),
    ],
)
def test_updates_and_service_are_refused(server: str, method: str, params: dict, body: bytes, ctype: str) -> None:
    status, reply = request(server, method, "/sparql?" + urllib.parse.urlencode(params), body,
                            {"Content-Type": ctype, "Content-Length": str(len(body))} if body else {})
    assert status == 403, reply
    assert b"read-only" in reply or b"SERVICE" in reply
    # and the graph is untouched
    assert b'"value":"5"' in load.get(server, "/sparql", {"query": load.COUNT})[1].replace(b" ", b"")


def listening_address(port: int) -> str:
    """The local address of the listening TCP socket on `port`, from /proc/net/tcp (IPv4)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        host, hexport = local.split(":")
        if state == "0A" and int(hexport, 16) == port:
            return ".".join(str(int(host[i : i + 2], 16)) for i in (6, 4, 2, 0))
    raise AssertionError(f"nothing listens on port {port}")


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_listens_on_loopback_unless_told_otherwise(server: str, mini_ttl: Path) -> None:
    assert server.startswith("http://127.0.0.1:")
    assert listening_address(int(server.rsplit(":", 1)[1])) == "127.0.0.1"
    proc, url = load.start_server(mini_ttl, workers=1, extra=("--host", "0.0.0.0"))
    try:
        assert listening_address(int(url.rsplit(":", 1)[1])) == "0.0.0.0"
    finally:
        load.stop_server(proc)


def test_unknown_named_query_lists_the_available_names(server: str) -> None:
    from kg.sparql.run import catalog

    status, body = load.get(server, "/queries/no-such-query", {})
    assert status == 404
    assert body.decode().strip() == f"query 'no-such-query' not found (available: {', '.join(catalog())})"


def test_malformed_sparql_gets_the_parse_position(server: str) -> None:
    # (the check (kg.sparql.sanitise) reports where the pattern it could not read starts: a missing '.'
    # between two patterns on lines 2 and 3 is found at the second one.)
    status, body = load.get(server, "/sparql", {"query": "SELECT ?s WHERE {\n  ?s ?p ?o\n  ?s ?p ?o }"})
    assert status == 400
    assert body.decode().strip() == ("query 'request': SPARQL syntax error at line 3, column 3, at '?s ?p ?o }': the query cannot be read from here on; "
                                     "the endpoint runs only queries it can check (SPARQL 1.1)")


def test_the_load_script_reports_queries_failures_and_percentiles(server: str) -> None:
    stats, elapsed = load.run_load(server, clients=2, duration=10, queries=10)
    report: Any = stats.report(elapsed)
    assert report.startswith("queries: 10  failures: 0  elapsed:")
    assert "latency ms: p50 " in report and " p90 " in report and " p99 " in report


def test_a_negative_content_length_is_a_bad_request(server: str) -> None:
    status, body = request(server, "POST", "/sparql", b"", {"Content-Type": "application/sparql-query", "Content-Length": "-5"})
    assert status == 400 and b"Content-Length" in body
    assert load.get(server, "/sparql", {"query": load.COUNT})[0] == 200


@pytest.mark.skipif(not Path("/proc/net/if_inet6").exists(), reason="needs IPv6 on loopback")
def test_serves_on_ipv6_loopback(mini_ttl: Path) -> None:
    proc, url = load.start_server(mini_ttl, workers=1, extra=("--host", "::1"))
    try:
        assert url.startswith("http://[::1]:")
        status, body = load.get(url, "/sparql", {"query": load.COUNT})
        assert status == 200 and b'"5"' in body
    finally:
        load.stop_server(proc)
