"""Time the one reader of a graph (kg.graph.facts.of_triples) and the pages' view of it (kg.views.scene.Scene) on a graph file.

Usage: .venv/bin/python bench/graph_reader.py GRAPH [--repeat 3]
Prints the triple count and the best of `repeat` runs of each (the triples parsed once, beforehand).
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path
from typing import Callable

from kg.graph.facts import of_triples
from kg.graph.files import read_triples
from kg.views.scene import Scene


def best(step: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    triples = read_triples(args.graph)
    facts = best(lambda: of_triples(triples), args.repeat)
    scene = best(lambda: Scene(triples), args.repeat)
    print(f"{len(triples):,} triples: of_triples {facts:.2f} s, Scene {scene:.2f} s (best of {args.repeat})")


if __name__ == "__main__":
    main()
