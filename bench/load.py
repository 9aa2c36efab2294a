"""Load test for `kg serve` on loopback: C concurrent clients send queries for a bounded time.

Starts `kg serve GRAPH --port 0` as a subprocess (a real socket, the real CLI), runs a mix of
named queries and ad-hoc SPARQL from C client threads for D seconds (or N queries), optionally
with one runaway cross-product query in the background, then prints the number of queries,
failures, throughput and latency percentiles, and stops the server.

With --attackers K, K more clients send runaway queries back to back for the whole run (in turn
a cartesian product with ORDER BY, which grows memory, and chained CONCATs, which make a huge
response; with --attack runaway, a count over a cross product that runs until the time limit), and the report adds the server's peak memory (the server process alone, and with its
workers; sampled every 0.2 s) and the largest response body. Each client then sends from loopback
addresses of its own: legitimate client k from 127.0.(100+k).1, attacker k from 127.0.(1+k).1, so
each is its own /24 (kg serve tells clients apart by /24). With --rotate N each attacker sends from
N addresses at once, each address a query at a time (at most one a second): 127.0.(1+k).1 to .N
(one /24), with --spread prefix 127.(1+k).1.1 to 127.(1+k).N.1 (N different /24s of one /16), or with
--spread network 127.(1+kN).1.1 to 127.(N+kN).1.1 (N different /16s).

With --slow-readers K, K more clients ask for answers as large as the byte cap allows (the CONCATs;
with --slow-path graph, the rendered page at /graph, which the server process reads itself)
and do not read them: each keeps up to --slow-connections connections open, reading only the status
line, from 127.0.(50+k).x (rotated as the attackers are).

    python bench/load.py [GRAPH] [--clients 8] [--duration 10] [--queries N] [--runaway] [--attackers 2]
                         [--rotate 16] [--spread address|prefix|network] [--slow-readers 2] [--warm 2]

Without GRAPH, the bundled ICML 2024 sample is built into a temporary folder first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
# What the attackers send (issue 17): memory grows with the sorted cross product; the CONCATs
# make each row 256 times the literal it starts from.
CARTESIAN = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f"
CONCAT = ("SELECT ?h WHERE { ?s ?p ?o . BIND(CONCAT(STR(?o),STR(?o)) AS ?a) BIND(CONCAT(?a,?a) AS ?b) "
          "BIND(CONCAT(?b,?b) AS ?c) BIND(CONCAT(?c,?c) AS ?d) BIND(CONCAT(?d,?d) AS ?e) BIND(CONCAT(?e,?e) AS ?f) "
          "BIND(CONCAT(?f,?f) AS ?g) BIND(CONCAT(?g,?g) AS ?h) }")
DUMP = "SELECT * WHERE { ?s ?p ?o }"  # 5.9 MB of JSON from the sample (with --max-rows over 22,919), in about 1 s
BIG = "SELECT * WHERE { ?s ?p ?o BIND(CONCAT(STR(?o), STR(?o), STR(?o), STR(?o)) AS ?x) }"  # 10.1 MB, about 1.4 s
# The mix every client cycles through: ad-hoc SPARQL and parameter-free named queries.
MIX = [
    ("/sparql", {"query": COUNT}),
    ("/sparql", {"query": "SELECT ?s ?label WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label } ORDER BY ?s LIMIT 20"}),
    ("/queries/top-concepts", {"format": "json"}),
    ("/queries/co-occurrence", {"format": "json"}),
    ("/queries/papers-by-concept", {"concept": "reinforcement learning", "format": "json"}),
    ("/queries/search", {"words": "language model", "format": "json"}),
]
# Not in the mix: concept-tree returns the whole scheme (1 MB of JSON, ~250 ms alone) and would
# measure JSON size rather than the server.


@dataclass
class Stats:
    """Outcomes of the requests: latencies in seconds of the good ones, and the failures."""

    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    failed_at: list[float] = field(default_factory=list)  # when each failed request was sent (time.monotonic)
    sent_at: list[float] = field(default_factory=list)  # when each request was sent
    late: tuple[float, int, int] | None = None  # (window, failures of requests sent after it, requests sent after it)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, error: str | None) -> None:
        with self.lock:
            (self.failures.append(error) if error else self.latencies.append(seconds))
            self.sent_at.append(time.monotonic() - seconds)
            if error:
                self.failed_at.append(time.monotonic() - seconds)

    def percentile(self, p: float) -> float:
        data = sorted(self.latencies)
        return data[min(len(data) - 1, round(p / 100 * (len(data) - 1)))] if data else float("nan")

    def report(self, elapsed: float) -> str:
        n = len(self.latencies) + len(self.failures)
        ms = {p: self.percentile(p) * 1000 for p in (50, 90, 99)}
        lines = [
            f"queries: {n}  failures: {len(self.failures)}  elapsed: {elapsed:.1f} s  throughput: {n / elapsed:.0f} queries/s",
            f"latency ms: p50 {ms[50]:.1f}  p90 {ms[90]:.1f}  p99 {ms[99]:.1f}  max {max(self.latencies, default=0) * 1000:.1f}",
        ]
        if self.late is not None:
            window, failed, sent = self.late
            lines.append(f"failures of requests sent after the first {window:g} s: {failed} of {sent}"
                         f" ({100 * failed / max(sent, 1):.1f} %)")
        kinds: dict[str, int] = {}
        for f in self.failures:  # the same failure on every path counts once, with how often
            kinds[f.split(": ", 1)[-1]] = kinds.get(f.split(": ", 1)[-1], 0) + 1
        lines += [f"failure: {n} × {f}" for f, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:5]]
        return "\n".join(lines)


def start_server(graph: Path, *, workers: int = 2, timeout: float = 3.0, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """Start `kg serve GRAPH --port 0` and return the process and its base URL (read from its stderr)."""
    command = [sys.executable, "-m", "kg", "serve", str(graph), "--port", "0", "--workers", str(workers), "--timeout", str(timeout), *extra]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(r"(http://\S+?:\d+)/", line)
        if match:
            # Keep draining stderr (request logs) so the server never blocks on a full pipe; count the workers
            # that answer from memory (kg.endpoint.snapshot.Warming).
            proc.warm = []  # type: ignore[attr-defined]
            threading.Thread(target=lambda: [proc.warm.append(time.monotonic())  # type: ignore[attr-defined]
                                             for line in proc.stderr if "answers from memory now" in line],  # type: ignore[union-attr]
                             daemon=True).start()
            return proc, match.group(1)
    stop_server(proc)
    raise RuntimeError("kg serve did not start: " + "".join(seen))


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server (Ctrl-C, as a user would) and its worker processes."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def get(url: str, path: str, params: dict[str, str], timeout: float = 30, source: str | None = None) -> tuple[int, bytes]:
    """One GET request: (status, body); HTTP errors are returned, not raised. `source`: the local address to send from."""
    full = f"{url}{path}?{urllib.parse.urlencode(params)}"
    if source is not None:
        import http.client

        parts = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout, source_address=(source, 0))
        try:
            conn.request("GET", full[len(url):], headers={"Accept": "application/sparql-results+json"})
            reply = conn.getresponse()
            return reply.status, reply.read()
        finally:
            conn.close()
    request = urllib.request.Request(full, headers={"Accept": "application/sparql-results+json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def run_load(url: str, *, clients: int = 8, duration: float = 10.0, queries: int | None = None,
             sources: bool = False, window: float = 0.0) -> tuple[Stats, float]:
    """C client threads cycling through MIX until `duration` passes (or `queries` are sent); with
    `sources`, client k sends from 127.0.(100 + k).1. The report also counts the failures of requests
    sent after the first `window` seconds."""
    stats = Stats()
    sent = iter(range(queries)) if queries else None
    lock = threading.Lock()
    stop_at = time.monotonic() + duration

    def client(k: int) -> None:
        i = k
        while time.monotonic() < stop_at:
            if sent is not None:
                with lock:
                    if next(sent, None) is None:
                        return
            path, params = MIX[i % len(MIX)]
            i += 1
            t = time.perf_counter()
            read = None
            try:
                status, body = get(url, path, params, source=f"127.0.{100 + k}.1" if sources else None)
                # The latency ends when the whole answer is read: parsing its JSON here (about 0.1 s for the 6.3 MB of
                # co-occurrence at 21k papers, holding this process's GIL) is the load script's time, not the server's.
                read = time.perf_counter() - t
                error = None if status == 200 and json.loads(body) else f"{path}: HTTP {status}: {body[:100]!r}"
            except Exception as exc:  # connection refused/reset, timeouts: all count as failures
                error = f"{path}: {type(exc).__name__}: {exc}"
            stats.add(read if read is not None else time.perf_counter() - t, error)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if window:
        stats.late = (window, sum(1 for at in stats.failed_at if at - start > window), sum(1 for at in stats.sent_at if at - start > window))
    return stats, time.monotonic() - start


def sample_graph(folder: Path) -> Path:
    """Build the bundled sample into `folder` and return the Turtle path."""
    out = folder / "icml2024.ttl"
    subprocess.run([sys.executable, "-m", "kg", "build", "-o", str(out), "--no-render"], check=True, capture_output=True)
    return out


def runaway_in_background(url: str) -> Iterator[dict]:
    """Start one runaway query in a thread; yields a dict that gets its (status, body, seconds)."""
    result: dict = {}

    def go() -> None:
        t = time.perf_counter()
        result["answer"] = (*get(url, "/sparql", {"query": RUNAWAY}), time.perf_counter() - t)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    yield result
    thread.join(60)


@dataclass
class Attack:
    """What the attackers got: statuses, the largest body, and the server's peak memory (kB of RSS, of
    its processes together and of the server process alone); the slow readers' statuses."""

    statuses: list[int] = field(default_factory=list)
    largest: int = 0
    peak_kb: int = 0
    peak_server_kb: int = 0
    slow: list[int] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


