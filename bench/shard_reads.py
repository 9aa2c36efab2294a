"""Reading a shard folder against reading the graph file of the same papers: parse, stamp, index, store, queries.

    nice -n 10 python bench/shard_reads.py GRAPH FOLDER [--reps 5]

GRAPH is the file `kg build` writes of some papers, FOLDER the folder `kg build --engine dask` writes of the same
papers. Each step runs on both, alternately, --reps times in this one process (so the other work on the machine
falls on both); the median seconds of each are printed beside the triples or rows, and their ratio (folder / file).
The index and store steps write to a temporary folder (copies of neither input are changed): the index is made
from a parse (GraphFile.remake_index on a link to the graph), the store bulk-loaded and compacted as kg.sparql.store
does. The query steps run kg.query on the graph itself (its index and store made first, once, unmeasured).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def _linked(graph: Path, where: Path) -> Path:
    """The graph linked into `where` (a folder: its manifest and shards), so derived files land there."""
    target = where / graph.name
    if graph.is_dir():
        target.mkdir()
        for item in graph.iterdir():
            os.link(item, target / item.name)
    else:
        os.link(graph, target)
    return target


def steps(graph: Path, scratch: Path) -> list[tuple[str, Callable[[], Any]]]:
    """(name, run) of each step on one graph; run returns the triples or rows it saw."""
    import pyoxigraph as ox

    import kg
    from kg.graph import files, stamp
    from kg.graph.handle import GraphFile
    from kg.sparql.store import _load

    linked = _linked(graph, scratch)

    def parse() -> int:
        return sum(1 for _ in files.parse(graph))

    def stamped() -> int:
        stamp.stamp(graph)
        return 1

    def index() -> int:
        made = GraphFile(linked).remake_index("bench")
        assert made is not None
        return 1

    def store() -> int:
        folder = Path(tempfile.mkdtemp(dir=scratch))
        try:
            s = ox.Store(str(folder / "db"))
            _load(s, linked, compact=True)
            return len(s)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def named() -> int:
        return len(kg.query("top-concepts", graph=graph, timeout=None).rows)

    def by_concept() -> int:
        return len(kg.query("papers-by-concept", {"concept": "reinforcement learning"}, graph=graph, timeout=None).rows)

    def adhoc() -> int:
        return int(kg.query(COUNT, graph=graph, timeout=None).rows[0][0].value)

    return [("parse (triples)", parse), ("stamp", stamped), ("index from a parse", index), ("store: bulk load + compact (triples)", store),
            ("top-concepts (rows)", named), ("papers-by-concept RL (rows)", by_concept), ("ad-hoc COUNT (triples)", adhoc)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    import kg

    for g in (args.graph, args.folder):  # the index and store of each, made once, outside the measurement
        kg.query("top-concepts", graph=g, timeout=None)
        kg.query(COUNT, graph=g, timeout=None)
    with tempfile.TemporaryDirectory(dir=args.graph.parent) as a, tempfile.TemporaryDirectory(dir=args.folder.parent) as b:
        pairs = list(zip(steps(args.graph, Path(a)), steps(args.folder, Path(b))))
        print(f"{'step':40} {'file: n':>10} {'s':>8} {'folder: n':>10} {'s':>8} {'folder/file':>11}")
        for (name, on_file), (_, on_folder) in pairs:
            times: dict[str, list[float]] = {"file": [], "folder": []}
            seen: dict[str, Any] = {}
            for _ in range(args.reps):
                for which, run in (("file", on_file), ("folder", on_folder)):
                    start = time.perf_counter()
                    seen[which] = run()
                    times[which].append(time.perf_counter() - start)
            f, d = statistics.median(times["file"]), statistics.median(times["folder"])
            print(f"{name:40} {seen['file']:>10,} {f:>8.3f} {seen['folder']:>10,} {d:>8.3f} {d / f:>10.2f}x", flush=True)


if __name__ == "__main__":
    main()
