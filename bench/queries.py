"""Benchmark the query side at scale: kg build, the query index against it, the first query, every named query.

    nice -n 10 python bench/queries.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers 100000] [--docs]

One run, in this order, each step a fresh process where it says so:
  1. a corpus of --papers (bench/bench.py's make_corpus: the real abstracts, then copies with new ids);
  2. `kg build CORPUS --no-render` (a process: wall time, peak RSS), which writes the graph and its
     query index (kg.sparql.index);
  3. the query index alone, written again from the graph's triples held in memory (what the build does
     after serializing): its time and size against the build's;
  4. `kg analyze` (a process), so that communities, related-concepts and similar-papers have rows;
  5. the first named query after that as a process (`kg query top-concepts`), and as a process on a
     copy of the graph with no index (it makes the index from a parse of the file first);
  6. every named query through the Python API (kg.query, one process, index already open once), each
     run twice, with its rows, and once more with kg serve's row cap (max_rows); paper-graph, the one query
     without SQL, runs in the engine and needs the SPARQL store, whose build is timed on its own.
With --docs the table goes into docs/performance.md between its `bench/queries.py` markers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KG = [sys.executable, "-m", "kg"]
PARAMS = {"concept": "reinforcement learning", "a": "reinforcement learning", "b": "deep learning",
          "words": "human feedback", "root": "machine learning"}
VARIANTS = {"search": [{"words": "learning"}, {"words": "reinforcement learning"}],
            "papers-by-concept": [{"concept": "machine learning"}]}
START, END = "<!-- bench/queries.py: start -->", "<!-- bench/queries.py: end -->"

sys.path.insert(0, str(ROOT / "bench"))
from scale import make_corpus  # noqa: E402  (one corpus maker: bench/bench.py, loaded by bench/scale.py)


def run(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a command, which must succeed."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=out, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status):
            out.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed:\n{out.read().decode()[-3000:]}")
    return wall, usage.ru_maxrss / 1024


def child(kind: str, *args: str) -> dict:
    result = subprocess.run([sys.executable, __file__, "--child", kind, *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode:
        raise SystemExit(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def index_alone(graph: str) -> dict:
    """Child: the query index written from the graph's triples in memory, as kg build does after serializing."""
    from kg.graph import index_writer
    from kg.graph.files import read_triples
    from kg.graph.stamp import stamp

    t = time.perf_counter()
    triples = read_triples(graph)
    parsed = time.perf_counter() - t
    copy = Path(graph).with_name("copy.ttl")
    shutil.copy(graph, copy)
    t = time.perf_counter()
    path = index_writer.write(copy, triples, stamp(copy))
    assert path is not None
    return {"parse": parsed, "index": time.perf_counter() - t, "MB": path.stat().st_size / 1e6, "triples": len(triples)}


def paper_of(graph: str) -> dict:
    """Child: the paper the queries ask about: the first one listed under PARAMS' concept by a subject of its own
    (so evidence, concepts-of-paper and similar-papers have rows to return)."""
    import kg

    rows = kg.query("papers-by-concept", {"concept": PARAMS["concept"]}, graph=graph, timeout=None)
    return {"paper": next(r["identifier"] for r in rows if r["via"] == r["concept"])}


