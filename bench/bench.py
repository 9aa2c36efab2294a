"""Benchmark kg at scale: stage times, peak memory, the bare tokenizer as reference, named queries.

    python bench/bench.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers 21368 --papers 100000]

For each size it writes a corpus (the real abstracts; beyond their number, copies with new ids and
lightly varied text), then measures in fresh processes:
  * the stages in one process (read, extract, RDF build, serialize, store) with peak RSS;
  * the same abstracts through spacy.blank("en") alone (the reference) in the same run;
  * a whole `kg build --no-render` process (wall time, peak RSS), with --jobs 1 and --jobs 2;
  * a whole `kg build --update` adding 1 % new papers to the graph of the other 99 %;
  * every named query (queries/*.rq) in a persisted pyoxigraph store, in-process and as a whole
    `kg query` process when the command exists.
Timings are wall-clock; the load average is printed because other work on the machine slows them.
The query table of the last run (dated, with row counts) is written to docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KG = [sys.executable, "-m", "kg"]


def make_corpus(source: Path, n: int, out: Path) -> Path:
    """The first n records of source; past its end, copies with new ids and sentence order rotated."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").split("\n") if line.strip()]
    with out.open("w", encoding="utf-8") as stream:
        for i in range(n):
            copy, rec = divmod(i, len(records))
            r = dict(records[rec])
            if copy:
                sentences = r["abstract"].split(". ")
                k = copy % max(len(sentences), 1)
                r["abstract"] = ". ".join(sentences[k:] + sentences[:k])
                r["id"] = f"{r['id']}-v{copy}"
                r["title"] = f"{r.get('title') or ''} (variant {copy})".strip()
            stream.write(json.dumps(r, ensure_ascii=False) + "\n")
    return out


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stages(corpus: Path, workdir: Path) -> dict:
    """Child process: each stage of a build, timed, with peak RSS after it."""
    t0 = time.perf_counter()
    import kg  # noqa: F401
    from kg import extract
    from kg.extract import ingest
    from kg.extract import scheme as scheme_
    from kg.pipeline import parallel
    from kg.pipeline.build import Built, write

    out: dict = {"import kg": time.perf_counter() - t0}
    t = time.perf_counter()
    papers = ingest.read([corpus]).papers
    out["read"] = time.perf_counter() - t
    t = time.perf_counter()
    scheme = scheme_.load(scheme_.default_scheme_files())
    run = extract.make_extractor(scheme)
    out["extractor set-up"] = time.perf_counter() - t
    t = time.perf_counter()
    extractions = parallel.extract(run, papers)
    out["extract"] = time.perf_counter() - t
    built = Built(papers, tuple(extractions), scheme, inputs=(corpus.name,))
    t = time.perf_counter()
    n_triples = sum(1 for _ in built.triples())
    out["RDF build"] = time.perf_counter() - t
    ttl = workdir / "graph.ttl"
    t = time.perf_counter()
    write(built, ttl)
    # write() generates the triples again as it serializes: subtract the measured generation time.
    out["serialize"] = time.perf_counter() - t - out["RDF build"]
    out["peak before store"] = peak_mb()
    from kg.sparql import store as store_

    t = time.perf_counter()
    store_.ensure_store(ttl)  # the persisted store `kg query` uses, beside the graph file
    out["store"] = time.perf_counter() - t
    out["papers"], out["triples"], out["peak"] = len(papers), n_triples, peak_mb()
    out["ttl MB"] = ttl.stat().st_size / 1e6
    return out


def tokenizer(corpus: Path) -> dict:
    """Child process: the same abstracts through spacy.blank("en") alone."""
    t = time.perf_counter()
    texts = [json.loads(line)["abstract"] for line in corpus.read_text(encoding="utf-8").split("\n") if line.strip()]
    read = time.perf_counter() - t
    t = time.perf_counter()
    import spacy

    nlp = spacy.blank("en")
    setup = time.perf_counter() - t
    t = time.perf_counter()
    tokens = sum(len(doc) for doc in nlp.pipe(texts))
    return {"read": read, "import+blank": setup, "tokenize": time.perf_counter() - t, "tokens": tokens}


def run_process(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB, the largest of the process and its children) and stdout of a command."""
    wall, _, peak, stdout = run_measured(cmd)
    return wall, peak, stdout


def run_measured(cmd: list[str], cwd: Path = ROOT) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS (MB) and stdout of a command run in `cwd` (`python -m kg`
    there runs that folder's kg)."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    # Output goes to files, not pipes: a pipe would fill up and block the child while we wait for it.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{stderr}{stdout}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout


def child(kind: str, *args: str) -> dict:
    """Run one measurement in a fresh interpreter so its peak memory is its own."""
    result = subprocess.run([sys.executable, __file__, "--child", kind, *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode:
        raise SystemExit(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def named_queries() -> list[str]:
    from kg.sparql.run import catalog

    return sorted(catalog())


PARAMS = {"concept": "reinforcement learning", "a": "reinforcement learning", "b": "deep learning",
          "words": "human feedback", "root": "machine learning"}
# Further runs of a query with other values: the broad phrases and concepts that cost most.
VARIANTS = {"search": [{"words": "learning"}, {"words": "reinforcement learning"}],
            "papers-by-concept": [{"concept": "machine learning"}]}


def params_for(name: str, paper: str) -> dict[str, str]:
    """Values for a named query's parameters (required ones, and root for the concept tree)."""
    from kg.sparql.run import resolve

    q = resolve(name)
    values = {**PARAMS, "paper": paper}
    return {p.name: values[p.name] for p in q.params if p.name in values and (p.required or p.name == "root")}


