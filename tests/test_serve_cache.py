"""kg serve keeps answers (kg.endpoint.cache, decision 0052): the same request again is answered without a worker,
byte for byte what a worker gives; the same request in flight is asked once; volatile or cut answers are not kept."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator

import pytest

from kg.endpoint.answer import Reply
from kg.endpoint.app import make_app
from kg.endpoint.cache import Answers, deterministic, keepable
from tests.test_serve import call

LABELS = "SELECT ?s ?label WHERE { ?s rdfs:label ?label } ORDER BY ?s LIMIT 20"


@pytest.fixture(scope="module")
def plain(mini_ttl: Path) -> Iterator:
    """A server that keeps nothing: every request from a worker."""
    application = make_app(mini_ttl, workers=1, timeout=5.0, memory=False, cache_mb=0)
    yield application
    application.close()


def test_a_kept_answer_is_what_a_worker_gives_and_needs_no_worker(mini_ttl: Path, plain) -> None:
    requests = [("/sparql", {"query": LABELS}, "application/sparql-results+json"),
                ("/sparql", {"query": LABELS}, "text/csv"),
                ("/queries/papers-by-concept", {"concept": "reinforcement learning", "format": "json"}, "*/*"),
                ("/queries/papers-by-concept", {"concept": "large language model", "format": "json"}, "*/*"),
                ("/queries/co-occurrence", {"format": "csv"}, "*/*")]
    counted = {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o . ?s a ?t }"}
    server = make_app(mini_ttl, workers=1, timeout=5.0, memory=False)
    try:
        first = [call(server, path=path, query=query, accept=accept)[::2] for path, query, accept in requests]
        assert all(status == 200 for status, _ in first)
        assert len({body for _, body in first}) == len(requests)  # format, bindings and query text are in the key

        replies = []  # eight clients ask the same at once: one worker job (one worker: else seven would queue)
        threads = [threading.Thread(target=lambda: replies.append(call(server, query=counted))) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [r[0] for r in replies] == [200] * 8 and len({r[2] for r in replies}) == 1
        assert server.answers.misses == len(requests) + 1

        kept = len(server.answers.kept)
        for text in ("SELECT (NOW() AS ?t) WHERE {}", "SELECT (rand() AS ?r) WHERE {}", "SELECT (STRUUID() AS ?u) WHERE {}"):
            assert call(server, query={"query": text})[0] == 200
        assert call(server, query={"query": "SELECT ?x WHERE { ?x ?y }"})[0] == 400  # a syntax error from the worker
        assert len(server.answers.kept) == kept  # volatile and failed answers are not kept
        uuids = [call(server, query={"query": "SELECT (STRUUID() AS ?u) WHERE {}"})[2] for _ in range(2)]
        assert uuids[0] != uuids[1]

        server.pool.close()  # no worker is left to answer
        again = [call(server, path=path, query=query, accept=accept)[::2] for path, query, accept in requests]
        assert call(server, query={"query": "ASK { ?s ?p ?o }"})[0] == 503  # a request not asked before needs a worker
    finally:
        server.close()
    fresh = [call(plain, path=path, query=query, accept=accept)[::2] for path, query, accept in requests]
    assert again == first == fresh  # the one query path's answers, byte for byte (decision 0041)
    assert not plain.answers.kept


def test_kept_answers_stay_within_their_budget_least_recently_used_out() -> None:
    cut = Reply(200, "application/json", b"{}", (("X-Kg-Truncated", "true; max-bytes=300"),))  # what a worker sets
    assert not keepable(cut) and keepable(Reply(200, "text/csv", b"a", (("X-Kg-Truncated", "true; max-rows=4"),)))
    answers = Answers(4000)
    for key in "abcd":
        answers.answer(key, lambda: Reply(200, "text/plain", b"x" * 900))
    answers.answer("a", lambda: Reply(500, "text/plain", b"not this"))  # kept: used now, so "b" is the oldest
    answers.answer("e", lambda: Reply(200, "text/plain", b"y" * 900))
    assert list(answers.kept) == ["c", "d", "a", "e"] and answers.size == 3600
    answers.answer("big", lambda: Reply(200, "text/plain", b"z" * 1001))  # over a quarter of the budget: not kept
    assert "big" not in answers.kept
    off = Answers(0)
    off.answer("a", lambda: Reply(200, "text/plain", b"x"))
    assert not off.kept


def test_volatile_functions_are_found_in_any_case() -> None:
    assert not deterministic("SELECT (now() AS ?t) {}") and not deterministic("SELECT (BNODE () AS ?b) {}")
    assert deterministic("SELECT ?now ?random WHERE { ?now ?p ?random }")
