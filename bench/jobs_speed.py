"""`kg build --jobs 1` against `--jobs 2`, as whole processes interleaved in one run, with where the CPU time went.

    python bench/jobs_speed.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers 5000] [--repeat 3]

Each build runs in a fresh interpreter that reports its wall time, its own CPU time (the parent: reading,
making the triples, the query index, writing) and its workers' CPU time (extraction). On a busy machine the wall
times mostly measure the load; the CPU split does not: with `--jobs 2` the wall time of an idle 2-core machine
is about the larger of the parent's CPU time and half the total. Ends by comparing the graphs' bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(corpus: str, out: str, jobs: str) -> None:
    from kg.cli import cli

    t = time.perf_counter()
    cli.main(["build", corpus, "-o", out, "--no-render", "--no-progress", "--jobs", jobs], standalone_mode=False)
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall": time.perf_counter() - t, "parent": own.ru_utime + own.ru_stime, "workers": workers.ru_utime + workers.ru_stime}))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl")
    parser.add_argument("--papers", type=int, default=5000, help="the first N records (0: all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    d = Path(tempfile.mkdtemp(prefix="kg-jobs-bench-"))
    corpus = d / "corpus.jsonl"
    with args.corpus.open(encoding="utf-8") as source, corpus.open("w", encoding="utf-8") as out:
        for i, line in enumerate(source):
            if args.papers and i >= args.papers:
                break
            out.write(line)
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    runs: dict[str, list[dict]] = {"1": [], "2": []}
    print(f"{corpus.name}: first {args.papers or 'all'} records; {os.cpu_count()} cores")
    for r in range(1, args.repeat + 1):
        for jobs in ("1", "2"):
            load = os.getloadavg()[0]
            done = subprocess.run([sys.executable, __file__, "--child", str(corpus), str(d / f"jobs{jobs}.ttl"), jobs],
                                  capture_output=True, text=True, env=env, cwd=ROOT, check=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            runs[jobs].append(got)
            print(f"round {r} --jobs {jobs}: wall {got['wall']:.2f} s, parent CPU {got['parent']:.2f} s, "
                  f"workers CPU {got['workers']:.2f} s (load average before {load:.1f})")
    for jobs, found in runs.items():
        median = {k: statistics.median(x[k] for x in found) for k in ("wall", "parent", "workers")}
        print(f"--jobs {jobs} medians: wall {median['wall']:.2f} s, parent CPU {median['parent']:.2f} s, workers CPU {median['workers']:.2f} s")
    same = (d / "jobs1.ttl").read_bytes() == (d / "jobs2.ttl").read_bytes()
    print("graphs byte-identical" if same else "graphs DIFFER")


if __name__ == "__main__":
    main()
