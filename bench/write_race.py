"""`kg analyze` and `kg build --update` on one graph at once, as real processes: is any paper an update reported added lost?

Usage: python bench/write_race.py PAPERS.jsonl [--papers 2000] [--new 200] [--races 6] [--kg KG]
Builds a graph of the first --papers records (--no-render --no-store), then runs --races races, alternating which
command starts first (the other starts 0.5-3 s later, seeded), each on a fresh copy of the graph with its index. Prints
per race: the order, both exit codes and seconds, the papers the update said it added, the papers in the graph
after both, and how many of the added ones are missing. `--kg` runs another kg (e.g. one on PYTHONPATH of a checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _papers(graph: Path) -> set[str]:
    from kg.graph.files import read_triples
    from kg.graph.vocabulary import DCTERMS

    return {t.object.value for t in read_triples(graph) if t.predicate.value == DCTERMS + "identifier"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--papers", type=int, default=2000)
    parser.add_argument("--new", type=int, default=200)
    parser.add_argument("--races", type=int, default=6)
    parser.add_argument("--kg", default=f"{sys.executable} -m kg")
    args = parser.parse_args()
    kg = args.kg.split()
    work = Path(tempfile.mkdtemp(prefix="kg-write-race-"))
    try:
        with args.corpus.open(encoding="utf-8") as src:
            lines = [line for _, line in zip(range(args.papers + args.new), src)]
        (work / "old.jsonl").write_text("".join(lines[: args.papers]), encoding="utf-8")
        (work / "new.jsonl").write_text("".join(lines[args.papers :]), encoding="utf-8")
        base = work / "base.ttl"
        subprocess.run([*kg, "build", "--no-render", "--no-store", str(work / "old.jsonl"), "-o", str(base)], check=True,
                       capture_output=True)
        rng = random.Random(0)
        lost_total = 0
        for race in range(args.races):
            graph = work / f"race{race}.ttl"
            shutil.copy(base, graph)
            shutil.copy(base.with_name(f"{base.stem}.kg-query.sqlite"), graph.with_name(f"{graph.stem}.kg-query.sqlite"))
            analyze = [*kg, "analyze", str(graph)]
            update = [*kg, "build", "--no-render", "--no-store", "--update", str(graph), str(work / "new.jsonl")]
            first, second = (analyze, update) if race % 2 == 0 else (update, analyze)
            delay = rng.uniform(0.5, 3.0)
            start = time.monotonic()
            a = subprocess.Popen(first, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
            b = subprocess.Popen(second, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            outs = {id(first): a.communicate(), id(second): b.communicate()}
            codes = {id(first): a.returncode, id(second): b.returncode}
            seconds = time.monotonic() - start
            out, err = outs[id(update)]
            said = re.search(r"(\d+) papers added", out)
            added = int(said.group(1)) if said and codes[id(update)] == 0 else 0
            found = _papers(graph)
            new_ids = {json.loads(line)["id"] for line in lines[args.papers :]}
            missing = len(new_ids - found) if added else 0
            lost_total += missing
            print(f"race {race + 1}: {'analyze first' if first is analyze else 'update first'} (+{delay:.1f} s), "
                  f"analyze exit {codes[id(analyze)]}, update exit {codes[id(update)]}, update said {added} added, "
                  f"graph has {len(found)} papers, {missing} of the added missing, {seconds:.1f} s"
                  + (f"; update: {err.strip().splitlines()[-1]}" if codes[id(update)] else "")
                  + (f"; analyze: {outs[id(analyze)][1].strip().splitlines()[-1]}" if codes[id(analyze)] else ""), flush=True)
        print(f"papers reported added and lost, over {args.races} races: {lost_total}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    main()
