"""kg serve: the SPARQL 1.1 Protocol driven as a WSGI app, and over a real socket with SPARQLWrapper."""

from __future__ import annotations

import html
import io
import json
import os
import re
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from kg.endpoint.answer import negotiate
from kg.endpoint.app import make_app, make_server

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


def call(app, method: str = "GET", path: str = "/sparql", query: dict | None = None, body: bytes = b"",
         ctype: str = "", accept: str = "*/*") -> tuple[int, dict, bytes]:
    """Drive the WSGI app without a socket."""
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": urllib.parse.urlencode(query or {}),
               "CONTENT_TYPE": ctype, "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "HTTP_ACCEPT": accept}
    got: dict = {}

    def start_response(status: str, headers: list) -> None:
        got["status"], got["headers"] = int(status.split()[0]), dict(headers)

    data = b"".join(app(environ, start_response))
    return got["status"], got["headers"], data


@pytest.fixture(scope="module")
def app(mini_ttl: Path):
    application = make_app(mini_ttl, workers=2, timeout=3.0, max_rows=4, memory=False)
    yield application
    application.close()


COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }"


def test_get_post_form_and_post_query_agree(app) -> None:
    answers = [
        call(app, query={"query": COUNT}, accept="application/sparql-results+json"),
        call(app, "POST", body=urllib.parse.urlencode({"query": COUNT}).encode(), ctype="application/x-www-form-urlencoded"),
        call(app, "POST", body=COUNT.encode(), ctype="application/sparql-query; charset=utf-8"),
    ]
    for status, headers, body in answers:
        assert status == 200 and headers["Content-Type"] == "application/sparql-results+json"
        assert json.loads(body)["results"]["bindings"][0]["n"]["value"] == "5"


def test_content_negotiation(app) -> None:
    expect = {"application/sparql-results+xml": b"<sparql", "text/csv": b"n\r\n5", "text/tab-separated-values": b"?n\n",
              "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": b"<table>"}
    for accept, start in expect.items():
        status, headers, body = call(app, query={"query": COUNT}, accept=accept)
        assert status == 200 and start in body, accept
    status, headers, body = call(app, query={"query": "CONSTRUCT WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }"}, accept="application/n-triples")
    assert status == 200 and headers["Content-Type"] == "application/n-triples" and body.count(b"\n") == 4  # 5 rows, capped at 4
    status, headers, body = call(app, query={"query": "DESCRIBE <https://w3id.org/kg/paper/p1>"}, accept="text/turtle")
    assert status == 200 and headers["Content-Type"].startswith("text/turtle") and b"paper:p1" in body
    status, _, body = call(app, query={"query": COUNT}, accept="image/png")
    assert status == 406 and b"json" in body
    assert call(app, query={"query": COUNT, "format": "csv"}, accept="application/sparql-results+json")[2].startswith(b"n\r\n")
    assert negotiate("text/csv;q=0.5, application/sparql-results+xml", "select") == "xml"
    assert negotiate("text/turtle;q=0", "graph") is None


def test_syntax_error_is_400_with_position(app) -> None:
    status, _, body = call(app, query={"query": "SELECT * WHERE {\n  ?s ?p \n}"})
    assert status == 400 and b"SPARQL syntax error at line 2, column 3" in body


def test_updates_are_refused(app) -> None:
    update = "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }"
    assert call(app, "POST", body=update.encode(), ctype="application/sparql-update")[0] == 403
    assert call(app, "POST", body=urllib.parse.urlencode({"update": update}).encode(), ctype="application/x-www-form-urlencoded")[0] == 403
    assert call(app, query={"query": update})[0] == 403
    assert call(app, "POST", body=update.encode(), ctype="application/sparql-query")[0] == 403
    assert call(app, query={"query": "ASK { <http://e/a> <http://e/b> <http://e/c> }"})[2] == b'{"head": {}, "boolean": false}'
    assert call(app, "PUT")[0] == 405


def test_service_is_refused(app) -> None:
    status, _, body = call(app, query={"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }"})
    assert status == 403 and b"SERVICE" in body
    # The word inside a string or an IRI is not a SERVICE clause.
    assert call(app, query={"query": 'SELECT * WHERE { ?s ?p "SERVICE" }'})[0] == 200


def test_oversized_requests_are_refused(app) -> None:
    big = "SELECT * WHERE { ?s ?p ?o } #" + "x" * 300_000
    assert call(app, "POST", body=big.encode(), ctype="application/sparql-query")[0] == 413
    assert call(app, "POST", body=urllib.parse.urlencode({"query": big}).encode(), ctype="application/x-www-form-urlencoded")[0] == 413
    assert call(app, "POST", body=b"x", ctype="text/plain")[0] == 415
    assert call(app, query={})[0] == 400