def server_rss_kb(pid: int, tree: bool = True) -> int:
    """Resident memory of a process and (`tree`) all its descendants (Linux /proc), in kB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            if tree:
                todo.extend(int(c) for t in Path(f"/proc/{p}/task").iterdir() for c in (t / "children").read_text().split())
        except (OSError, StopIteration, ValueError):
            continue
    return total


def source(first: int, k: int, i: int, rotate: int, spread: str) -> str:
    """The address client k of a group starting at `first` sends its i-th request from."""
    j = i % rotate + 1
    if spread == "network":
        return f"127.{first + k * rotate + j - 1}.1.1"
    return f"127.0.{first + k}.{j}" if spread == "address" else f"127.{first + k}.{j}.1"


def slow_reader(url: str, found: Attack, k: int, rotate: int, spread: str, keep: int, path: str) -> None:
    """Ask for huge answers (`path`) and read only their status lines, keeping up to `keep` connections open."""
    parts = urllib.parse.urlsplit(url)
    request = (f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}\r\n"
               "Accept: application/sparql-results+json\r\nConnection: close\r\n\r\n").encode()
    held: list[socket.socket] = []
    i = 0
    while not found.stop.is_set():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds little of the answer
        sock.settimeout(120)
        try:
            sock.bind((source(50, k, i, rotate, spread), 0))
            sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
            sock.sendall(request)
            status = int(sock.recv(12).split()[1])
        except (OSError, IndexError, ValueError):
            status = 0
        i += 1
        found.slow.append(status)
        held.append(sock)
        if len(held) > keep:
            held.pop(0).close()
    for sock in held:
        sock.close()


def attack(url: str, pid: int, attackers: int, rotate: int = 1, spread: str = "address", slow: int = 0,
           keep: int = 32, queries: tuple[str, ...] = (CARTESIAN, CONCAT), slow_path: str = "sparql") -> tuple[Attack, list[threading.Thread]]:
    """Start `attackers` clients sending `queries` in turn, back to back (attacker k from 127.0.(1+k).1, or
    from `rotate` addresses at once, each sending back to back), `slow` slow readers, and a memory sampler."""
    found = Attack()

    def attacker(k: int, j: int) -> None:
        i = k
        while not found.stop.is_set():
            query = f"{queries[i % len(queries)]}\n# {k} {j} {i}"  # a text of its own: no answer kept or in flight to share
            i += 1
            sent = time.monotonic()
            try:
                status, body = get(url, "/sparql", {"query": query}, timeout=120, source=source(1, k, j, rotate, spread))
            except Exception:
                status, body = 0, b""
            found.statuses.append(status)
            found.largest = max(found.largest, len(body))
            found.stop.wait(max(0.0, sent + 1 - time.monotonic()))  # one request a second per address at most

    def sampler() -> None:
        while not found.stop.is_set():
            found.peak_kb = max(found.peak_kb, server_rss_kb(pid))
            found.peak_server_kb = max(found.peak_server_kb, server_rss_kb(pid, tree=False))
            time.sleep(0.2)

    threads = [threading.Thread(target=attacker, args=(k, j), daemon=True) for k in range(attackers) for j in range(rotate)]
    query = {"dump": DUMP, "big": BIG}.get(slow_path, CONCAT)
    path = "/graph" if slow_path == "graph" else f"/sparql?{urllib.parse.urlencode({'query': query})}"
    threads += [threading.Thread(target=slow_reader, args=(url, found, k, rotate, spread, keep, path), daemon=True) for k in range(slow)]
    threads.append(threading.Thread(target=sampler, daemon=True))
    for t in threads:
        t.start()
    return found, threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", type=Path)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--queries", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--runaway", action="store_true", help="Also run one cross-product query that the timeout must stop.")
    parser.add_argument("--attackers", type=int, default=0, help="Clients sending runaway queries back to back the whole time.")
    parser.add_argument("--rotate", type=int, default=1, help="Each attacker and slow reader sends from this many addresses in turn.")
    parser.add_argument("--spread", choices=("address", "prefix", "network"), default="address",
                        help="Rotate over addresses of one /24 (address), over /24s of one /16 (prefix) or over /16s (network).")
    parser.add_argument("--attack", choices=("mix", "runaway"), default="mix",
                        help="What attackers send: the CARTESIAN and CONCAT mix, or the RUNAWAY count that runs until the time limit.")
    parser.add_argument("--slow-readers", type=int, default=0, help="Clients that ask for huge answers and do not read them.")
    parser.add_argument("--slow-path", choices=("sparql", "dump", "big", "graph"), default="sparql",
                        help="What slow readers ask for: the CONCATs, every triple (dump; big: with a column 4 times the object; "
                             "with --max-rows above the triples, answers of MBs made fast), or /graph (the rendered page).")
    parser.add_argument("--slow-connections", type=int, default=32, help="Connections each slow reader keeps open.")
    parser.add_argument("--serve-option", action="append", default=[], help="An extra option for kg serve (repeatable).")
    parser.add_argument("--head-start", type=float, default=0.0,
                        help="The legitimate clients send queries this many seconds before the attack starts (not counted).")
    parser.add_argument("--warm", type=int, default=0,
                        help="Start the load once this many workers answer from memory (a large graph loads in the background).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        graph = args.graph or sample_graph(Path(folder))
        started = time.monotonic()
        proc, url = start_server(graph, workers=args.workers, timeout=args.timeout, extra=tuple(args.serve_option))
        try:
            while len(proc.warm) < args.warm and proc.poll() is None:  # type: ignore[attr-defined]
                time.sleep(0.5)
            print(f"started the load {time.monotonic() - started:.0f} s after kg serve, with {len(proc.warm)} workers "  # type: ignore[attr-defined]
                  f"answering from memory; tree {server_rss_kb(proc.pid) / 1024:.0f} MB")
            print(f"kg serve {graph.name} at {url}: {args.clients} clients, {args.attackers} attackers, "
                  f"({args.attack}), {args.slow_readers} slow readers, rotating over {args.rotate} ({args.spread}), "
                  f"{args.workers} workers, timeout {args.timeout:g} s")
            hostile = bool(args.attackers or args.slow_readers)
            if args.runaway:
                background = runaway_in_background(url)
                runaway = next(background)
                time.sleep(0.3)
            if hostile and args.head_start:  # the legitimate clients are served (and known) before the attack starts
                early = threading.Thread(target=run_load, args=(url,), kwargs={"clients": args.clients, "duration": args.head_start, "sources": True})
                early.start()
                early.join()
            if hostile:
                attacked, threads = attack(url, proc.pid, args.attackers, args.rotate, args.spread, args.slow_readers,
                                           args.slow_connections, (RUNAWAY,) if args.attack == "runaway" else (CARTESIAN, CONCAT), args.slow_path)
                time.sleep(0.5)
            stats, elapsed = run_load(url, clients=args.clients, duration=args.duration, queries=args.queries,
                                      sources=hostile, window=2 * args.timeout if hostile else 0.0)
            print(stats.report(elapsed))
            print(f"workers answering from memory at the end: {len(proc.warm)}")  # type: ignore[attr-defined]
            if hostile:
                attacked.stop.set()
                for t in threads:
                    t.join(args.timeout + 30)
                slow = {s: attacked.slow.count(s) for s in sorted(set(attacked.slow))}
                print(f"attackers: {len(attacked.statuses)} runaway queries, statuses {sorted(set(attacked.statuses))}; "
                      f"slow readers: {len(attacked.slow)} requests, statuses {slow}; "
                      f"largest response {attacked.largest / 1e6:.1f} MB; peak server memory {attacked.peak_kb / 1024:.0f} MB "
                      f"(the server process alone {attacked.peak_server_kb / 1024:.0f} MB)")
            if args.runaway:
                next(background, None)
                status, body, seconds = runaway.get("answer", (0, b"no answer", 0.0))
                print(f"runaway query: HTTP {status} after {seconds:.1f} s: {body.decode(errors='replace').strip()[:100]}")
        finally:
            stop_server(proc)


if __name__ == "__main__":
    main()
