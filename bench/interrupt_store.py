"""Ctrl-C while the SPARQL store of a graph is built for the first time: how long until kg exits.

Usage: python bench/interrupt_store.py GRAPH.ttl [--runs 20] [--busy 2]
Each run removes the graph's store, starts `kg query` with an ad-hoc SPARQL query (which builds the store),
sends SIGINT once the build is under way (a random 1-4 s in), and times the exit; `--busy N` keeps N other
processes spinning on the CPU meanwhile, as the issue measured it. It prints each run's seconds from SIGINT
to exit, the exit code, and whether a store folder was left behind.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


def _spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("graph", type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--busy", type=int, default=2)
    args = parser.parse_args()
    store = args.graph.with_name(f"{args.graph.stem}.oxigraph")
    kg = str(Path(sys.executable).with_name("kg"))
    busy = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    rng = random.Random(0)
    slow = 0
    try:
        for run in range(args.runs):
            shutil.rmtree(store, ignore_errors=True)
            proc = subprocess.Popen([kg, "query", "-", "--graph", str(args.graph)], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            assert proc.stdin is not None
            proc.stdin.write(b"SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
            proc.stdin.close()
            time.sleep(rng.uniform(1.0, 4.0))
            if proc.poll() is not None:
                print(f"run {run + 1}: finished before the signal (rc {proc.returncode}); a larger graph is needed")
                continue
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            rc = proc.wait()
            took = time.monotonic() - sent
            slow += took > 2.0
            print(f"run {run + 1}: exit {took:.2f} s after SIGINT, rc {rc}, store folder left: {store.exists()}")
    finally:
        for p in busy:
            p.terminate()
    print(f"{args.runs - slow} of {args.runs} runs exited within 2 s")


if __name__ == "__main__":
    main()
