"""Benchmark kg past one process: `--engine dask` against `--jobs 2`, shard sizes, and pushing into Oxigraph.

    python bench/scale.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--papers 100000] [--subset 1000000]

One run, same machine, in this order:
  1. a corpus of --papers (bench/bench.py's make_corpus: the real abstracts, then copies with new ids);
  2. `kg build CORPUS --jobs 2 --no-render -o local.nt` and `kg build CORPUS --engine dask --jobs 2
     -o shards/` (a LocalCluster of two single-threaded worker processes), each a whole process:
     wall time, and the peak RSS of every process of its tree (the dask workers are grandchildren);
  3. the shards' sizes, and whether their union is the local graph (`sort -u` of both, compared);
  4. pushing into a real `oxigraph serve` (RocksDB on disk, a fresh server for each run): the first
     --subset triples through INSERT DATA, the Graph Store Protocol, and the protocol with Oxigraph's
     bulk loader (`?no_transaction`); then the whole sharded graph through the protocol, with the
     store's triple count and a random sample of triples asked for one by one.
Timings are wall-clock; the load average is printed because other work on the machine slows them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KG = [sys.executable, "-m", "kg"]


def make_corpus(source: Path, n: int, out: Path) -> Path:
    spec = importlib.util.spec_from_file_location("kg_bench", ROOT / "bench" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.make_corpus(source, n, out)


def timed_tree(cmd: list[str]) -> dict:
    """Run a command; wall time and the peak RSS (MB) of each process of its tree, polled every 0.2 s."""
    import psutil

    peaks: dict[int, tuple[str, float]] = {}
    t0 = time.perf_counter()
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}  # the same build time in both graphs
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    done = threading.Event()

    def poll() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                for p in [root, *root.children(recursive=True)]:
                    rss = p.memory_info().rss / 2**20
                    name = " ".join(p.cmdline()[1:4])[:60]
                    if rss > peaks.get(p.pid, ("", 0.0))[1]:
                        peaks[p.pid] = (name, rss)
            except psutil.Error:
                pass
            time.sleep(0.2)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    done.set()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err[-2000:]}")
    return {"seconds": seconds, "peaks": sorted((rss for _, rss in peaks.values()), reverse=True), "output": out.strip()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def executable() -> str:
    """The `oxigraph` command (the CLI wheel installs it beside this Python)."""
    return shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")


class Oxigraph:
    """A fresh `oxigraph serve` on disk, on a free port (serving `location` when given: a store loaded offline)."""

    def __init__(self, workdir: Path, location: Path | None = None) -> None:
        exe = executable()
        self.dir = location or Path(tempfile.mkdtemp(prefix="oxigraph-", dir=workdir))
        port = free_port()
        self.proc = subprocess.Popen([exe, "serve", "--location", str(self.dir), "--bind", f"127.0.0.1:{port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{self.base}/query?query=ASK%7B%7D", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("oxigraph did not start")

    def count(self, graph: str | None) -> int:
        import kg

        return kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", endpoint=f"{self.base}/query", graph_iri=graph).column("n")[0]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        shutil.rmtree(self.dir, ignore_errors=True)


def push_rate(workdir: Path, graph: Path, how: str, n: int) -> dict:
    """Push `graph` into a fresh server one way; triples/s and whether the store holds them all."""
    import kg

    server = Oxigraph(workdir)
    target = "https://example.org/graph/bench"
    try:
        kwargs = {"insert": {"endpoint": f"{server.base}/update"},
                  "gsp": {"store": f"{server.base}/store"},
                  "gsp-bulk": {"store": f"{server.base}/store?no_transaction"}}[how]
        t0 = time.perf_counter()
        sent = kg.push(graph, graph_iri=target, **kwargs)  # type: ignore[arg-type]
        seconds = time.perf_counter() - t0
        held = server.count(target)
        return {"how": how, "sent": sent, "held": held, "expected": n, "seconds": seconds, "rate": sent / seconds,
                "server": server}
    except BaseException:
        server.close()
        raise


def sample_check(server: Oxigraph, folder: Path, k: int = 200) -> int:
    """Ask the store for k random triples of the shards (10 from each of k/10 random shards), each by its own ASK."""
    import kg
    from kg.graph import shards

    rng = random.Random(19)
    files = shards.files(folder)
    found = 0
    for f in [rng.choice(files) for _ in range(k // 10)]:
        lines = [line for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        for line in rng.sample(lines, min(10, len(lines))):
            ask = f"ASK {{ {line.removesuffix(' .')} }}"
            found += bool(kg.query(ask, endpoint=f"{server.base}/query", graph_iri="https://example.org/graph/bench").boolean)
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl")
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--subset", type=int, default=1_000_000, help="triples pushed each way for the rate comparison")
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kg-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"# kg scale benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}, workdir {work}")
    corpus = make_corpus(args.corpus, args.papers, work / "corpus.jsonl")
    print(f"corpus: {args.papers} papers, {corpus.stat().st_size / 2**20:.0f} MB")

    local = timed_tree([*KG, "build", str(corpus), "--jobs", "2", "--no-render", "--no-progress", "-o", str(work / "local.nt")])
    print(f"local --jobs 2: {local['seconds']:.1f} s, peak RSS by process (MB): {[round(x) for x in local['peaks'][:3]]}")
    folder = work / "shards"
    shutil.rmtree(folder, ignore_errors=True)
    dask = timed_tree([*KG, "build", str(corpus), "--engine", "dask", "--jobs", "2", "--no-progress", "-o", str(folder)])
    print(f"dask, 2 workers: {dask['seconds']:.1f} s, peak RSS by process (MB): {[round(x) for x in dask['peaks'][:4]]}")
    print(f"ratio local/dask wall time: {local['seconds'] / dask['seconds']:.2f} (above 1: dask faster)")
    print(f"  papers/s: local {args.papers / local['seconds']:.0f}, dask {args.papers / dask['seconds']:.0f}")

    manifest = json.loads((folder / "manifest.json").read_text())
    sizes = [s["bytes"] for s in manifest["shards"]]
    paper_shards = [s for s in manifest["shards"] if s["papers"]]
    print(f"shards: {len(sizes)} files ({len(paper_shards)} of papers), {sum(sizes) / 2**20:.0f} MB in all, "
          f"{manifest['triples']} triples, {manifest['papers']} papers")
    print(f"  paper shards: median {statistics.median(s['bytes'] for s in paper_shards) / 2**20:.1f} MB, "
          f"max {max(s['bytes'] for s in paper_shards) / 2**20:.1f} MB, "
          f"median {statistics.median(s['papers'] for s in paper_shards):.0f} papers, "
          f"{manifest['triples'] / manifest['papers']:.0f} triples and {sum(sizes) / manifest['papers']:.0f} bytes a paper")
    print(f"  local.nt: {(work / 'local.nt').stat().st_size / 2**20:.0f} MB")
    both = [subprocess.run(f"cat {' '.join(map(str, paths))} | LC_ALL=C sort -u | sha256sum", shell=True, capture_output=True, text=True,
                           check=True).stdout.split()[0] for paths in ([work / "local.nt"], sorted(folder.glob("*.nt")))]
    print(f"  union of the shards == local graph (sort -u, sha256): {both[0] == both[1]}")

    # The rate comparison on the same first --subset triples of the shards, each way into a fresh server.
    subset = work / "subset"
    shutil.rmtree(subset, ignore_errors=True)
    subset.mkdir()
    taken, picked = 0, []
    for s in manifest["shards"]:
        if taken >= args.subset:
            break
        shutil.copy(folder / s["file"], subset / s["file"])
        picked.append(s)
        taken += s["triples"]
    (subset / "manifest.json").write_text(json.dumps({**manifest, "shards": picked}))
    rates = {}
    for how in ("insert", "gsp", "gsp-bulk"):
        r = push_rate(work, subset, how, taken)
        r["server"].close()
        rates[how] = r["rate"]
        print(f"push {taken} triples via {how}: {r['seconds']:.1f} s, {r['rate']:.0f} triples/s, store holds {r['held']}")
    print(f"  Graph Store Protocol / INSERT DATA: {rates['gsp'] / rates['insert']:.1f}x; "
          f"with Oxigraph's bulk loader: {rates['gsp-bulk'] / rates['insert']:.1f}x")

    # The whole graph through the protocol (the bulk loader), checked.
    r = push_rate(work, folder, "gsp-bulk", manifest["triples"])
    try:
        print(f"push all {manifest['triples']} triples via gsp-bulk: {r['seconds']:.1f} s, {r['rate']:.0f} triples/s; "
              f"store holds {r['held']} (expected {manifest['triples']}); "
              f"sample: {sample_check(r['server'], folder)}/200 random triples found; "
              f"store on disk {sum(f.stat().st_size for f in r['server'].dir.rglob('*') if f.is_file()) / 2**20:.0f} MB")
    finally:
        r["server"].close()
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
