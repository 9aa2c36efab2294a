"""`kg export` (JSON-LD and the CSV tables) against `kg build` of the same graph, as whole processes, in one run.

    python bench/export_speed.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers N] [--repeat 1]

The graph is built by `kg build CORPUS --no-render` (timed: the reference), then exported by
`kg export GRAPH -o x.jsonld`, `-o links.csv` and `-o concepts.csv --table concepts`, each a whole
process; with --repeat the rounds are interleaved so the machine's load weighs on all alike. Prints each
process's wall time, its ratio to the build of the same round, its peak RSS, and the triples or rows
written, then checks that the JSON-LD parses back (pyoxigraph) to as many triples as the graph holds.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import KG, run_process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora" / "ml-abstracts.jsonl")
    parser.add_argument("--papers", type=int, help="only the first N records [all]")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="where the graph and exports go [a temporary folder]")
    args = parser.parse_args()
    d = args.workdir or Path(tempfile.mkdtemp(prefix="kg-export-bench-"))
    d.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus.resolve()
    if args.papers:
        corpus = d / "corpus.jsonl"
        with args.corpus.open(encoding="utf-8") as source, corpus.open("w", encoding="utf-8") as out:
            for i, line in enumerate(source):
                if i >= args.papers:
                    break
                out.write(line)
    graph = d / "graph.ttl"
    print(f"{corpus.name}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{'round':>5}  {'process':<44} {'seconds':>8} {'× build':>8} {'peak MB':>8}  written")
    for r in range(1, args.repeat + 1):
        wall, peak, out = run_process([*KG, "build", str(corpus), "-o", str(graph), "--no-render", "--no-progress"])
        build = wall
        papers = re.search(r"(\d+) papers", out)
        print(f"{r:>5}  {'kg build --no-render':<44} {wall:>8.2f} {1:>8.2f} {peak:>8.0f}  {papers.group(0) if papers else ''}")
        for name, extra in (("x.jsonld", []), ("links.csv", []), ("concepts.csv", ["--table", "concepts"])):
            target = d / name
            wall, peak, out = run_process([*KG, "export", str(graph), "-o", str(target), *extra])
            written = re.search(r"\(([\d,]+ \w+)\)", out)
            label = " ".join(["kg export -o", name, *extra])
            print(f"{r:>5}  {label:<44} {wall:>8.2f} {wall / build:>8.2f} {peak:>8.0f}  {written.group(1) if written else out.strip()}")
    import pyoxigraph as ox

    back = sum(1 for _ in ox.parse(path=str(d / "x.jsonld"), format=ox.RdfFormat.JSON_LD))
    held = sum(1 for _ in ox.parse(path=str(graph), format=ox.RdfFormat.TURTLE))
    print(f"JSON-LD parsed back: {back:,} triples; the graph: {held:,} ({'same count' if back == held else 'DIFFERENT'})")


if __name__ == "__main__":
    main()
