"""kg serve refuses what would make it fetch URLs or act for another site (issue 17, item 1).

The attacks are sent to the WSGI app; a second HTTP server on 127.0.0.1, started by the test,
records whether anything contacted it.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.endpoint.app import make_app

from .test_serve import COUNT, call


class Listener:
    """An HTTP server on loopback that answers every request with one SPARQL result row, and counts them."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                hits.append(self.path)
                body = json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://leaked/"}}]}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


@pytest.fixture(scope="module")
def app(mini_ttl: Path):
    application = make_app(mini_ttl, workers=1, timeout=5.0, memory=True)
    yield application
    application.close()


def attacks(url: str) -> list[str]:
    """Queries whose SERVICE clause a text scan misses, and plain ones."""
    return [
        # The escaped IRI makes a scan read `#>` as the start of a comment.
        f"BASE <http://x/> SELECT * WHERE {{ OPTIONAL {{ ?x <\\u0041#> ?y }} SERVICE <{url}/query> {{ ?s ?p ?o }} }}",
        # A prefixed name ending in ' : a scan takes the quote as part of the name, so the engine's
        # closing quote opens a "string" for the scan that hides the SERVICE clause.
        f"PREFIX ex: <http://x/> SELECT * WHERE {{ ?s ex:o' x' . SERVICE <{url}/query> {{ ?a ?b ?c }} }} #'",
        f"SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE SILENT <{url}/query> {{ ?s ?p ?o }} }} }} }}",
        f"ASK {{ FILTER EXISTS {{ SERVICE <{url}/query> {{ ?s ?p ?o }} }} }}",
        f"SELECT * FROM <{url}/graph> WHERE {{ ?s ?p ?o }}",
        f"SELECT * FROM NAMED <{url}/graph> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
    ]


@pytest.mark.parametrize("attack", range(6))
def test_federated_and_remote_graph_queries_are_refused_and_nothing_is_fetched(app, listener: Listener, attack: int) -> None:
    for query in attacks(listener.url)[attack:attack + 1]:
        for how in ("get", "post"):
            if how == "get":
                status, _, body = call(app, query={"query": query}, accept="application/sparql-results+json")
            else:
                status, _, body = call(app, "POST", body=query.encode(), ctype="application/sparql-query")
            assert status in (400, 403), (query, status, body)
            assert b"leaked" not in body
    assert listener.hits == []
    assert call(app, query={"query": COUNT})[0] == 200  # the endpoint still answers


def test_updates_and_load_are_refused_on_the_parse(app, listener: Listener) -> None:
    for update in (f"LOAD <{listener.url}/data.ttl>", f"LOAD SILENT <{listener.url}/x> INTO GRAPH <http://g/>",
                   "# a comment\nDROP ALL", "PREFIX ex: <http://x/>\nINSERT DATA { ex:a ex:b ex:c }"):
        status, _, body = call(app, "POST", body=update.encode(), ctype="application/sparql-query")
        assert status == 403 and b"read-only" in body, (update, body)
    assert listener.hits == []


def test_query_workers_cannot_open_a_network_connection(app, listener: Listener) -> None:
    """The second wall: even a query that reached the engine could not fetch (kg.endpoint.sandbox, in a child process)."""
    script = (
        "import pyoxigraph as ox, sys\n"
        "from kg.endpoint.sandbox import no_network\n"
        "assert no_network()\n"
        "try:\n"
        f"    print(list(ox.Store().query('SELECT * WHERE {{ SERVICE <{listener.url}/q> {{ ?s ?p ?o }} }}')))\n"
        "except OSError as exc:\n"
        "    print('refused', exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused") and "leaked" not in done.stdout
    assert listener.hits == []


def test_plain_queries_still_run_and_syntax_errors_keep_their_position(app) -> None:
    status, _, body = call(app, query={"query": 'SELECT * WHERE { ?s ?p "SERVICE" }'})
    assert status == 200
    status, _, body = call(app, query={"query": "SELECT * WHERE {\n  ?s ?p \n}"})
    # the check's position: where the pattern it could not read starts (the text goes to no other parser)
    assert status == 400 and b"SPARQL syntax error at line 2, column 3, at '?s ?p'" in body


