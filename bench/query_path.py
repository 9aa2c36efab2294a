"""Time the query path through the Python API: kg.query (the CLI's path) and run_store (kg serve's), on one graph.

    nice -n 10 python bench/query_path.py GRAPH [--reps 20] [--rounds 2] [--against SRC]

GRAPH must have its query index and SPARQL store (`kg build` writes both). Each case runs --reps times in one
process after one unmeasured run (the index's pages and the store opened); the median and the fastest time are
printed beside the rows returned. The serve cases use run_store with the store and a connection to the index
opened once, as a kg serve worker holds them.

With --against SRC (a checkout of another version of kg, e.g. `git archive main | tar -x -C SRC`), the two
versions run alternately in fresh processes, --rounds times each, and the table gives both medians (the median
over the rounds' medians) and their ratio (this checkout / SRC): one run, so the other work on the machine
falls on both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CONCEPT = "reinforcement learning"
ADHOC = "SELECT (COUNT(*) AS ?n) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }"


def cases(graph: Path, store: bool = True) -> list[tuple[str, str, dict[str, str]]]:
    """(entry, query, parameters): the entry is `query` (kg.query) or `serve` (run_store with the index kept open)."""
    import kg

    rows = kg.query("papers-by-concept", {"concept": CONCEPT}, graph=graph, timeout=None)
    paper = str(rows.rows[0][rows.variables.index("identifier")].value)
    named = [("top-concepts", {}), ("papers-by-concept", {"concept": CONCEPT}), ("search", {"words": "human feedback"}),
             ("concepts-of-paper", {"paper": paper}), ("co-occurrence", {"min": "20"}),
             ("papers-by-concept", {"concept": "machine learning"}), ("search", {"words": "learning"})]  # the largest listings
    engine = [("paper-graph", {"paper": paper}), (ADHOC, {})] if store else []
    return [("query", n, p) for n, p in named + engine] + [("serve", n, p) for n, p in named]


def measure(graph: Path, reps: int, index_only: bool = False) -> dict[str, list]:
    """Child: each case once unmeasured, then `reps` times; {case: [times..., rows]}."""
    import pyoxigraph as ox

    import kg
    from kg.sparql.run import resolve, run_store
    from kg.sparql.store import open_store

    try:
        from kg.graph.index_file import connect, fresh
    except ImportError:  # a checkout from before the query index's file moved to kg.graph
        from kg.sparql.index import connect, fresh  # type: ignore[attr-defined,no-redef]

    index = fresh(graph)
    if index is None:
        raise SystemExit(f"{graph} has no fresh query index: run kg build first")
    db, store = connect(index), ox.Store() if index_only else open_store(graph)
    out: dict[str, list] = {}
    for entry, name, params in cases(graph, store=not index_only):
        once: Callable[[], Any] = (partial(kg.query, name, params, graph=graph, timeout=None) if entry == "query" else
                                   partial(run_store, store, resolve(name), params, max_rows=10_000, index=db))
        res = once()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            res = once()
            times.append(time.perf_counter() - t)
        rows = len(res.rows) if res.kind == "select" else len(res.triples)
        out[f"{entry} {name if len(name) < 30 else 'ad-hoc COUNT'} {json.dumps(params)}"] = [*times, rows]
    return out


def child(src: Path, graph: Path, reps: int, index_only: bool) -> dict[str, list]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, __file__, str(graph), "--reps", str(reps), "--child", *(["--index-only"] if index_only else [])],
                          env=env, cwd=src,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{src}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", type=Path)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--index-only", action="store_true", help="only the queries the query index answers (a graph built with --no-store)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    graph = args.graph.resolve()
    if args.child:
        print(json.dumps(measure(graph, args.reps, args.index_only)))
        return
    sources = [ROOT] + ([args.against.resolve()] if args.against else [])
    runs: dict[Path, list[dict[str, list]]] = {s: [] for s in sources}
    for _ in range(args.rounds):
        for src in sources:
            runs[src].append(child(src, graph, args.reps, args.index_only))
    print(f"graph {graph.name}, {args.reps} repetitions x {args.rounds} rounds, load average {os.getloadavg()[0]:.2f}")
    head = "| case | rows | median ms | fastest ms |" + (" before (SRC) median ms | rows | ratio |" if args.against else "")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    def stats(src: Path, case: str) -> tuple[float, float, int]:
        medians = [statistics.median(r[case][:-1]) for r in runs[src]]
        return statistics.median(medians), min(min(r[case][:-1]) for r in runs[src]), runs[src][0][case][-1]

    for case in runs[ROOT][0]:
        med, best, rows = stats(ROOT, case)
        line = f"| {case} | {rows} | {med * 1e3:.2f} | {best * 1e3:.2f} |"
        if args.against:
            bmed, _, brows = stats(sources[1], case)
            line += f" {bmed * 1e3:.2f} | {brows} | {med / bmed:.2f} |"
        print(line)


if __name__ == "__main__":
    main()
