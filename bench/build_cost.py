"""What a default `kg build` costs against spaCy's bare tokenizer on the same texts, stage by stage (issue #38).

    python bench/build_cost.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers 21368] [--skip-stages] [--listings]
                               [--jobs N] [--against DIR]

One run, in this order, each measurement a fresh process:
  1. the corpus: the first --papers records; past the end of the file, copies with new ids (bench/bench.py's make_corpus);
  2. spaCy's bare tokenizer (`spacy.blank("en")`) on every title and abstract of it;
  3. the default `kg build CORPUS -o graph.ttl` (graph, query index, SPARQL store, page) as a whole process: wall
     time, CPU time of its whole tree, and the peak of the summed RSS of its process tree (polled every 0.1 s);
  3b. with --listings, the two largest listings on that graph as processes, each printing its table;
  3c. with --jobs N, the same build with --jobs N; with --against DIR, the same default build with the kg of another
     checkout DIR (main, say), right after this one's, and whether the two graphs are the same bytes;
  4. the same work one stage after another in one process, each stage timed: its share of the build. Here nothing
     overlaps (the build itself loads the store in another process while it indexes and draws), so the shares say
     where the work is, the whole process what it costs.
Ratios are to the tokenizer of the same run: the machine is shared and its load moves every time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


# The two largest listings of issue #38 (at 100k: about 50,000 and 62,000 rows), each to be printed within a second
LISTINGS = (("search", "words=learning"), ("papers-by-concept", "concept=machine learning"))


def make_corpus(source: Path, n: int, out: Path) -> Path:
    spec = importlib.util.spec_from_file_location("kg_bench", ROOT / "bench" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.make_corpus(source, n, out)


def tokenizer(corpus: Path) -> dict:
    """Child: every title and abstract through spacy.blank("en") alone."""
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").split("\n") if line.strip()]
    texts = [t for r in records for t in (r.get("title") or "", r["abstract"]) if t]
    import spacy

    nlp = spacy.blank("en")
    t, cpu = time.perf_counter(), time.process_time()
    tokens = sum(len(doc) for doc in nlp.pipe(texts))
    return {"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu, "tokens": tokens, "texts": len(texts)}


def stages(corpus: Path, workdir: Path) -> dict:
    """Child: a default build's work one stage after another, each timed."""
    from kg import extract
    from kg.extract import ingest
    from kg.extract import scheme as scheme_
    from kg.graph import index_writer
    from kg.pipeline import parallel
    from kg.pipeline.build import Built, write
    from kg.sparql.store import ensure_store
    from kg.views.render import render

    out: dict[str, float] = {}
    t = time.perf_counter()
    papers = ingest.read([corpus]).papers
    out["read"] = time.perf_counter() - t
    t = time.perf_counter()
    scheme = scheme_.load(scheme_.default_scheme_files())
    run = extract.make_extractor(scheme)
    out["extractor set-up"] = time.perf_counter() - t
    t = time.perf_counter()
    extractions = tuple(parallel.extract(run, papers))
    out["extract"] = time.perf_counter() - t
    built = Built(papers, extractions, scheme, inputs=(corpus.name,))
    t = time.perf_counter()
    n = sum(1 for _ in built.triples())
    out["make the triples"] = time.perf_counter() - t
    closing = index_writer.Writer.close
    spent = {"index": 0.0}

    def timed_close(self: index_writer.Writer, stamp: dict | None) -> Path | None:
        start = time.perf_counter()
        try:
            return closing(self, stamp)
        finally:
            spent["index"] += time.perf_counter() - start

    index_writer.Writer.close = timed_close  # type: ignore[method-assign]
    graph = workdir / "stages.ttl"
    t = time.perf_counter()
    write(built, graph)
    written = time.perf_counter() - t
    out["Turtle and index rows"] = written - spent["index"] - out["make the triples"]
    out["index tables"] = spent["index"]
    t = time.perf_counter()
    ensure_store(graph)
    out["SPARQL store"] = time.perf_counter() - t
    del built, extractions, papers
    t = time.perf_counter()
    render(graph, workdir / "stages.html")
    out["page"] = time.perf_counter() - t
    return {"stages": out, "triples": n, "peak MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def whole(cmd: list[str], checkout: Path = ROOT) -> dict:
    """Run a command (`checkout`: whose kg): wall seconds, CPU seconds of its tree, and the peak of its tree's summed RSS (MB)."""
    import psutil

    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000", "PYTHONPATH": str(checkout)}
    peak = {"tree": 0.0, "processes": 0}
    cpu: dict[int, float] = {}
    role: dict[int, str] = {}  # pid -> "workers" (spawned extraction workers), "store" (its loader), "other"
    done = threading.Event()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=checkout)

        def poll() -> None:
            root = psutil.Process(proc.pid)
            while not done.is_set():
                total, seen = 0.0, 0
                try:
                    for p in [root, *root.children(recursive=True)]:
                        try:
                            total += p.memory_info().rss / 2**20
                            times = p.cpu_times()
                            cpu[p.pid] = times.user + times.system
                            if p.pid not in role:
                                line = " ".join(p.cmdline())
                                role[p.pid] = ("workers" if "spawn_main" in line else "store" if "load_aside" in line or "ensure_store" in line
                                               else "other")
                            seen += 1
                        except psutil.Error:
                            pass
                except psutil.Error:
                    pass
                if total > peak["tree"]:
                    peak["tree"], peak["processes"] = total, seen
                time.sleep(0.1)

        watcher = threading.Thread(target=poll, daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        watcher.join()
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{stderr[-2000:]}{stdout[-2000:]}")
    # wait4's usage is the build's and that of every process it waited for (the store's loader among them)
    return {"seconds": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak MB": peak["tree"],
            "processes at the peak": peak["processes"], "own peak MB": usage.ru_maxrss / 1024, "output": stdout.strip(),
            # the builder's own CPU (its last poll): on an idle machine with a core for its helpers, about its wall time
            "builder cpu": cpu.get(proc.pid, 0.0),
            # the CPU of the extraction workers and of the store's loader (their last polls)
            "workers cpu": sum(c for pid, c in cpu.items() if role.get(pid) == "workers"),
            "store cpu": sum(c for pid, c in cpu.items() if role.get(pid) == "store")}


def child(kind: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", kind, *args], capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--papers", type=int, default=21368)
    parser.add_argument("--skip-stages", action="store_true", help="only the tokenizer and the whole build")
    parser.add_argument("--jobs", type=int, action="append", help="also time the whole build with --jobs N (repeatable)")
    parser.add_argument("--no-store", action="store_true",
                        help="also time `kg build --no-store` and then the first ad-hoc query, which loads the store (on first need)")
    parser.add_argument("--against", type=Path, help="also time the default build with the kg of this other checkout (e.g. main's)")
    parser.add_argument("--keep", type=Path, help="keep the corpus and the outputs of the whole build in this folder")
    parser.add_argument("--listings", action="store_true",
                        help="also time the two largest listings on the built graph as processes (search \"learning\", "
                             "papers-by-concept \"machine learning\"), each printing its table")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        result = tokenizer(Path(rest[0])) if kind == "tokenizer" else stages(Path(rest[0]), Path(rest[1]))
        print(json.dumps(result))
        return
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="kg-build-cost-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        corpus = make_corpus(args.corpus, args.papers, workdir / args.corpus.name)  # its name is the graph's kg:inputName
        print(f"{args.papers:,} papers ({corpus.stat().st_size / 1e6:.0f} MB of JSONL); load average {os.getloadavg()[0]:.1f}", flush=True)
        tok = child("tokenizer", str(corpus))
        print(f"spaCy's bare tokenizer: {tok['seconds']:.2f} s, CPU {tok['cpu']:.2f} s ({tok['texts']:,} titles and abstracts, "
              f"{tok['tokens']:,} tokens)", flush=True)
        build = whole([sys.executable, "-m", "kg", "build", str(corpus), "-o", str(workdir / "graph.ttl")])
        print(f"kg build (graph, index, store, page): {build['seconds']:.2f} s = {build['seconds'] / tok['seconds']:.1f}x the tokenizer; "
              f"CPU {build['cpu']:.1f} s of its tree = {build['cpu'] / tok['cpu']:.1f}x the tokenizer's; peak {build['peak MB']:,.0f} MB summed over its process tree "
              f"({build['processes at the peak']} processes then; {build['own peak MB']:,.0f} MB the largest process); "
              f"the builder's own CPU {build['builder cpu']:.1f} s = {build['builder cpu'] / tok['cpu']:.1f}x "
              f"(its workers {build['workers cpu']:.1f} s, the store's loader {build['store cpu']:.1f} s)", flush=True)
        print("   " + build["output"].replace("\n", "\n   "))
        if args.listings:
            for name, param in LISTINGS:
                got = whole([sys.executable, "-m", "kg", "query", name, "-p", param, "--graph", str(workdir / "graph.ttl")])
                rows = got["output"].splitlines()[-1]
                print(f"kg query {name} -p {param!r}: {got['seconds']:.2f} s, CPU {got['cpu']:.2f} s, peak {got['peak MB']:,.0f} MB; "
                      f"{rows}; {got['seconds'] / build['seconds']:.4f}x the build", flush=True)
        for jobs in args.jobs or ():
            other = whole([sys.executable, "-m", "kg", "build", str(corpus), "-o", str(workdir / f"graph-jobs{jobs}.ttl"), "--jobs", str(jobs)])
            same = (workdir / f"graph-jobs{jobs}.ttl").read_bytes() == (workdir / "graph.ttl").read_bytes()
            print(f"kg build --jobs {jobs}: {other['seconds']:.2f} s = {other['seconds'] / tok['seconds']:.1f}x the tokenizer; "
                  f"CPU {other['cpu']:.1f} s (the builder's own {other['builder cpu']:.1f} s); peak {other['peak MB']:,.0f} MB over its process tree; "
                  f"the same graph bytes: {same}", flush=True)
        if args.against is not None:
            other = whole([sys.executable, "-m", "kg", "build", str(corpus), "-o", str(workdir / "graph-against.ttl")], args.against.resolve())
            same = (workdir / "graph-against.ttl").read_bytes() == (workdir / "graph.ttl").read_bytes()
            print(f"kg build of {args.against}: {other['seconds']:.2f} s = {other['seconds'] / tok['seconds']:.1f}x the tokenizer; "
                  f"CPU {other['cpu']:.1f} s = {other['cpu'] / tok['cpu']:.1f}x; peak {other['peak MB']:,.0f} MB over its process tree "
                  f"({other['own peak MB']:,.0f} MB the largest process); its builder's own CPU {other['builder cpu']:.1f} s (its workers "
                  f"{other['workers cpu']:.1f} s, the store's loader {other['store cpu']:.1f} s); this build / that: {build['seconds'] / other['seconds']:.2f} "
                  f"(wall), {build['cpu'] / other['cpu']:.2f} (CPU); the same graph bytes: {same}; load average {os.getloadavg()[0]:.1f}", flush=True)
        if args.no_store:
            lazy = workdir / "graph-lazy.ttl"
            bare = whole([sys.executable, "-m", "kg", "build", str(corpus), "-o", str(lazy), "--no-store"])
            count = "SELECT (COUNT(*) AS ?n) WHERE { ?p a <http://purl.org/spar/fabio/ResearchPaper> }"
            first = whole([sys.executable, "-m", "kg", "query", count, "--graph", str(lazy), "-f", "csv", "--timeout", "0"])
            print(f"kg build --no-store: {bare['seconds']:.2f} s = {bare['seconds'] / tok['seconds']:.1f}x the tokenizer; CPU {bare['cpu']:.1f} s; "
                  f"peak {bare['peak MB']:,.0f} MB; then the first ad-hoc query, which loads the store: {first['seconds']:.2f} s, "
                  f"CPU {first['cpu']:.1f} s, peak {first['peak MB']:,.0f} MB ({first['output'].splitlines()[-1]} papers)", flush=True)
        if not args.skip_stages:
            staged = child("stages", str(corpus), str(workdir))
            total = sum(staged["stages"].values())
            print(f"the same work one stage after another in one process ({staged['triples']:,} triples; peak {staged['peak MB']:,.0f} MB): {total:.2f} s")
            print("| stage | s | share | x the tokenizer |\n|---|---:|---:|---:|")
            for name, seconds in staged["stages"].items():
                print(f"| {name} | {seconds:.2f} | {seconds / total:.0%} | {seconds / tok['seconds']:.2f} |")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