def test_dns_rebinding_and_cross_site_posts_are_refused(app) -> None:
    form = urllib.parse.urlencode({"query": COUNT}).encode()

    def post(headers: dict[str, str]) -> int:
        environ_headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
        return call_with(app, "POST", form, environ_headers)

    assert call_with(app, "GET", b"", {"HTTP_HOST": "attacker.example:8000"}, query={"query": COUNT}) == 403
    assert call_with(app, "GET", b"", {"HTTP_HOST": "localhost:8000"}, query={"query": COUNT}) == 200
    assert call_with(app, "GET", b"", {"HTTP_HOST": "127.0.0.1:8000"}, query={"query": COUNT}) == 200
    assert call_with(app, "GET", b"", {"HTTP_HOST": "[::1]:8000"}, query={"query": COUNT}) == 200
    assert post({"Host": "127.0.0.1:8000", "Origin": "http://attacker.example"}) == 403
    assert post({"Host": "127.0.0.1:8000", "Sec-Fetch-Site": "cross-site"}) == 403
    assert post({"Host": "127.0.0.1:8000", "Origin": "null"}) == 403
    assert post({"Host": "127.0.0.1:8000", "Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "same-origin"}) == 200
    assert post({"Host": "127.0.0.1:8000"}) == 200  # a non-browser client sends neither header


def test_a_query_that_another_page_makes_a_browser_send_by_get_is_refused(app) -> None:
    """Any web page could make its visitors' local endpoint run runaway queries through <img>, <script> or fetch()
    (issue 30 L6); the page of this server, a link the user followed and non-browser clients go on."""

    def get(headers: dict[str, str], path: str = "/sparql") -> int:
        environ_headers = {"HTTP_HOST": "127.0.0.1:8000", **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}}
        return call_with(app, "GET", b"", {**environ_headers, "PATH_INFO": path}, query={"query": COUNT})

    assert get({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}) == 403
    assert get({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": "http://attacker.example"}) == 403
    assert get({"Origin": "http://attacker.example"}) == 403
    assert get({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "/queries/top-concepts") == 403
    assert get({"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Origin": "http://127.0.0.1:8000"}) == 200
    assert get({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-User": "?1"}) == 200
    assert get({}) == 200  # curl, SPARQLWrapper, kg query --endpoint
    assert get({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, "/") == 200  # the page itself is no query


def test_an_allowed_host_name_is_accepted(mini_ttl: Path) -> None:
    application = make_app(mini_ttl, workers=1, timeout=5.0, hosts=("kg.example.org",))
    try:
        assert call_with(application, "GET", b"", {"HTTP_HOST": "kg.example.org"}, query={"query": COUNT}) == 200
        assert call_with(application, "GET", b"", {"HTTP_HOST": "other.example.org"}, query={"query": COUNT}) == 403
    finally:
        application.close()


def call_with(app, method: str, body: bytes, headers: dict[str, str], query: dict | None = None) -> int:
    """The status of one request with extra CGI-style headers (HTTP_HOST, HTTP_ORIGIN, …)."""
    import io

    environ = {"REQUEST_METHOD": method, "PATH_INFO": "/sparql", "QUERY_STRING": urllib.parse.urlencode(query or {}),
               "CONTENT_TYPE": "application/x-www-form-urlencoded" if body else "", "CONTENT_LENGTH": str(len(body)),
               "wsgi.input": io.BytesIO(body), "HTTP_ACCEPT": "application/sparql-results+json", **headers}
    got: dict = {}

    def start_response(status: str, _headers: list) -> None:
        got["status"] = int(status.split()[0])

    b"".join(app(environ, start_response))
    return got["status"]


def _kg(*args: str) -> subprocess.CompletedProcess:
    """`python -m kg ARGS` in a process of its own: an engine that overflows its stack ends that process, not the tests."""
    return subprocess.run([sys.executable, "-m", "kg", *args], check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\u2028"], ids=["CR", "CRLF", "U+2028"])
def test_a_comment_ended_by_a_carriage_return_hides_no_service_clause(app, listener: Listener, mini_ttl: Path, ending: str) -> None:
    """SPARQL ends a comment at CR as at LF; the check reads the text as the engine does (issue 30, M1).

    U+2028 ends a comment for neither parser: that SERVICE clause is part of the comment, and the query runs."""
    from click.testing import CliRunner

    from kg.cli import cli

    query = f"SELECT * WHERE {{ # c{ending}SERVICE <{listener.url}/query> {{ ?s ?p ?o }}\n}}"
    hidden = ending == "\u2028"
    for how in ("get", "post"):
        if how == "get":
            status, _, body = call(app, query={"query": query}, accept="application/sparql-results+json")
        else:
            status, _, body = call(app, "POST", body=query.encode(), ctype="application/sparql-query")
        assert (status, b"leaked" in body) == ((200, False) if hidden else (403, False)), (how, status, body)
        assert hidden or b"SERVICE (federated query) is refused" in body
    out = CliRunner().invoke(cli, ["query", query, "--graph", str(mini_ttl), "-f", "csv"])
    if hidden:
        assert out.exit_code == 0 and "leaked" not in out.output, out.output
    else:
        assert out.exit_code == 1 and "Error: query 'ad-hoc': SERVICE (federated query) is refused" in out.output, out.output
    assert listener.hits == []


NESTED = {
    # rdflib's grammar has no RDF-star: the check failed at once, and the worker handed the text to the engine's parser
    "parentheses after RDF-star": "SELECT * WHERE { << ?s ?p ?o >> ?q ?r . FILTER(" + "(" * 5000 + "1" + ")" * 5000 + ") }",
    "groups": "SELECT * WHERE " + "{ " * 5000 + "}" * 5000,
    "blank nodes": "SELECT * WHERE { ?s ?p " + "[ ?p " * 400 + "?o" + " ]" * 400 + " }",
    "OPTIONALs": "SELECT * WHERE { ?s ?p ?o " + "OPTIONAL { ?s ?p ?o } " * 2000 + "}",
}


@pytest.mark.parametrize("shape", list(NESTED))
def test_a_deeply_nested_query_is_refused_and_the_next_one_answered(app, mini_ttl: Path, shape: str) -> None:
    """A query whose nesting would overflow a parser's stack is a one-line 400, in serve and kg query (issue 30, M2)."""
    query = NESTED[shape]
    message = ("query too long (limit 10,000 terms and operators); split it into several queries" if shape == "OPTIONALs" else
               "query nested too deeply (limit 64 levels of brackets); flatten it or split it into several queries")
    status, _, body = call(app, "POST", body=query.encode(), ctype="application/sparql-query")
    assert (status, body.decode()) == (400, f"query 'request': {message}\n")
    assert call(app, query={"query": COUNT})[0] == 200  # the server answers the next query
    done = _kg("query", query, "--graph", str(mini_ttl))
    assert done.returncode == 1 and done.stderr.strip().splitlines()[-1] == f"Error: query 'ad-hoc': {message}", done.stderr


def test_queries_within_the_limits_still_run(app) -> None:
    """64 levels of brackets run; so do 150 triple patterns, which rdflib's parser could not read in Python's
    default recursion limit (the endpoint answered 503). The 150 are ground: the parser's depth is the same, and
    the engine checks them in milliseconds (150 joins of `?p a fabio:ResearchPaper` took it 2 s of CPU, past the
    app's 5 s limit whenever other processes shared the cores)."""
    deep = "SELECT * WHERE " + "{ " * 64 + "}" * 64
    assert call(app, "POST", body=deep.encode(), ctype="application/sparql-query")[0] == 200
    assert call(app, "POST", body=deep.replace("{ ", "{ { ", 1).encode(), ctype="application/sparql-query")[0] == 400
    paper = "<https://w3id.org/kg/paper/p1> a <http://purl.org/spar/fabio/ResearchPaper> "
    long = "SELECT (COUNT(*) AS ?n) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> " + f". {paper}" * 150 + "}"
    status, _, body = call(app, "POST", body=long.encode(), ctype="application/sparql-query", accept="text/csv")
    assert (status, body) == (200, b"n\r\n5\r\n")
