"""The second day with a graph: what a user waits for after `kg build`, as processes, against the build's own time.

Usage: python bench/second_day.py CORPUS.jsonl [--workdir DIR] [--jobs N]

Builds the corpus with `kg build` (the reference time), then runs each measure in MEASURES as its own
processes on that graph and prints its seconds, its ratio to the build's seconds, and the rows it got. The
`kg analyze` and the JSON-LD export give their peak memory too. The last measure removes the graph's SPARQL store and times the first ad-hoc query again: the wait when the
store was made on first use, and what making it adds to the build.

A measure is a function (Graph) -> list[Timed]; add one to MEASURES to have it printed beside the others.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

KG = str(Path(sys.executable).with_name("kg"))
PAPERS = "SELECT (COUNT(?p) AS ?papers) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }"


@dataclass(frozen=True)
class Graph:
    """A built graph and what building it took."""

    path: Path
    seconds: float
    papers: int
    triples: int


@dataclass(frozen=True)
class Timed:
    """One measured wait: its name, seconds, and what it answered (rows, counts)."""

    name: str
    seconds: float
    detail: str


def build(corpus: Path, graph: Path, jobs: int, *extra: str) -> Graph:
    """`kg build` of the corpus into `graph`, timed as a process, with the graph's paper and triple counts."""
    for old in graph.parent.glob(graph.stem + "*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    start = time.perf_counter()
    done = subprocess.run([KG, "build", str(corpus), "-o", str(graph), "--no-render", "--jobs", str(jobs), *extra],
                          capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    papers = int(re.search(r"(\d+) papers", done.stdout).group(1))  # type: ignore[union-attr]
    return Graph(graph, seconds, papers, _triples(graph))


def _triples(graph: Path) -> int:
    """The graph's triples, counted in a process of its own: loaded here, the store's memory would stay with this
    process and with every child forked from it, whose peak memory (wait4) would then count it too."""
    count = "import sys, pyoxigraph as ox; s = ox.Store(); s.bulk_load(path=sys.argv[1], format=ox.RdfFormat.TURTLE); print(len(s))"
    return int(subprocess.run([sys.executable, "-c", count, str(graph)], capture_output=True, text=True, check=True).stdout)


def first_ad_hoc_query(graph: Graph) -> list[Timed]:
    """`kg query` with hand-written SPARQL, the first after the build (then a second one)."""
    out = []
    for name in ("first ad-hoc query", "second ad-hoc query"):
        start = time.perf_counter()
        done = subprocess.run([KG, "query", "-", "--graph", str(graph.path), "-f", "csv"], input=PAPERS,
                              capture_output=True, text=True, check=True)
        rows = done.stdout.strip().splitlines()[1:]
        out.append(Timed(name, time.perf_counter() - start, f"{len(rows)} row, {rows[0]} papers"))
    return out


def serve_first_answer(graph: Graph) -> list[Timed]:
    """`kg serve` from its start until it answers its first request, in memory (the default) and --on-disk."""
    out = []
    for mode in ("--memory", "--on-disk"):
        for query, label in ((PAPERS, "ad-hoc"), (None, "named top-concepts")):
            start = time.perf_counter()
            server = subprocess.Popen([KG, "serve", str(graph.path), "--port", "0", mode], stderr=subprocess.PIPE, text=True,
                                      preexec_fn=_ctrl_c_default)
            try:
                assert server.stderr is not None
                port = None
                for line in server.stderr:
                    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
                    if found:
                        port = int(found.group(1))
                        break
                if port is None:
                    raise SystemExit(f"kg serve {mode} did not start")
                if query is not None:
                    url = f"http://127.0.0.1:{port}/sparql?" + urllib.parse.urlencode({"query": query, "format": "csv"})
                else:
                    url = f"http://127.0.0.1:{port}/queries/top-concepts?format=csv"
                with urllib.request.urlopen(url, timeout=600) as reply:
                    rows = reply.read().decode().strip().splitlines()[1:]
                seconds = time.perf_counter() - start
            finally:
                server.send_signal(signal.SIGINT)  # Ctrl-C: the server stops its workers and removes its links
                server.wait(60)
            out.append(Timed(f"kg serve {mode}, start to first {label} answer", seconds, f"{len(rows)} rows, first {rows[0]}"))
    return out


def first_query_without_store(graph: Graph) -> list[Timed]:
    """The first ad-hoc query when the build made no store: it loads the graph into the store first."""
    from kg.sparql.store import store_dir

    shutil.rmtree(store_dir(graph.path))
    (first, _) = first_ad_hoc_query(graph)
    return [Timed("first ad-hoc query with no store (it makes the store)", first.seconds, first.detail)]


def _peak(cmd: list[str]) -> tuple[float, float, str]:
    """Run a process; its seconds, its peak resident memory in MB (from wait4) and its standard output."""
    import os

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return seconds, usage.ru_maxrss / 1024, out


def analyze_graph(graph: Graph) -> list[Timed]:
    """`kg analyze` of the graph into a copy (the graph itself is left for the other measures)."""
    out = graph.path.with_name("analysed.ttl")
    seconds, peak, said = _peak([KG, "analyze", str(graph.path), "-o", str(out)])
    summary = " ".join(line.strip() for line in said.splitlines()[1:3])
    return [Timed("kg analyze", seconds, f"peak {peak:.0f} MB; {summary}")]


def export_jsonld(graph: Graph) -> list[Timed]:
    """`kg export` of the graph to JSON-LD, streamed."""
    out = graph.path.with_name("graph.jsonld")
    out.unlink(missing_ok=True)
    seconds, peak, said = _peak([KG, "export", str(graph.path), "-o", str(out)])
    return [Timed("kg export to JSON-LD", seconds, f"peak {peak:.0f} MB; {said.strip()}")]


def _ctrl_c_default() -> None:
    """In the child: Ctrl-C ends it, also when this script runs in the background (where SIGINT is ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


MEASURES: list[Callable[[Graph], list[Timed]]] = [first_ad_hoc_query, serve_first_answer, analyze_graph, export_jsonld, first_query_without_store]


def report(graph: Graph, title: str) -> None:
    print(f"\n## {title}: kg build {graph.seconds:.1f} s ({graph.papers} papers, {graph.triples} triples)", flush=True)
    for measure in MEASURES:
        for t in measure(graph):
            print(f"{t.name}: {t.seconds:.2f} s = {t.seconds / graph.seconds:.3f}x the build ({t.detail})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--workdir", type=Path, default=Path("bench-second-day"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    graph = args.workdir / "graph.ttl"
    report(build(args.corpus, graph, args.jobs), "kg build (the store made with the graph)")


if __name__ == "__main__":
    main()
