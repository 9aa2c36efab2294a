"""kg serve under runaway queries: memory per worker, bytes per response, queue wait, fairness (issue 17, item 4)."""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.serve import make_app

from .test_serve import COUNT, RUNAWAY

CARTESIAN = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f"
CONCAT = ("SELECT ?f WHERE { ?s ?p ?o . BIND(CONCAT(STR(?o),STR(?o)) AS ?a) BIND(CONCAT(?a,?a) AS ?b) "
          "BIND(CONCAT(?b,?b) AS ?c) BIND(CONCAT(?c,?c) AS ?d) BIND(CONCAT(?d,?d) AS ?e) BIND(CONCAT(?e,?e) AS ?f) }")


def ask(app, query: str, client: str = "127.0.0.1", accept: str = "application/sparql-results+json") -> tuple[int, dict, bytes]:
    """One GET /sparql from the address `client`."""
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/sparql", "QUERY_STRING": urllib.parse.urlencode({"query": query}),
               "CONTENT_LENGTH": "0", "wsgi.input": io.BytesIO(b""), "HTTP_ACCEPT": accept, "REMOTE_ADDR": client}
    got: dict = {}

    def start_response(status: str, headers: list) -> None:
        got["status"], got["headers"] = int(status.split()[0]), dict(headers)

    body = b"".join(app(environ, start_response))
    return got["status"], got["headers"], body


@pytest.fixture(scope="module")
def limited(sample_ttl: Path) -> Iterator:
    """The 38-paper sample behind small limits: 450 MB per worker, 1 MB per response."""
    application = make_app(sample_ttl, workers=2, timeout=20.0, memory_mb=450, max_bytes=1_000_000)
    yield application
    application.close()


def test_a_cartesian_order_by_stops_at_the_memory_limit_not_the_time_limit(limited) -> None:
    started = time.monotonic()
    status, _, body = ask(limited, CARTESIAN)
    took = time.monotonic() - started
    assert status == 503 and b"450 MB" in body, body
    assert took < 15, took  # long before the 20 s time limit
    assert ask(limited, COUNT)[0] == 200  # the worker was replaced


def test_a_huge_response_is_cut_to_the_byte_cap_and_says_so(limited) -> None:
    status, headers, body = ask(limited, CONCAT)
    assert status == 200 and len(body) <= 1_000_000
    assert headers["X-Kg-Truncated"] == "true; max-bytes=1000000"
    rows = json.loads(body)["results"]["bindings"]  # still a whole, valid document
    assert 0 < len(rows) < 10_000


def test_a_request_waits_for_a_worker_less_than_the_time_limit(mini_ttl: Path) -> None:
    app = make_app(mini_ttl, workers=1, timeout=6.0)
    try:
        runaway = threading.Thread(target=ask, args=(app, RUNAWAY, "10.0.0.1"))
        runaway.start()
        time.sleep(1.0)  # the runaway holds the only worker
        started = time.monotonic()
        status, _, body = ask(app, COUNT, "10.0.0.2")
        waited = time.monotonic() - started
        runaway.join(30)
        assert status == 503 and b"busy" in body
        assert 2.5 <= waited < 4.5, waited  # told after half the time limit, not after all of it
    finally:
        app.close()


def test_two_attackers_do_not_starve_other_clients(mini_ttl: Path) -> None:
    """Two clients send runaways back to back; once each has hit the limit (and the workers killed for
    them are replaced), the other clients are all served. (In the first window both runaways hold
    both workers, and others are told "busy": that is what the fairness cannot prevent.)"""
    timeout = 4.0
    app = make_app(mini_ttl, workers=2, timeout=timeout)
    stop = threading.Event()
    attacks: list[int] = []
    legit: list[tuple[float, int, float]] = []  # (when, status, seconds)

    def attacker(address: str) -> None:
        while not stop.is_set():
            attacks.append(ask(app, RUNAWAY, address)[0])

    def client(address: str) -> None:
        while not stop.is_set():
            t = time.monotonic()
            status = ask(app, COUNT, address)[0]
            legit.append((t - started, status, time.monotonic() - t))
            time.sleep(0.05)

    started = time.monotonic()
    threads = [threading.Thread(target=attacker, args=(f"10.0.0.{k}",)) for k in (1, 2)]
    threads += [threading.Thread(target=client, args=(f"10.0.1.{k}",)) for k in (1, 2, 3)]
    try:
        for t in threads:
            t.start()
        time.sleep(4 * timeout + 2)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        app.close()
    after_first_window = [(s, dt) for when, s, dt in legit if when > 2 * timeout]
    assert len(after_first_window) >= 20, legit
    # All of them, measured alone; a busy test machine can delay a replacement worker's start past the
    # queue wait, so the test asks for 90 % (without fairness, none after the first window succeed).
    failed = [(when, s, dt) for when, s, dt in legit if when > 2 * timeout and s != 200]
    assert len(failed) <= len(after_first_window) // 10, failed
    assert sorted(dt for s, dt in after_first_window if s == 200)[len(after_first_window) // 2] < 1.0
    assert attacks and set(attacks) <= {503}, attacks