def queries(graph: str, paper: str, store: bool = True) -> dict:
    """Child: every named query through kg.query, twice each, with its rows; paper-graph after the store is built
    (left out when not `store`)."""
    import kg
    from kg.core.defaults import SERVE_MAX_ROWS
    from kg.sparql.catalog import catalog
    from kg.sparql.index import answers
    from kg.sparql.store import ensure_store

    out: dict = {}
    for name, q in sorted(catalog().items()):
        values = {**PARAMS, "paper": paper}
        # optional parameters left out (the whole listing), but root and paper (similar-papers lists every pair otherwise)
        params = {p.name: values[p.name] for p in q.params if p.name in values and (p.required or p.name in ("root", "paper"))}
        for ps in [params, *VARIANTS.get(name, [])]:
            key = name + "".join(f" {k}={v!r}" for k, v in ps.items())
            if not answers(q) and not store:
                out[key] = [float("nan"), float("nan"), 0, float("nan"), "engine: not run (needs the SPARQL store)"]
                continue
            if not answers(q):
                t = time.perf_counter()
                ensure_store(graph)
                out["(SPARQL store build)"] = [time.perf_counter() - t, 0, 0, float("nan"), "engine"]
            times = []
            for cap in (None, None, SERVE_MAX_ROWS):
                t = time.perf_counter()
                res = kg.query(name, ps, graph=graph, timeout=None, max_rows=cap)
                times.append(time.perf_counter() - t)
                if cap is None:
                    rows = len(res.rows) if res.kind == "select" else len(res.triples)
                del res  # freeing the rows is not the next query's time
            out[key] = [*times[:2], rows, times[2], "index" if answers(q) else "engine"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl")
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--docs", action="store_true", help="write the table into docs/performance.md")
    ap.add_argument("--built", action="store_true", help="the workdir already holds corpus.jsonl and its built graph.ttl: "
                    "time only the first query and the named queries, without kg analyze and the SPARQL store")
    ap.add_argument("--analyze", action="store_true", help="with --built: run kg analyze on the graph first (timed), so the "
                    "analysis queries have rows")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        found = index_alone(rest[0]) if kind == "index" else paper_of(rest[0]) if kind == "paper" else queries(rest[0], rest[1], rest[2:] != ["no-store"])
        print(json.dumps(found))
        return
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kg-qbench-"))
    work.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    load = os.getloadavg()[0]
    graph = work / "graph.ttl"
    if args.built:
        corpus = work / "corpus.jsonl"
        say(f"- a graph of {args.papers:,} papers built before (`kg build`): {graph.stat().st_size / 1e6:.0f} MB of Turtle, "
            f"query index {(work / 'graph.kg-query.sqlite').stat().st_size / 1e6:.0f} MB")
    else:
        corpus = make_corpus(args.corpus, args.papers, work / "corpus.jsonl")
        measure_build(args, corpus, graph, work, say)
    wall, rss = run([*KG, "query", "top-concepts", "--graph", str(graph), "-n", "10"])
    say(f"- the first named query after that, `kg query top-concepts` as a process: **{wall:.2f} s**, peak RSS {rss:.0f} MB")
    if not args.built:
        bare = shutil.copy(graph, work / "bare.ttl")
        wall, rss = run([*KG, "query", "top-concepts", "--graph", str(bare), "-n", "10"])
        say(f"- the same on a copy of the graph with no index (made from a parse of the file first): {wall:.1f} s, peak RSS {rss:.0f} MB")
    if args.built and args.analyze:
        wall, rss = run([*KG, "analyze", str(graph)])
        say(f"- `kg analyze` of it (a process, writes the graph and its query index again): {wall:.1f} s, peak RSS {rss:.0f} MB")
    paper = child("paper", str(graph))["paper"]
    times = child("queries", str(graph), paper, *(["no-store"] if args.built else []))
    say("")
    say("| query | rows | first run (s) | second run (s) | with kg serve's row cap (s) | answered by |")
    say("|---|---:|---:|---:|---:|---|")
    for key, (first, second, rows, capped, where) in times.items():
        say(f"| {key} | {rows:,} | {first:.3f} | {second:.3f} | {capped:.3f} | {where} |")
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores shared with other work, Python {platform.python_version()}"
    nice = os.nice(0)
    head = (f"Measured {datetime.date.today().isoformat()} by `{f'nice -n {nice} ' if nice else ''}python bench/queries.py --papers {args.papers}"
            f"{' --built' if args.built else ''}{' --analyze' if args.analyze else ''}` ({machine}; load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end). "
            "Queries run through `kg.query` in one process (the index opened per query), each twice.")
    if args.docs:
        write_docs(head, lines)
    print(f"\n{head}\nwork files in {work}")


def measure_build(args: argparse.Namespace, corpus: Path, graph: Path, work: Path, say) -> None:
    """kg build, the index alone, kg analyze: timed."""
    build, rss = run([*KG, "build", str(corpus), "-o", str(graph), "--no-render"])
    say(f"- `kg build` of {args.papers:,} papers (a process): {build:.1f} s, peak RSS {rss:.0f} MB; "
        f"{graph.stat().st_size / 1e6:.0f} MB of Turtle")
    idx = child("index", str(graph))
    say(f"- the query index within it, written from the {idx['triples']:,} triples in memory: {idx['index']:.1f} s "
        f"({100 * idx['index'] / build:.0f} % of the build), {idx['MB']:.0f} MB "
        f"(a parse of the file alone takes {idx['parse']:.1f} s, which the build does not need)")
    wall, rss = run([*KG, "analyze", str(graph)])
    say(f"- `kg analyze` (a process, writes the graph and its query index again): {wall:.1f} s, peak RSS {rss:.0f} MB")


def write_docs(head: str, lines: list[str]) -> None:
    """The blocks between the bench/queries.py markers of docs/performance.md: one per corpus size (the `--papers N`
    of its head line), largest first; a new run's block replaces the one of its size."""
    import re

    def size(block: str) -> int:
        found = re.search(r"--papers (\d+)", block.split("\n", 1)[0])
        return int(found.group(1)) if found else 0

    page = ROOT / "docs" / "performance.md"
    text = page.read_text(encoding="utf-8")
    if START not in text:
        text += "\n" + "\n".join([START, "", END]) + "\n"
    before, rest = text.split(START, 1)
    inside, after = rest.split(END, 1)
    new = "\n".join([head, "", *lines]).strip()
    blocks = [b.strip() for b in re.split(r"\n(?=Measured )", inside) if b.strip() and size(b.strip()) != size(new)]
    blocks = sorted([*blocks, new], key=size, reverse=True)
    page.write_text(before + START + "\n" + "\n\n".join(blocks) + "\n\n" + END + after, encoding="utf-8")

if __name__ == "__main__":
    main()