def test_row_cap_truncates_and_says_so(app) -> None:
    status, headers, body = call(app, query={"query": "SELECT * WHERE { ?s ?p ?o }"}, accept="text/csv")
    assert status == 200 and headers["X-Kg-Truncated"].startswith("true") and body.count(b"\r\n") == 5  # header + 4 rows


def test_runaway_query_is_killed_while_others_answer(app) -> None:
    """The timeout really stops the CPU burn: the worker process is gone, and other queries are served meanwhile."""
    before = {w.proc.pid for w in app.pool._all}
    result: dict = {}

    def runaway() -> None:
        result["answer"] = call(app, query={"query": RUNAWAY})

    thread = threading.Thread(target=runaway)
    started = time.monotonic()
    thread.start()
    time.sleep(0.5)
    quick = []
    for _ in range(5):  # the other worker keeps answering promptly
        t = time.monotonic()
        status, _, _ = call(app, query={"query": COUNT})
        quick.append((status, time.monotonic() - t))
    thread.join(10)
    status, _, body = result["answer"]
    assert status == 503 and b"time limit" in body
    assert 2.9 <= time.monotonic() - started < 8
    assert all(s == 200 and dt < 1.0 for s, dt in quick), quick
    gone = before - {w.proc.pid for w in app.pool._all}
    assert len(gone) == 1
    pid = gone.pop()
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    assert call(app, query={"query": COUNT})[0] == 200  # the replacement worker serves


def test_named_queries_over_http(app) -> None:
    status, _, body = call(app, path="/queries/papers-by-concept", query={"concept": "RL", "format": "csv"})
    assert status == 200 and body.count(b"\r\n") == 4 and b"p1" in body and b"p2" in body and b"p5" in body
    status, _, body = call(app, path="/queries/nope")
    assert status == 404 and b"available: bridging-papers" in body
    status, _, body = call(app, path="/queries/papers-by-concept", query={"concept": "no such thing"})
    assert status == 400 and b"no concept labelled" in body
    listing = json.loads(call(app, path="/queries")[2])
    assert {q["name"] for q in listing} >= {"papers-by-concept", "trend"}


def test_home_page(app, mini_ttl: Path) -> None:
    status, headers, body = call(app, path="/")
    page = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "<textarea name='query'" in page and "action='/sparql'" in page
    assert "papers-by-concept" in page and "href='/graph'" in page
    assert call(app, path="/graph")[0] == 404 or mini_ttl.with_suffix(".html").exists()
    assert call(app, path="/elsewhere")[0] == 404


def test_rendered_graph_is_served(mini_ttl: Path, tmp_path: Path) -> None:
    import shutil

    graph = tmp_path / "g.ttl"
    shutil.copy(mini_ttl, graph)
    graph.with_suffix(".html").write_text("<html>graph view</html>")
    application = make_app(graph, workers=1)
    try:
        assert call(application, path="/graph")[2] == b"<html>graph view</html>"
    finally:
        application.close()


def test_sparqlwrapper_over_a_real_socket(app) -> None:
    from SPARQLWrapper import JSON, POST, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

    server = make_server(app, "127.0.0.1", 0, quiet=True)
    assert server.server_address[0] == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/sparql"
        client = SPARQLWrapper(url)
        client.setQuery("PREFIX dcterms: <http://purl.org/dc/terms/> SELECT ?id WHERE { ?p dcterms:identifier ?id } ORDER BY ?id")
        client.setReturnFormat(JSON)
        ids = [b["id"]["value"] for b in client.query().convert()["results"]["bindings"]]
        assert ids == ["p1", "p2", "p3", "p4"]  # five papers, row cap 4
        client.setMethod(POST)
        client.setQuery("INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }")
        with pytest.raises((SPARQLWrapperException, Exception)) as info:
            client.query()
        assert "403" in str(info.value) or "read-only" in str(info.value)
    finally:
        server.shutdown()
        server.server_close()


def test_in_memory_workers_answer_the_same(mini_ttl: Path) -> None:
    application = make_app(mini_ttl, workers=1, timeout=10.0)  # the default: workers load the graph in memory
    try:
        status, _, body = call(application, query={"query": COUNT})
        assert status == 200 and json.loads(body)["results"]["bindings"][0]["n"]["value"] == "5"
    finally:
        application.close()
    with pytest.raises(Exception, match="no such graph file"):
        make_app(mini_ttl.with_name("missing.ttl"))


