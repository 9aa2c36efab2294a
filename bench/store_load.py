"""The SPARQL store's load alone: `ensure_store` of a graph file in a process of its own (as `kg build` runs it beside
the build), its CPU (all threads), wall time and peak memory, this checkout against another (e.g. main), interleaved.

    python bench/store_load.py GRAPH [--against /work/main] [--runs 2] [--copies 4]

Each run loads a hard link of GRAPH in a new folder (the store is made beside it); the quads of the store are counted
afterwards, untimed. Build the 21k graph with `kg build CORPUS -o GRAPH --no-store --no-render`. With --copies N the
graph loaded is N copies of GRAPH's statements, the papers and annotations of each copy named apart (paper:cK-...,
ann:cK-...; the scheme, authors and venues shared): a larger corpus's graph, to see whether the loader's memory grows.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOAD = "import sys\nfrom kg.sparql.store import ensure_store\nprint(ensure_store(sys.argv[1]))\n"


def load(checkout: Path, graph: Path) -> dict:
    """Load a fresh store of `graph` with the kg of `checkout`; its costs and the store's quads."""
    import pyoxigraph as ox

    python = checkout / ".venv" / "bin" / "python"
    folder = Path(tempfile.mkdtemp(prefix="store-load-"))
    try:
        linked = folder / graph.name
        os.link(graph, linked)
        started = time.perf_counter()
        child = subprocess.Popen([str(python if python.exists() else sys.executable), "-c", LOAD, str(linked)],
                                 stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(checkout)})
        assert child.stdout is not None
        out = child.stdout.read().decode().strip()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        if status != 0:
            raise SystemExit(f"{checkout}: the load failed ({status})")
        quads = len(ox.Store.read_only(str(Path(out) / "db")))
        return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "peak_mb": usage.ru_maxrss / 1024, "quads": quads}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def copies(graph: Path, n: int, out: Path) -> Path:
    """N copies of a kg Turtle file's statements after its header, each copy's papers and annotations renamed."""
    data = graph.read_bytes()
    header = re.match(rb"(?:@prefix [^\n]*\n)*", data).group()  # type: ignore[union-attr]  # kg's writer: one a line
    body = data[len(header):]
    with out.open("wb") as stream:
        stream.write(header + body)
        for k in range(1, n):
            stream.write(body.replace(b"paper:", f"paper:c{k}-".encode()).replace(b"ann:", f"ann:c{k}-".encode()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--against", type=Path, help="another checkout of kg (its .venv's python when it has one)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--copies", type=int, default=1, help="load N renamed copies of the graph's statements")
    args = parser.parse_args()
    if args.copies > 1:
        args.graph = copies(args.graph, args.copies, args.graph.with_name(f"{args.graph.stem}-x{args.copies}.ttl"))
    trees = [("this", ROOT)] + ([(str(args.against), args.against.resolve())] if args.against else [])
    print(f"{args.graph}: {args.graph.stat().st_size / 1e6:.1f} MB; load average {os.getloadavg()[0]:.1f}")
    print("| run | tree | CPU s | wall s | peak MB | quads | load average after |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for run in range(1, args.runs + 1):
        for name, checkout in trees:
            got = load(checkout, args.graph)
            print(f"| {run} | {name} | {got['cpu']:.1f} | {got['wall']:.1f} | {got['peak_mb']:.0f} | {got['quads']:,} "
                  f"| {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
