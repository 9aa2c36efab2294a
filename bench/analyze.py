"""Time `kg analyze` and `kg report` on the first N papers of a JSONL corpus.

Usage: .venv/bin/python bench/analyze.py [N] [--corpus PATH] [--scheme FILE.ttl ...]
(default: 2,000 papers of ../shared/corpora/ml-abstracts.jsonl with the bundled scheme).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from itertools import islice
from pathlib import Path

import kg
from kg.views.analyze import compute
from kg.views.network import to_networkx


def main() -> None:
    """Build once, then time each analytics step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="?", default=2000)
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared/corpora/ml-abstracts.jsonl")
    parser.add_argument("--scheme", type=Path, action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        papers = folder / "papers.jsonl"
        with args.corpus.open(encoding="utf-8") as src:
            papers.write_text("".join(islice(src, args.n)), encoding="utf-8")
        started = time.perf_counter()
        built = kg.build([papers], schemes=args.scheme)
        graph = kg.write(built, folder / "graph.ttl")
        s = built.summary()
        print(f"build: {time.perf_counter() - started:.1f} s — {s['papers']} papers, {s['concepts']} concepts, {s['links']} subject links")
        for label, step in [
            ("views (papers + concepts)", lambda: (to_networkx(graph, "papers"), to_networkx(graph, "concepts"))),
            ("analysis, in memory", lambda: compute(graph)),
            ("kg analyze (read, analyse, write)", lambda: kg.analyze(graph, folder / "analysed.ttl")),
            ("kg report", lambda: kg.report(folder / "analysed.ttl", folder / "report.html")),
            ("GraphML export (papers view)", lambda: kg.export(graph, folder / "graph.graphml")),
        ]:
            started, cpu = time.perf_counter(), time.process_time()
            result = step()
            # CPU time beside wall time: other processes on a shared machine stretch the wall clock.
            print(f"{label}: {time.perf_counter() - started:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")
            if label.startswith("analysis"):
                print(f"  {result.summary()}")
        grown = (folder / "analysed.ttl").stat().st_size / graph.stat().st_size
        print(f"analysed graph: {grown:.2f}× the size of the built graph")


if __name__ == "__main__":
    main()
