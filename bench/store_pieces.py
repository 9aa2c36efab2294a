"""How the store's load costs with the way the file reaches pyoxigraph's bulk loader: parsed triples in batches (before
decision 0067), pieces of whole statements parsed in Rust (kg.graph.pieces) by size, strict or lenient, or one bulk
load of the whole file. Each variant loads a new persisted store in a process of its own; the variants interleave.

    python bench/store_pieces.py GRAPH [--runs 2] [VARIANT ...]

VARIANT: `batches` (BATCH triples a call), `pieces:MB` or `pieces:MB:lenient`, `whole`. Prints the CPU of the loads
(all threads) and of the compaction after them, the number of bulk-loader calls, the peak memory and the quads.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT = ["batches", "pieces:12", "pieces:12:lenient", "pieces:24", "whole"]


class _Counted:
    """A store whose bulk_extend calls are counted."""

    def __init__(self, store: object) -> None:
        self.store, self.calls = store, 0

    def bulk_extend(self, quads: object) -> None:
        self.calls += 1
        self.store.bulk_extend(quads)  # type: ignore[attr-defined]


def child(variant: str, graph: Path) -> None:
    """Load `graph` into a new store the `variant` way; print the costs as JSON."""
    import pyoxigraph as ox

    from kg.graph.pieces import Piece, pieces
    from kg.sparql import store as kgstore

    folder = tempfile.mkdtemp(prefix="store-pieces-")
    try:
        st = ox.Store(os.path.join(folder, "db"))
        calls, started = 0, time.process_time()
        kind, *rest = variant.split(":")
        if kind == "batches":
            counted = _Counted(st)
            kgstore._batches(counted, iter(kgstore.parse(graph, graphs=True)))
            calls = counted.calls
        elif kind == "whole":
            st.bulk_load(path=str(graph), format=ox.RdfFormat.TURTLE)
            calls = 1
        else:
            for piece in pieces(graph, True, int(rest[0]) << 20):
                assert isinstance(piece, Piece), "an unproven piece"
                st.bulk_load(input=piece.data, format=ox.RdfFormat.TURTLE, lenient=rest[1:] == ["lenient"])
                calls += 1
        loaded = time.process_time()
        st.optimize()
        st.flush()
        compacted = time.process_time()
        print(json.dumps({"load": loaded - started, "compact": compacted - loaded, "calls": calls,
                          "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "quads": len(st)}))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("variants", nargs="*", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.graph)
    print(f"{args.graph}: {args.graph.stat().st_size / 1e6:.1f} MB; load average {os.getloadavg()[0]:.1f}")
    print("| run | variant | calls | load CPU s | compaction CPU s | peak MB | quads | load average after |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for run in range(1, args.runs + 1):
        for variant in args.variants:
            done = subprocess.run([sys.executable, __file__, str(args.graph), "--child", variant], capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
            if done.returncode:
                raise SystemExit(done.stderr)
            got = json.loads(done.stdout)
            print(f"| {run} | {variant} | {got['calls']} | {got['load']:.1f} | {got['compact']:.1f} | {got['peak_mb']:.0f} "
                  f"| {got['quads']:,} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