def test_workers_answer_named_queries_from_the_query_index(app, mini_ttl: Path) -> None:
    """Workers get the graph's query index (kg.sparql.index) on disk and in memory; its answers are the engine's."""
    from kg.endpoint.answer import open_state as _open
    from kg.graph import index_file
    from kg.sparql.backends import Engine
    from kg.sparql.run import resolve, run_on
    from kg.sparql.store import open_store

    def opened(state: tuple) -> str:  # a worker keeps a connection to the index
        return state[2].execute("PRAGMA database_list").fetchone()[2]

    assert index_file.fresh(mini_ttl) is not None
    assert opened(_open(str(mini_ttl), 5, False)) == opened(_open(str(mini_ttl), 5, True)) == str(index_file.fresh(mini_ttl).resolve())
    store = open_store(mini_ttl, memory=True)
    for words in ("HUMAN feedback", "offline reinforcement", "zz"):
        status, _, body = call(app, path="/queries/search", query={"words": words, "format": "csv"})
        assert status == 200 and body == run_on(Engine(store), resolve("search"), {"words": words}).serialize("csv"), words
    assert b"p2" in call(app, path="/queries/search", query={"words": "human feedback", "format": "csv"})[2]


def test_readme_sparql_runs_without_prefix_lines_and_the_page_keeps_the_query(app) -> None:
    typed = "SELECT ?paper ?label WHERE { ?paper dcterms:subject kgc:reinforcement-learning ; rdfs:label ?label }"
    status, _, body = call(app, query={"query": typed, "format": "csv"})
    assert status == 200 and body.startswith(b"paper,label\r\n") and body.count(b"\r\n") >= 2
    form = urllib.parse.urlencode({"query": typed, "format": "html"}).encode()
    status, _, body = call(app, "POST", body=form, ctype="application/x-www-form-urlencoded")
    page = body.decode()
    assert status == 200 and f">{html.escape(typed)}</textarea>" in page, "the box keeps the query as typed, without added PREFIX lines"
    assert "format=csv" in page and "format=json" in page
    assert "Declared for you" in page and "kgc:" in page
    broken = "SELECT ?p WHERE {\n  ?p dcterms:subject nope:x }"
    status, headers, body = call(app, "POST", body=urllib.parse.urlencode({"query": broken, "format": "html"}).encode(),
                                 ctype="application/x-www-form-urlencoded")
    page = body.decode()
    assert status == 400 and headers["Content-Type"].startswith("text/html")
    assert "SPARQL syntax error at line 2, column" in page and "unknown prefix nope:" in page
    assert f">{html.escape(broken)}</textarea>" in page, "the query survives the error"


def test_construct_results_show_as_a_table_of_triples(app) -> None:
    status, headers, body = call(app, path="/queries/paper-graph", query={"paper": "p1", "format": "html"})
    page = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "<th>subject</th><th>predicate</th><th>object</th>" in page and "paper:p1" in page
    assert "format=ttl" in page and "format=nt" in page
    cells = page.count("<tr>") - 1
    assert cells == 4, "the row cap (4) holds for triples too"
    status, _, body = call(app, query={"query": "CONSTRUCT WHERE { ?p a fabio:ResearchPaper }"}, accept="text/html")
    assert status == 200 and body.decode().count("<td>rdf:type</td><td>fabio:ResearchPaper</td>") == 4
    status, _, body = call(app, path="/queries/paper-graph", query={"paper": "p1", "format": "ttl"})
    assert status == 200 and b"paper:p1" in body


def test_papers_and_concepts_in_results_are_links_to_their_pages(app) -> None:
    status, _, body = call(app, path="/queries/papers-by-concept", query={"concept": "RL", "format": "html"})
    page = body.decode()
    assert status == 200
    links = re.findall(r'<a href="(/queries/concepts-of-paper\?[^"]+)">paper:(p\d)</a>', page)
    assert links, page[-800:]
    href = html.unescape(links[0][0])
    status, _, body = call(app, path=href.split("?")[0], query=dict(urllib.parse.parse_qsl(href.split("?", 1)[1])))
    assert status == 200 and "<table>" in body.decode() and "/queries/papers-by-concept?" in body.decode(), "and back to the concepts"


def test_html_results_come_a_page_at_a_time(mini_ttl: Path) -> None:
    application = make_app(mini_ttl, workers=1, timeout=10.0, max_rows=1000, memory=False)
    try:
        every = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o"
        status, _, body = call(application, query={"query": every, "format": "html"})
        page = body.decode()
        assert status == 200 and page.count("<tr>") == 1 + 100 and "rows 1–100 of " in page
        (following,) = re.findall(r"<a href='(/sparql\?[^']*offset=100[^']*)'>next</a>", page)
        href = html.unescape(following)
        status, _, body = call(application, query=dict(urllib.parse.parse_qsl(href.split("?", 1)[1])))
        second = body.decode()
        assert status == 200 and "rows 101–200 of " in second and ">previous</a>" in second
        assert second.count("<tr>") == 101 and set(re.findall(r"<tr>.*?</tr>", second)[1:]).isdisjoint(re.findall(r"<tr>.*?</tr>", page)[1:])
        status, _, body = call(application, path="/queries/papers-by-concept", query={"concept": "RL", "format": "html", "offset": "0"})
        assert status == 200, "offset is the page's, not a query parameter"
    finally:
        application.close()
