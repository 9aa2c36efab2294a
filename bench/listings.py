"""The two largest listings of issue #38 as `kg query` processes printing their table, against another checkout.

Usage: python bench/listings.py GRAPH [--against OTHER_PYTHON] [--runs 5]

Runs `python -m kg query search -p words=learning` and `kg query papers-by-concept -p concept="machine learning"`
on GRAPH (its query index made before, as `kg build` makes it) as whole processes, their table (the default output)
written to /dev/null and read through a pipe. With --against (the python of another checkout's environment), that
checkout's `kg` runs in turn with this one's (this, other, this, …), so that a drift of the machine's speed moves
both, and each pair's ratio is printed. Each figure is min / median / max of the runs: the CPU of the process (user
and system, from the kernel's accounting of the reaped child) and its wall time; the rows are the table's own count.
Both checkouts must print the same bytes: the run says so.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

LISTINGS = (("search", "words=learning"), ("papers-by-concept", "concept=machine learning"))


def once(python: str, name: str, param: str, graph: Path, pipe: bool) -> tuple[float, float, bytes]:
    """CPU and wall seconds of one `kg query` process, and what it printed (when read through a pipe)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([python, "-m", "kg", "query", name, "-p", param, "--graph", str(graph.resolve())], check=True, cwd="/",
                          stdout=subprocess.PIPE if pipe else subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # cwd: not this checkout's kg for the other
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout or b""


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--against", help="the python of another checkout's environment, run in turn with this one")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pythons = {"this": sys.executable, **({"other": args.against} if args.against else {})}
    print("| listing | output | rows | checkout | CPU s (min / median / max) | wall s (min / median / max) |")
    print("|---|---|---:|---|---|---|")
    ratios: list[str] = []
    for name, param in LISTINGS:
        printed = {who: once(python, name, param, args.graph, True)[2] for who, python in pythons.items()}  # warm-up
        rows = printed["this"].decode("utf-8").splitlines()[-1]
        same = len(set(printed.values())) == 1
        for pipe in (False, True):
            got: dict[str, list[tuple[float, float]]] = {who: [] for who in pythons}
            for _ in range(args.runs):
                for who, python in pythons.items():
                    cpu, wall, _ = once(python, name, param, args.graph, pipe)
                    got[who].append((cpu, wall))
            sink = "pipe" if pipe else "/dev/null"
            for who, runs in got.items():
                print(f"| {name} {param} | {sink} | {rows} | {who} | {spread([c for c, _ in runs])} | {spread([w for _, w in runs])} |")
            if "other" in got:
                cpu = [a[0] / b[0] for a, b in zip(got["this"], got["other"])]
                wall = [a[1] / b[1] for a, b in zip(got["this"], got["other"])]
                ratios.append(f"{name} to {sink}: this/other CPU {spread(cpu)}, wall {spread(wall)}; the same bytes: {same}")
    for line in ratios:
        print(line)


if __name__ == "__main__":
    main()
