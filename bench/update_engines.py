"""`kg build --update` of one graph on the local engine and on Dask, with changed abstracts and new papers, in one run.

    python bench/update_engines.py [--papers 2000] [--changed 5] [--new 20] [--jobs 2]

The first PAPERS papers of the corpus are built once on each engine (a graph file; a shard folder on a LocalCluster of
JOBS workers; both keep copies of one paper under other ids apart, as a cluster build does). Then each is updated, as a whole process, with the same inputs: the PAPERS papers with CHANGED of their
abstracts changed, and NEW papers more; and, for reference, the Dask update with the NEW papers only (no shard written
anew). Each line gives wall seconds, CPU seconds (the process and the children it waited for: the cluster's workers)
and peak RSS; the last lines check that both engines' graphs hold the same papers with the same abstracts, and the same
triples.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KG = [sys.executable, "-m", "kg"]
DCTERMS = "http://purl.org/dc/terms/"


def run(cmd: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system, with reaped children), peak RSS in MB and stdout of a command."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{stderr}{stdout}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout


def abstracts(triples: list) -> dict[str, str]:
    ids = {t.subject.value: t.object.value for t in triples if t.predicate.value == DCTERMS + "identifier"}
    return {ids[t.subject.value]: t.object.value for t in triples if t.predicate.value == DCTERMS + "abstract"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora" / "ml-abstracts.jsonl")
    parser.add_argument("--papers", type=int, default=2000)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--new", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    d = Path(tempfile.mkdtemp(prefix="kg-update-engines-"))
    with args.corpus.open(encoding="utf-8") as src:
        lines = [line for _, line in zip(range(args.papers + args.new), src)]
    records = [json.loads(line) for line in lines]
    step = max(1, args.papers // max(1, args.changed))
    for i in range(0, args.papers, step)[: args.changed]:
        records[i]["abstract"] = "We revisit this study with reinforcement learning from human feedback. " + records[i]["abstract"]
    old, changed, added = d / "old.jsonl", d / "changed.jsonl", d / "added.jsonl"
    old.write_text("".join(lines[: args.papers]), encoding="utf-8")
    changed.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    added.write_text("".join(lines), encoding="utf-8")
    print(f"{args.papers:,} papers, updated with {args.changed} changed abstracts and {args.new} new papers; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    local, folder = d / "local.ttl", d / "shards"
    dask = [*KG, "build", "--engine", "dask", "--jobs", str(args.jobs)]
    # The local engine keeps copies of one paper under other ids apart too, as the cluster build does (decision 0053).
    for name, cmd in (("local build", [*KG, "build", str(old), "-o", str(local), "--no-render", "--no-store", "--keep-duplicates"]),
                      ("dask build", [*dask, str(old), "-o", str(folder)])):
        wall, cpu, peak, _ = run(cmd)
        print(f"{name:<34} {wall:7.1f} s wall {cpu:7.1f} s CPU {peak:6.0f} MB")
    shutil.copytree(folder, d / "shards-added")
    rows = (("local update (changed + new)", [*KG, "build", "--update", str(local), str(changed), "--no-render", "--no-store", "--keep-duplicates"]),
            ("dask update (changed + new)", [*dask, "--update", str(folder), str(changed)]),
            ("dask update (new only)", [*dask, "--update", str(d / "shards-added"), str(added)]))
    for name, cmd in rows:
        wall, cpu, peak, out = run(cmd)
        said = next((line for line in out.splitlines() if "added" in line or "up to date" in line), "")
        print(f"{name:<34} {wall:7.1f} s wall {cpu:7.1f} s CPU {peak:6.0f} MB   {said}")
    from kg.graph import shards
    from kg.graph.files import read_triples

    here, there = list(read_triples(local)), [t for f in shards.files(folder) for t in read_triples(f)]
    print(f"papers: local {len(abstracts(here)):,}, dask {len(abstracts(there)):,}; same papers and abstracts: {abstracts(here) == abstracts(there)}")
    print(f"triples: local {len(here):,}, dask {len({str(t) for t in there}):,} distinct; same triples: "
          f"{ {str(t) for t in here} == {str(t) for t in there} }")
    shutil.rmtree(d)


if __name__ == "__main__":
    main()