def runs(paper: str) -> list[tuple[str, dict[str, str]]]:
    """Every named query with its bench parameters, and the variants."""
    out = []
    for name in named_queries():
        out.append((name, params_for(name, paper)))
        out += [(name, v) for v in VARIANTS.get(name, [])]
    return out


def label(name: str, params: dict[str, str]) -> str:
    return name + (" " + " ".join(f"{k}={v!r}" for k, v in params.items()) if params else "")


def queries_in_store(graph: Path, paper: str) -> dict:
    """Child process: each named query through kg.query (the query index, or the store for paper-graph)."""
    import kg
    from kg.sparql.store import open_store

    out = {}
    t = time.perf_counter()
    open_store(graph)
    out["(open store)"] = time.perf_counter() - t
    for name, params in runs(paper):
        t = time.perf_counter()
        rows = kg.query(name, params, graph=graph, timeout=None)
        out[label(name, params)] = [time.perf_counter() - t, len(rows.rows) or len(rows.triples)]
    return out


def write_performance(path: Path, sizes: list[tuple[int, dict]], notes: list[str]) -> None:
    """docs/performance.md: one dated table of the named queries in the persisted store, per corpus size."""
    lines = [
        "# Performance",
        "",
        f"Measured {datetime.date.today().isoformat()} by `python bench/bench.py` on {os.cpu_count()} cores "
        f"(load average {os.getloadavg()[0]:.1f} at the end: other work slows the numbers). Seconds in the persisted store "
        "(opened once), and rows returned.",
        "",
        *(f"- {note}" for note in notes),
        "",
        "| papers | query | seconds | rows |",
        "|---:|---|---:|---:|",
    ]
    for n, times in sizes:
        lines += [f"| {n:,} | {name} | {t[0]:.3f} | {t[1]:,} |" for name, t in times.items() if not name.startswith("(")]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def has_query_command() -> bool:
    return subprocess.run([*KG, "query", "--help"], capture_output=True, cwd=ROOT).returncode == 0


