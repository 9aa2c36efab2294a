"""How long a `kg` command leaves a terminal silent, and what showing progress costs.

    python bench/progress.py GRAPH.ttl [PAPERS.jsonl] [--commands cost,query,serve,...]

1. Each slow command runs under a pseudo-terminal (stderr) as a user would run it; printed: the
   command's time, when the terminal first heard from it, and the longest silence on the terminal
   (with progress, about a second once a step is shown; with -q, the whole command). `kg serve` is
   stopped once it prints its address.
   Outputs go to a temporary folder; GRAPH is only read.
2. The cost of counting: writing and reading GRAPH's triples with progress off and on (drawn to
   /dev/null), alternately, best of 5.
"""

from __future__ import annotations

import io
import itertools
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def silences(args: list[str], cwd: Path, until: bytes | None = None) -> tuple[float, float, float, int]:
    """Run `kg ARGS` with stderr on a pseudo-terminal: (seconds in all, first output, longest silence, bytes shown).

    until: stop the command (Ctrl-C) once it has printed this (kg serve's address), and count up to there.
    """
    leader, follower = pty.openpty()
    stamps: list[tuple[float, int]] = []
    heard = threading.Event()

    def drain() -> None:
        said = b""
        try:
            while chunk := os.read(leader, 65536):
                stamps.append((time.monotonic(), len(chunk)))
                said = said[-200:] + chunk
                if until is not None and until in said:
                    heard.set()
        except OSError:
            pass

    reader = threading.Thread(target=drain)
    started = time.monotonic()
    reader.start()
    proc = subprocess.Popen([sys.executable, "-m", "kg", *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=follower, cwd=cwd)
    os.close(follower)
    if until is not None:
        while not heard.wait(1) and proc.poll() is None:
            pass
        ended = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait()
    else:
        proc.wait()
        ended = time.monotonic()
    reader.join(timeout=30)
    os.close(leader)
    times = [started, *(t for t, _ in stamps), ended]
    return ended - started, (stamps[0][0] - started) if stamps else float("nan"), max(b - a for a, b in itertools.pairwise(times)), sum(n for _, n in stamps)


def counting_cost(graph: Path) -> None:
    """Write and read the graph with progress off and on, alternately; best of 5 each."""
    from kg.core import progress
    from kg.graph import files

    triples = files.read_triples(graph)
    sink = open(os.devnull, "w")
    best: dict[tuple[str, bool], float] = {}
    for _ in range(5):
        for on in (False, True):
            progress.enable(on)
            stderr, sys.stderr = sys.stderr, sink
            try:
                t = time.perf_counter()
                files.write(triples, io.BytesIO(), "ttl")
                w = time.perf_counter() - t
                t = time.perf_counter()
                n = len(files.read_triples(graph))
                r = time.perf_counter() - t
            finally:
                sys.stderr = stderr
                progress.enable(False)
            best[("write", on)] = min(best.get(("write", on), w), w)
            best[("read", on)] = min(best.get(("read", on), r), r)
    for what in ("write", "read"):
        off, on_ = best[(what, False)], best[(what, True)]
        print(f"{what} {n} triples: progress off {off:.2f} s, on {on_:.2f} s (on/off {on_ / off:.3f})")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("papers", type=Path, nargs="?", help="also time `kg build` of these papers")
    parser.add_argument("--commands", default="cost,build,query,export,render,report,analyze,serve",
                        help="which measurements, comma-separated [all]")
    options = parser.parse_args()
    chosen = options.commands.split(",")
    graph = options.graph.resolve()
    if "cost" in chosen:
        counting_cost(graph)
    with tempfile.TemporaryDirectory(prefix="kg-progress-") as tmp:
        work = Path(tmp)
        shutil.copy(graph, work / "g.ttl")
        (work / "all.rq").write_text("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n", encoding="utf-8")
        runs = {
            "build": ["build", str(options.papers.resolve()) if options.papers else "", "-o", "built.ttl", "--no-render"],
            "query": ["query", "all.rq", "--graph", "g.ttl"],
            "export": ["export", "g.ttl", "-o", "g.jsonld"],
            "render": ["render", "g.ttl", "--view", "map", "--max-nodes", "0", "-o", "map.html"],
            "report": ["report", "g.ttl"],
            "analyze": ["analyze", "g.ttl", "-o", "analysed.ttl"],
            "serve": ["serve", "g.ttl", "--port", "0"],
        }
        for name, args in runs.items():  # with -q, or before kg.core.progress, the longest silence was the whole command
            if name not in chosen or (name == "build" and options.papers is None):
                continue
            total, first, longest, shown = silences(args, work, b"Ctrl-C to stop" if name == "serve" else None)
            print(f"kg {name}: {total:.1f} s{' to its address' if name == 'serve' else ''}, first output at {first:.1f} s, "
                  f"longest silence {longest:.1f} s, {shown} bytes shown", flush=True)


if __name__ == "__main__":
    main()
