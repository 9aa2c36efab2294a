"""Load test for `kg serve` on loopback: C concurrent clients send queries for a bounded time.

Starts `kg serve GRAPH --port 0` as a subprocess (a real socket, the real CLI), runs a mix of
named queries and ad-hoc SPARQL from C client threads for D seconds (or N queries), optionally
with one runaway cross-product query in the background, then prints the number of queries,
failures, throughput and latency percentiles, and stops the server.

With --attackers K, K more clients send runaway queries back to back for the whole run (in turn
a cartesian product with ORDER BY, which grows memory, and chained CONCATs, which make a huge
response), and the report adds the server's peak memory (all its processes, sampled every 0.2 s)
and the largest response body. Each client then sends from its own loopback address (127.0.0.N),
as separate machines would.

    python bench/load.py [GRAPH] [--clients 8] [--duration 10] [--queries N] [--runaway] [--attackers 2]

Without GRAPH, the bundled ICML 2024 sample is built into a temporary folder first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
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
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, error: str | None) -> None:
        with self.lock:
            (self.failures.append(error) if error else self.latencies.append(seconds))

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
        lines += [f"failure: {f}" for f in sorted(set(self.failures))[:5]]
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
            # Keep draining stderr (request logs) so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
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
             sources: bool = False) -> tuple[Stats, float]:
    """C client threads cycling through MIX until `duration` passes (or `queries` are sent); with
    `sources`, client k sends from 127.0.0.(100 + k)."""
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
            try:
                status, body = get(url, path, params, source=f"127.0.0.{100 + k}" if sources else None)
                error = None if status == 200 and json.loads(body) else f"{path}: HTTP {status}: {body[:100]!r}"
            except Exception as exc:  # connection refused/reset, timeouts: all count as failures
                error = f"{path}: {type(exc).__name__}: {exc}"
            stats.add(time.perf_counter() - t, error)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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
    """What the attackers got: statuses, the largest body, and the server's peak memory (kB of RSS)."""

    statuses: list[int] = field(default_factory=list)
    largest: int = 0
    peak_kb: int = 0
    stop: threading.Event = field(default_factory=threading.Event)


def server_rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants (Linux /proc), in kB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            todo.extend(int(c) for t in Path(f"/proc/{p}/task").iterdir() for c in (t / "children").read_text().split())
        except (OSError, StopIteration, ValueError):
            continue
    return total


def attack(url: str, pid: int, attackers: int) -> tuple[Attack, list[threading.Thread]]:
    """Start `attackers` clients (from 127.0.0.10, .11, …) sending CARTESIAN and CONCAT back to back, and a memory sampler."""
    found = Attack()

    def attacker(k: int) -> None:
        i = k
        while not found.stop.is_set():
            query = (CARTESIAN, CONCAT)[i % 2]
            i += 1
            try:
                status, body = get(url, "/sparql", {"query": query}, timeout=120, source=f"127.0.0.{10 + k}")
            except Exception:
                status, body = 0, b""
            found.statuses.append(status)
            found.largest = max(found.largest, len(body))

    def sampler() -> None:
        while not found.stop.is_set():
            found.peak_kb = max(found.peak_kb, server_rss_kb(pid))
            time.sleep(0.2)

    threads = [threading.Thread(target=attacker, args=(k,), daemon=True) for k in range(attackers)]
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
    parser.add_argument("--serve-option", action="append", default=[], help="An extra option for kg serve (repeatable).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        graph = args.graph or sample_graph(Path(folder))
        proc, url = start_server(graph, workers=args.workers, timeout=args.timeout, extra=tuple(args.serve_option))
        try:
            print(f"kg serve {graph.name} at {url}: {args.clients} clients, {args.attackers} attackers, "
                  f"{args.workers} workers, timeout {args.timeout:g} s")
            if args.runaway:
                background = runaway_in_background(url)
                runaway = next(background)
                time.sleep(0.3)
            if args.attackers:
                attacked, threads = attack(url, proc.pid, args.attackers)
                time.sleep(0.5)
            stats, elapsed = run_load(url, clients=args.clients, duration=args.duration, queries=args.queries,
                                      sources=bool(args.attackers))
            print(stats.report(elapsed))
            if args.attackers:
                attacked.stop.set()
                for t in threads:
                    t.join(args.timeout + 30)
                print(f"attackers: {len(attacked.statuses)} runaway queries, statuses {sorted(set(attacked.statuses))}; "
                      f"largest response {attacked.largest / 1e6:.1f} MB; peak server memory {attacked.peak_kb / 1024:.0f} MB")
            if args.runaway:
                next(background, None)
                status, body, seconds = runaway.get("answer", (0, b"no answer", 0.0))
                print(f"runaway query: HTTP {status} after {seconds:.1f} s: {body.decode(errors='replace').strip()[:100]}")
        finally:
            stop_server(proc)


if __name__ == "__main__":
    main()
