"""`kg export` (JSON-LD and the CSV tables) against `kg build` of the same graph, as whole processes, in one run.

    python bench/export_speed.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers N] [--repeat 1]
    python bench/export_speed.py --graph GRAPH --tables [--source OLD_CHECKOUT --source .] [--repeat 3]

The graph is built by `kg build CORPUS --no-render` (timed: the reference), then exported by
`kg export GRAPH -o x.jsonld`, `-o links.csv` and `-o concepts.csv --table concepts`, each a whole
process; with --repeat the rounds are interleaved so the machine's load weighs on all alike. Prints each
process's wall time, its ratio to the build of the same round, its peak RSS, and the triples or rows
written, then checks that the JSON-LD parses back (pyoxigraph) to as many triples as the graph holds.

`--graph` exports a graph already built (no build, ratios to the first source); `--tables` the three CSV tables
only; `--source DIR` (repeatable) runs kg from that source tree (`python -m kg` in it), e.g. a `git archive` of another commit,
the sources alternating within each round, and checks that each table's bytes are the same from every source.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import KG, run_measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora" / "ml-abstracts.jsonl")
    parser.add_argument("--papers", type=int, help="only the first N records [all]")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="where the graph and exports go [a temporary folder]")
    parser.add_argument("--graph", type=Path, help="export this graph; build none")
    parser.add_argument("--tables", action="store_true", help="the CSV tables only (links, papers, concepts)")
    parser.add_argument("--source", type=Path, action="append", help="kg's source tree to run (repeatable) [this one]")
    args = parser.parse_args()
    d = args.workdir or Path(tempfile.mkdtemp(prefix="kg-export-bench-"))
    d.mkdir(parents=True, exist_ok=True)
    sources = [s.resolve() for s in args.source or [Path(__file__).resolve().parents[1]]]
    exports = [("links.csv", []), ("papers.csv", ["--table", "papers"]), ("concepts.csv", ["--table", "concepts"])]
    if not args.tables:
        exports = [("x.jsonld", []), exports[0], exports[2]]
    graph = args.graph.resolve() if args.graph else d / "graph.ttl"
    corpus = args.corpus.resolve()
    if args.papers and not args.graph:
        corpus = d / "corpus.jsonl"
        with args.corpus.open(encoding="utf-8") as source, corpus.open("w", encoding="utf-8") as out:
            for i, line in enumerate(source):
                if i >= args.papers:
                    break
                out.write(line)
    print(f"{graph if args.graph else corpus.name}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{'round':>5}  {'source':<12} {'process':<44} {'wall s':>7} {'CPU s':>7} {'× ref':>6} {'peak MB':>8}  written")
    outputs: dict[str, set[bytes]] = {}
    for r in range(1, args.repeat + 1):
        reference = None
        if not args.graph:
            wall, cpu, peak, out = run_measured([*KG, "build", str(corpus), "-o", str(graph), "--no-render", "--no-progress"])
            reference = cpu
            papers = re.search(r"(\d+) papers", out)
            print(f"{r:>5}  {'':<12} {'kg build --no-render':<44} {wall:>7.2f} {cpu:>7.2f} {1:>6.2f} {peak:>8.0f}  {papers.group(0) if papers else ''}")
        for name, extra in exports:
            firsts: float | None = reference
            for source in sources:
                target = d / f"{source.name}-{name}"
                wall, cpu, peak, out = run_measured([*KG, "export", str(graph), "-o", str(target), *extra], source)
                firsts = firsts or cpu
                outputs.setdefault(name, set()).add(target.read_bytes() if name.endswith(".csv") else b"")
                written = re.search(r"\(([\d,]+ \w+)\)", out)
                label = " ".join(["kg export -o", name, *extra])
                print(f"{r:>5}  {source.name[:12]:<12} {label:<44} {wall:>7.2f} {cpu:>7.2f} {cpu / firsts:>6.2f} {peak:>8.0f}  "
                      f"{written.group(1) if written else out.strip()}")
    if len(sources) > 1:
        print("tables from every source:", ", ".join(f"{n} {'the same bytes' if len(o) == 1 else 'DIFFERENT'}" for n, o in outputs.items()))
    if args.tables:
        return
    import pyoxigraph as ox

    back = sum(1 for _ in ox.parse(path=str(d / f"{sources[0].name}-x.jsonld"), format=ox.RdfFormat.JSON_LD))
    held = sum(1 for _ in ox.parse(path=str(graph), format=ox.RdfFormat.TURTLE))
    print(f"JSON-LD parsed back: {back:,} triples; the graph: {held:,} ({'same count' if back == held else 'DIFFERENT'})")


if __name__ == "__main__":
    main()
