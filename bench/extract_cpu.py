"""Extraction CPU of this checkout against another (e.g. main), interleaved runs on the same abstracts.

Usage: python bench/extract_cpu.py OTHER_CHECKOUT [CORPUS.jsonl] [N] [--runs R]
Each run is a fresh process (`sys.executable`, the checkout first on PYTHONPATH) that builds the default extractor
and extracts the first N papers of the corpus (default 6,000) in one call; it reports the process CPU time of that
call alone (not the set-up), its wall time, the set-up's CPU, the peak memory and the subjects found. The runs
alternate other, this, other, this, … so the two meet the same load; each pair's ratio is printed. The machine's
load average is printed beside them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = HERE.parent / "shared" / "corpora" / "ml-abstracts.jsonl"

_RUN = """
import json, resource, sys, time
from kg.extract import PhraseExtractor, ingest, scheme
papers = ingest.read([sys.argv[1]], skip_bad=True).papers[: int(sys.argv[2])]
t0 = time.process_time()
extractor = PhraseExtractor(scheme.load())
extractor.scorer
setup = time.process_time() - t0
t0, w0 = time.process_time(), time.perf_counter()
out = extractor(papers)
cpu, wall = time.process_time() - t0, time.perf_counter() - w0
subjects = sum(link.subject for e in out for link in e.links)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"cpu": cpu, "wall": wall, "setup": setup, "subjects": subjects, "papers": len(papers), "peak_mb": rss}))
"""


def run(checkout: Path, corpus: Path, n: int) -> dict:
    """One fresh process of `checkout` extracting the first n papers of the corpus."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", _RUN, str(corpus), str(n)], env=env, cwd=checkout, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{checkout}: extraction failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 2
    args = [a for i, a in enumerate(argv) if a != "--runs" and (i == 0 or argv[i - 1] != "--runs")]
    if not args:
        raise SystemExit(__doc__)
    other = Path(args[0]).resolve()
    corpus = Path(args[1]).resolve() if len(args) > 1 else DEFAULT_CORPUS
    n = int(args[2]) if len(args) > 2 else 6000
    print(f"{other} (other) against {HERE} (this), {n} papers of {corpus.name}, {runs} interleaved pairs")
    print("| run | checkout | extraction CPU s | wall s | set-up CPU s | peak MB | subjects | this / other CPU | load average |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in range(1, runs + 1):
        base = run(other, corpus, n)
        mine = run(HERE, corpus, n)
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        for name, got, ratio in (("other", base, ""), ("this", mine, f"{mine['cpu'] / base['cpu']:.3f}x")):
            print(f"| {r} | {name} | {got['cpu']:.2f} | {got['wall']:.2f} | {got['setup']:.2f} | {got['peak_mb']:.0f} | {got['subjects']} | {ratio} | {load} |")


if __name__ == "__main__":
    main(sys.argv[1:])
