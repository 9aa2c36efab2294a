"""Time every named query on one graph: in its persisted store (store opened once) and as `kg query` processes.

    python bench/queries.py GRAPH.ttl [--repeat 3] [--only NAME ...] [--no-process]

The first paper of the graph (by identifier) is the `paper` parameter; the other parameters are the
ones bench/bench.py uses. Prints the median of the repeats, and the row count of each query.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench import KG, params_for, run_process  # noqa: E402


def first_paper(store) -> str:
    """An identifier of some paper of the graph (the smallest, so runs agree)."""
    answer = store.query("PREFIX dcterms: <http://purl.org/dc/terms/> SELECT (MIN(?i) AS ?id) WHERE { ?p dcterms:identifier ?i }")
    return next(iter(answer))[0].value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--no-process", action="store_true", help="time only in the store")
    args = parser.parse_args()
    from kg.query import catalog, resolve, run_store
    from kg.store import ensure_store, fresh_folder, open_store

    t = time.perf_counter()
    ensure_store(args.graph)
    print(f"store ready in {time.perf_counter() - t:.2f} s")
    store = open_store(args.graph)
    paper = first_paper(store)
    names = args.only or sorted(catalog())
    print(f"{'query':<22}{'rows':>7}{'in store':>10}{'kg query process':>18}")
    for name in names:
        params = params_for(name, paper)
        times, rows = [], 0
        for _ in range(args.repeat):
            t = time.perf_counter()
            res = run_store(store, resolve(name), params, folder=fresh_folder(args.graph))
            times.append(time.perf_counter() - t)
            rows = len(res.rows) or len(res.triples)
        proc = "-"
        if not args.no_process:
            argv = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
            proc = f"{statistics.median(run_process([*KG, 'query', name, '--graph', str(args.graph.resolve()), *argv])[0] for _ in range(args.repeat)):.2f}"
        print(f"{name:<22}{rows:>7}{statistics.median(times):>10.2f}{proc:>18}", flush=True)


if __name__ == "__main__":
    main()
