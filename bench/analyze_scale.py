"""`kg analyze` against `kg build` of the same graph, each a whole process: wall and CPU time, peak RSS, counts.

Usage: .venv/bin/python bench/analyze_scale.py [--papers 21368 100000] [--corpus PATH] [--graph N=FILE.ttl ...] [--against DIR]

For each size N, in one run: a corpus of N papers (bench/bench.py's make_corpus: the real abstracts, then copies
with new ids and sentences rotated), `kg build CORPUS --no-render -o g.ttl`, then `kg analyze g.ttl -o a.ttl`.
`--graph N=FILE` analyses a graph built before instead of building one (its build is then not timed: a 100,000-paper
build takes minutes). `--against DIR` also runs the analysis with the kg of another checkout DIR (main, say), on the
same graph in the same run, so the two are compared at the same load. Peak RSS is the process's own (wait4's ru_maxrss); CPU time is user + system, which other work
on a shared machine does not stretch as it stretches the wall clock.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KG = [sys.executable, "-m", "kg"]


def make_corpus(source: Path, n: int, out: Path) -> Path:
    """The corpus repeated to `n` papers (bench/scale.py's, which takes it from bench/bench.py)."""
    from scale import make_corpus as made  # bench/ is the script's folder, first on sys.path

    return made(source, n, out)


def run(cmd: list[str], checkout: Path = ROOT) -> dict:
    """Run a command (`checkout`: whose kg) to its end: wall seconds, CPU seconds, peak RSS (MB) and its stdout."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000", "PYTHONPATH": str(checkout)}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=checkout, stdout=out, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # the process's own usage, peak RSS included
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            sys.exit(f"{' '.join(cmd)} failed:\n{err.read()[-2000:]}")
        return {"wall": seconds, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024, "output": out.read().strip()}


def counts(graph: Path) -> str:
    """Papers, concepts, subject links and co-occurring pairs of a graph, and its triples (from its query index)."""
    import sqlite3

    from kg.graph.index_file import index_path

    db = sqlite3.connect(index_path(graph))
    one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    papers = one("SELECT COUNT(DISTINCT s) FROM subject")
    concepts = one("SELECT COUNT(DISTINCT o) FROM subject")
    links = one("SELECT COUNT(*) FROM subject")
    pairs = one("SELECT COUNT(*) FROM pair")
    db.close()
    return (f"{papers:,} papers with subjects, {concepts:,} concepts (co-occurrence nodes), {pairs:,} concept pairs "
            f"(edges), {links:,} subject links (paper-concept edges)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, nargs="+", default=[21368, 100000])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/ml-abstracts.jsonl")
    parser.add_argument("--graph", action="append", default=[], help="N=FILE: analyse this graph of N papers, built before")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--against", type=Path, help="another checkout whose kg analyses the same graphs too (e.g. main's)")
    args = parser.parse_args()
    given = {int(k): Path(v) for k, v in (g.split("=", 1) for g in args.graph)}
    work = Path(tempfile.mkdtemp(prefix="kg-analyze-scale-", dir=args.workdir))
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    try:
        for n in args.papers:
            if n in given:
                graph, build = given[n], None
            else:
                corpus = make_corpus(args.corpus, n, work / f"papers-{n}.jsonl")
                graph = work / f"g{n}.ttl"
                build = run([*KG, "build", str(corpus), "--no-render", "--no-progress", "-o", str(graph)])
            analysed = work / f"a{n}.ttl"
            analysis = run([*KG, "analyze", str(graph), "-o", str(analysed)])
            print(f"\n{n:,} papers: {counts(graph)}; graph {graph.stat().st_size / 1e6:.0f} MB")
            if build is not None:
                print(f"  kg build:   {build['wall']:7.1f} s wall, {build['cpu']:7.1f} s CPU, peak RSS {build['rss']:6.0f} MB")
            print(f"  kg analyze: {analysis['wall']:7.1f} s wall, {analysis['cpu']:7.1f} s CPU, peak RSS {analysis['rss']:6.0f} MB "
                  f"(load average {os.getloadavg()[0]:.1f})")
            if build is not None:
                print(f"  analyze / build: {analysis['wall'] / build['wall']:.2f}x wall, {analysis['cpu'] / build['cpu']:.2f}x CPU")
            if args.against is not None:
                other = work / f"b{n}.ttl"
                before = run([*KG, "analyze", str(graph), "-o", str(other)], args.against.resolve())
                same = other.read_bytes() == analysed.read_bytes()
                print(f"  kg analyze of {args.against}: {before['wall']:7.1f} s wall, {before['cpu']:7.1f} s CPU, peak RSS "
                      f"{before['rss']:6.0f} MB (load average {os.getloadavg()[0]:.1f}); this / that: {analysis['cpu'] / before['cpu']:.2f}x CPU, "
                      f"{analysis['wall'] / before['wall']:.2f}x wall; the same bytes: {same}")
                other.unlink()
                other.with_name(other.stem + ".kg-query.sqlite").unlink(missing_ok=True)
            print("  " + analysis["output"].replace("\n", "\n  "))
            analysed.unlink()
            analysed.with_name(analysed.stem + ".kg-query.sqlite").unlink(missing_ok=True)
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