def fmt(s: float) -> str:
    return f"{s:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "../shared/corpora/ml-abstracts.jsonl")
    parser.add_argument("--papers", type=int, action="append", help="corpus sizes [21368 and 100000]")
    parser.add_argument("--workdir", type=Path, help="where corpora and graphs go [a temporary folder]")
    parser.add_argument("--whole-builds-up-to", type=int, default=30000, metavar="N",
                        help="time whole `kg build` processes (--jobs 1/2, --update) only for corpora up to N papers [30000]")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        fn = {"stages": lambda: stages(Path(rest[0]), Path(rest[1])), "tokenizer": lambda: tokenizer(Path(rest[0])),
              "queries": lambda: queries_in_store(Path(rest[0]), rest[1])}[kind]
        print(json.dumps(fn()))
        return
    sizes = args.papers or [21368, 100000]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kg-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"kg benchmark: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start, python {sys.version.split()[0]}")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import kg"], check=True, cwd=ROOT)
    print(f"`import kg` process: {fmt(time.perf_counter() - t)} s; `kg --help`: {fmt(run_process([*KG, '--help'])[0])} s")
    query_cli = has_query_command()
    measured: list[tuple[int, dict]] = []
    notes: list[str] = []
    for n in sizes:
        d = workdir / str(n)
        d.mkdir(exist_ok=True)
        corpus = make_corpus(args.corpus, n, d / f"corpus-{n}.jsonl")
        print(f"\n## {n:,} papers ({corpus.stat().st_size / 1e6:.0f} MB JSONL), load average {os.getloadavg()[0]:.1f}")
        tok = child("tokenizer", str(corpus))
        st = child("stages", str(corpus), str(d))
        print(f"{'stage':<18}{'seconds':>9}{'papers/s':>11}")
        for name in ("read", "extractor set-up", "extract", "RDF build", "serialize", "store"):
            print(f"{name:<18}{st[name]:>9.2f}{n / st[name] if name != 'extractor set-up' else float('nan'):>11,.0f}")
        print(f"{st['triples']:,} triples, {st['ttl MB']:.0f} MB Turtle; peak RSS {st['peak before store']:.0f} MB (all stages but store), {st['peak']:.0f} MB with store")
        print(f"reference spacy.blank('en') alone: {fmt(tok['tokenize'])} s for {tok['tokens']:,} tokens ({n / tok['tokenize']:,.0f} papers/s; spaCy import + blank {fmt(tok['import+blank'])} s)")
        print(f"extract stage / tokenizer = {st['extract'] / tok['tokenize']:.1f}x")
        builds = {}
        for jobs in (1, 2) if n <= args.whole_builds_up_to else ():
            wall, rss, _ = run_process([*KG, "build", str(corpus), "-o", str(d / f"kg-j{jobs}.ttl"), "--no-render", "--jobs", str(jobs)])
            builds[jobs] = wall
            print(f"whole `kg build --no-render --jobs {jobs}` process: {fmt(wall)} s, peak RSS {rss:.0f} MB, "
                  f"{wall / tok['tokenize']:.1f}x the bare tokenizer")
        if 2 in builds:
            same = (d / "kg-j1.ttl").read_bytes() == (d / "kg-j2.ttl").read_bytes()
            print(f"--jobs 2 speed-up: {builds[1] / builds[2]:.2f}x; output byte-identical to --jobs 1: {same}")
            lines = corpus.read_text(encoding="utf-8").split("\n")[:-1]
            cut = len(lines) - max(1, len(lines) // 100)
            (d / "old.jsonl").write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")
            (d / "new.jsonl").write_text("\n".join(lines[cut:]) + "\n", encoding="utf-8")
            run_process([*KG, "build", str(d / "old.jsonl"), "-o", str(d / "up.ttl"), "--no-render"])
            wall, rss, _ = run_process([*KG, "build", "--update", str(d / "up.ttl"), str(d / "new.jsonl"), "--no-render"])
            before = (d / "up.ttl").read_bytes()
            again, _, _ = run_process([*KG, "build", "--update", str(d / "up.ttl"), str(d / "old.jsonl"), str(d / "new.jsonl"), "--no-render"])
            print(f"`kg build --update` with {len(lines) - cut} new papers (1 %): {fmt(wall)} s, peak RSS {rss:.0f} MB, "
                  f"{builds[1] / wall:.1f}x faster than the full build; re-run on all inputs {fmt(again)} s, "
                  f"file unchanged: {(d / 'up.ttl').read_bytes() == before}")
        wall, rss, _ = run_process([*KG, "analyze", str(d / "graph.ttl")])  # the analysis queries need it
        print(f"`kg analyze` process: {fmt(wall)} s, peak RSS {rss:.0f} MB")
        if query_cli:  # the first query after a build: the graph file alone, no store yet
            import shutil

            first = shutil.copy(d / "graph.ttl", d / "first.ttl")
            wall, rss, _ = run_process([*KG, "query", "top-concepts", "--graph", str(first)])
            print(f"first `kg query top-concepts` process on a copy of the graph (makes its query index first): {fmt(wall)} s, peak RSS {rss:.0f} MB")
            notes.append(f"{n:,} papers: `kg build` stages {fmt(sum(st[k] for k in ('read', 'extract', 'RDF build', 'serialize')))} s; "
                         f"then the first `kg query top-concepts` process on a copy with no query index, {fmt(wall)} s")
            from kg.sparql.store import fresh_folder

            version = fresh_folder(first)
            if version is not None:
                size = sum(f.stat().st_size for f in version.rglob("*") if f.is_file())
                sides = ", ".join(f"{f.name} {f.stat().st_size / 1e6:.1f} MB" for f in sorted(version.glob("*.sqlite")))
                line = (f"SPARQL store: {size / 1e6:.0f} MB ({sides}) beside {(d / 'graph.ttl').stat().st_size / 1e6:.0f} MB of Turtle; "
                        f"built in {fmt(st['store'])} s against {fmt(sum(st[k] for k in ('read', 'extract', 'RDF build', 'serialize')))} s for the build stages")
                print(line)
                notes.append(f"{n:,} papers: {line}")
        paper = json.loads(corpus.read_text(encoding="utf-8").split("\n", 1)[0])["id"]
        inproc = child("queries", str(d / "graph.ttl"), paper)
        measured.append((n, inproc))
        print(f"named queries on the persisted store (opened in {fmt(inproc['(open store)'])} s):")
        print(f"{'query':<60}{'rows':>7}{'in store':>10}{'kg query process':>18}")
        for name, params in runs(paper):
            args_ = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
            proc = fmt(run_process([*KG, "query", name, "--graph", str(d / "graph.ttl"), *args_])[0]) if query_cli else "-"
            seconds, rows = inproc[label(name, params)]
            print(f"{label(name, params):<60}{rows:>7}{fmt(seconds):>10}{proc:>18}")
    write_performance(ROOT / "docs" / "performance.md", measured, notes)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; work files in {workdir}")


if __name__ == "__main__":
    main()
