"""`kg push --replace` cut off mid-load, against a real Oxigraph server: the graph it replaces survives whole.

A proxy between kg and the server passes requests through, except one whose body it cuts in half: the server
sees the request end early, as when the client is killed, and the test can kill the client or the server then.
"""

from __future__ import annotations

import http.server
import re
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable, Iterator

import pytest
from click.testing import CliRunner

import kg
import kg.graph.files
import kg.sparql.push
from kg.cli import cli
from tests.conftest import free_port, synthetic_triples
from tests.test_remote import _count

TARGET = "https://example.org/graph/replace-me"


class Cut:
    """A TCP proxy to `upstream` that cuts the first request whose body has at least `size` bytes.

    Of that request it passes the head and `keep` of the body (half: the body ends early, as when the client
    dies), calls `midway()` (the load is under way), then ends its side of the connection, waits for the server
    to answer or close, and drops the client's connection without an answer.
    """

    def __init__(self, upstream: str, midway: Callable[[], None] = lambda: None, *, size: int = 100_000, keep: float = 0.5) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream, self.size, self.keep, self.midway, self.cuts = (host, int(port)), size, keep, midway, 0
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy.relay(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def relay(self, client: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            if not (chunk := client.recv(1 << 16)):
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        found = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        length = int(found.group(1)) if found else 0
        while len(body) < length and (chunk := client.recv(1 << 16)):
            body += chunk
        try:
            up = socket.create_connection(self.upstream)
        except OSError:  # the server was killed
            client.close()
            return
        with up:
            if length >= self.size and not self.cuts:
                self.cuts += 1
                up.sendall(head + b"\r\n\r\n" + body[: int(length * self.keep)])
                self.midway()
                try:
                    up.shutdown(socket.SHUT_WR)  # the body ends early: the server fails the request (or is gone)
                    up.settimeout(10)
                    while up.recv(1 << 16):
                        pass
                except OSError:
                    pass
                client.close()
                return
            up.sendall(head + b"\r\n\r\n" + body)
            while chunk := up.recv(1 << 16):
                client.sendall(chunk)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def old_nt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _nt(tmp_path_factory.mktemp("old") / "old.nt", 40, seed=1)


@pytest.fixture(scope="module")
def new_nt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 20,000 triples, 2.5 MB of N-Triples: one request at the bulk batch, several at 5,000."""
    return _nt(tmp_path_factory.mktemp("new") / "new.nt", 3000, seed=2)


def _nt(path: Path, papers: int, seed: int) -> Path:
    with path.open("wb") as stream:
        kg.graph.files.write(synthetic_triples(papers, seed=seed), stream, "nt")
    return path


def _start(location: Path) -> tuple[subprocess.Popen, str]:
    """An Oxigraph server of its own on `location` (the test kills it)."""
    exe = Path(sys.executable).parent / "oxigraph"
    if not exe.exists():
        pytest.skip("the oxigraph server is not installed (pip install oxigraph)")
    port = free_port()
    proc = subprocess.Popen([str(exe), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{base}/query?query=ASK%7B%7D", timeout=1).read()
            return proc, base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    pytest.fail("oxigraph did not start")


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Callable[[], tuple[subprocess.Popen, str]]]:
    """Starts an Oxigraph server on the test's own folder, again after a kill; all are stopped at the end."""
    started: list[subprocess.Popen] = []

    def start() -> tuple[subprocess.Popen, str]:
        proc, base = _start(tmp_path / "store")
        started.append(proc)
        return proc, base

    yield start
    for proc in started:
        proc.kill()
        proc.wait(10)


def _graphs(base: str) -> set[str]:
    return {str(row["g"]) for row in kg.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", endpoint=f"{base}/query")}


WAYS = {
    "bulk": ["--bulk"],  # one request into the bulk loader, which has no transaction
    "bulk+endpoint": ["--bulk", "--endpoint", "ENDPOINT"],
    "put": [],  # one Graph Store PUT, applied in one transaction
    "batches+endpoint": ["--batch", "5000", "--endpoint", "ENDPOINT"],
}


@pytest.mark.parametrize("way", list(WAYS))
def test_a_replace_cut_mid_request_leaves_the_graph_as_it_was(oxigraph: str, old_nt: Path, new_nt: Path, way: str) -> None:
    target = f"{TARGET}/{way}"
    before = kg.push(old_nt, store=f"{oxigraph}/store", graph_iri=target, replace=True)
    graphs = _graphs(oxigraph)
    during: list[int] = []
    proxy = Cut(oxigraph, lambda: during.append(_count(oxigraph, target)))
    try:
        args = [proxy.url + "/update" if a == "ENDPOINT" else a for a in WAYS[way]]
        out = CliRunner().invoke(cli, ["push", str(new_nt), "--store", f"{proxy.url}/store", "--graph", target, "--replace", *args])
    finally:
        proxy.close()
    assert out.exit_code == 1, out.output
    assert during in ([before], []) and _count(oxigraph, target) == before, out.output  # readers saw the old graph throughout
    assert _graphs(oxigraph) == graphs  # no temporary graph is left behind
    if "endpoint" in way:
        assert "is as it was (not replaced)" in out.output and "were dropped" in out.output, out.output
    elif way == "bulk":
        assert "needs --endpoint" in out.output and proxy.cuts == 0, out.output  # refused before any request


@pytest.mark.parametrize("kill", ["client", "server"])
@pytest.mark.parametrize("way", ["bulk", "bulk+endpoint"])
def test_a_replace_whose_client_or_server_is_killed_mid_load_leaves_the_graph_as_it_was(
    own_server: Callable[[], tuple[subprocess.Popen, str]], old_nt: Path, new_nt: Path, way: str, kill: str
) -> None:
    server, base = own_server()
    before = kg.push(old_nt, store=f"{base}/store", graph_iri=TARGET, replace=True)
    client: list[subprocess.Popen] = []

    def midway() -> None:
        if kill == "server":  # the whole body has arrived: killed at the first change of the target, or after 0.5 s
            deadline = time.monotonic() + 0.5
            while _count(base, TARGET) == before and time.monotonic() < deadline:
                time.sleep(0.02)
        victim = client[0] if kill == "client" else server
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)

    proxy = Cut(base, midway, keep=0.5 if kill == "client" else 1.0)
    try:
        args = [proxy.url + "/update" if a == "ENDPOINT" else a for a in WAYS[way]]
        client.append(subprocess.Popen([sys.executable, "-m", "kg", "push", str(new_nt), "--store", f"{proxy.url}/store",
                                        "--graph", TARGET, "--replace", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        _, err = client[0].communicate(timeout=60)
    finally:
        proxy.close()
    assert client[0].returncode != 0, err
    if server.poll() is not None:
        server, base = own_server()  # killed: started again on the same folder
    assert _count(base, TARGET) == before, err.decode()


class _Redirect(http.server.BaseHTTPRequestHandler):
    to = ""

    def _answer(self) -> None:
        code = int(self.path.strip("/").split("/")[0])
        self.send_response(code)
        self.send_header("Location", self.to + self.path.split("/", 2)[2])
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = do_POST = do_PUT = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_is_refused_not_followed(oxigraph: str, old_nt: Path, code: int) -> None:
    _Redirect.to = f"{oxigraph}/"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    moved = f"http://127.0.0.1:{server.server_address[1]}/{code}"
    target = f"{TARGET}/redirect-{code}"
    try:
        for args in (["push", str(old_nt), "--store", f"{moved}/store", "--graph", target],
                     ["push", str(old_nt), "--endpoint", f"{moved}/update", "--graph", target],
                     ["push", str(old_nt), "--store", f"{moved}/store", "--bulk", "--graph", target],
                     ["query", "ASK {}", "--endpoint", f"{moved}/query"]):
            out = CliRunner().invoke(cli, args)
            assert out.exit_code == 1 and f"answered {code}" in out.output and f"redirects to {oxigraph}/" in out.output, out.output
            assert len(out.output.strip().splitlines()) == 1, out.output
    finally:
        server.shutdown()
    assert _count(oxigraph, target) == 0  # nothing was loaded anywhere


def test_replace_across_two_servers_is_refused(own_server: Callable[[], tuple[subprocess.Popen, str]], oxigraph: str,
                                               old_nt: Path, new_nt: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, other = own_server()
    before = kg.push(old_nt, store=f"{other}/store", graph_iri=TARGET, replace=True)
    # The temporary graph would be loaded into one server and the MOVE run on the other.
    out = CliRunner().invoke(cli, ["push", str(new_nt), "--store", f"{oxigraph}/store", "--endpoint", f"{other}/update",
                                   "--graph", TARGET, "--replace"])
    assert out.exit_code == 1 and "different servers" in out.output, out.output
    assert _count(other, TARGET) == before
    # Where kg cannot tell (one server, two datasets behind a proxy), the MOVE fails on a graph it does not find.
    monkeypatch.setattr(kg.sparql.push, "_same_server", lambda a, b: True)
    with pytest.raises(kg.sparql.push.PushError, match="is as it was"):
        kg.push(new_nt, f"{other}/update", store=f"{oxigraph}/store", graph_iri=TARGET, replace=True)
    assert _count(other, TARGET) == before
