"""Every named query at a million papers, on a real `oxigraph serve`, through `kg query NAME --endpoint`.

    python bench/server_queries.py GRAPH.ttl [--copies 47] [--timeout 600] [--workdir DIR] [--keep]

GRAPH is a built and analysed graph (`kg build` then `kg analyze`; the 21,368-paper ML corpus gives
1,004,296 papers at 47 copies). The million-paper graph is made by replication, not extraction:
copy 0 is GRAPH as it is; copy k renames every paper, annotation and similarity IRI
(`…/paper/ID` → `…/paper/cK-ID`) and paper identifier (`"ID"` → `"cK-ID"`), and shifts nothing
else, so each concept has k times its papers, each author k times their papers, and the analysis
(concept ranks, communities, related concepts: computed on the original) is the original's. The
copies are streamed into `oxigraph load` (the store's offline bulk loader, from standard input), never
written to disk as N-Triples.

Then the store is served (`oxigraph serve --timeout-s`) and every named query is run as a `kg query`
process with bound parameters, its rows written as TSV to a file: wall seconds and row counts are
printed. A query that the server stops at its time limit is reported as such. Run it niced: it takes
about 25 GB of disk for the store and an hour of one core to load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KG = [sys.executable, "-m", "kg"]
sys.path.insert(0, str(ROOT / "bench"))

from scale import free_port  # noqa: E402

PER_COPY = (b"/kg/paper/", b"/kg/annotation/", b"/kg/similarity/")
IDENTIFIER = b"<http://purl.org/dc/terms/identifier> \""


def split(graph: Path) -> tuple[bytes, bytes]:
    """The graph as N-Triples: (lines about no paper, lines about papers and their annotations)."""
    import pyoxigraph as ox

    out = tempfile.TemporaryFile()
    ox.serialize(ox.parse(path=str(graph)), out, format=ox.RdfFormat.N_TRIPLES)
    out.seek(0)
    once, each = [], []
    for line in out:
        (each if any(p in line for p in PER_COPY) else once).append(line)
    return b"".join(once), b"".join(each)


def copy(each: bytes, k: int) -> bytes:
    """Copy k of the per-paper lines: paper, annotation and similarity IRIs and paper identifiers renamed."""
    if k == 0:
        return each
    tag = b"c%d-" % k
    for prefix in PER_COPY:
        each = each.replace(prefix, prefix + tag)
    return each.replace(IDENTIFIER, IDENTIFIER + tag)


def load(store: Path, once: bytes, each: bytes, copies: int) -> float:
    """Stream the replicated graph into `oxigraph load`; seconds."""
    exe = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    t = time.perf_counter()
    proc = subprocess.Popen(["nice", "-n", "10", exe, "load", "--location", str(store), "--format", "nt"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(once)
    for k in range(copies):
        proc.stdin.write(copy(each, k))
        print(f"  copy {k + 1}/{copies} sent, {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("oxigraph load failed")
    return time.perf_counter() - t


def serve(store: Path, timeout: int) -> tuple[subprocess.Popen, str]:
    exe = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    port = free_port()
    proc = subprocess.Popen(["nice", "-n", "10", exe, "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}",
                             "--timeout-s", str(timeout)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{base}/query?query=ASK%7B%7D", timeout=5).read()
            return proc, base
        except OSError:
            time.sleep(0.5)
    raise SystemExit("oxigraph did not start")


def runs(paper: str) -> list[tuple[str, dict[str, str]]]:
    """Every named query with parameters a user would give (a paper of a late copy; broad and narrow concepts)."""
    return [
        ("bridging-papers", {"a": "reinforcement learning", "b": "large language model"}),
        ("co-occurrence", {"min": "50"}),
        ("communities", {"min": "2"}),
        ("concept-tree", {"root": "machine learning"}),
        ("concepts-of-paper", {"paper": paper}),
        ("evidence", {"paper": paper, "concept": "machine learning"}),
        ("paper-graph", {"paper": paper}),
        ("papers-by-concept", {"concept": "reinforcement learning"}),
        ("papers-by-concept", {"concept": "machine learning"}),
        ("proposed-methods", {}),
        ("related-concepts", {"concept": "reinforcement learning"}),
        ("search", {"words": "human feedback"}),
        ("search", {"words": "learning"}),
        ("similar-papers", {"paper": paper}),
        ("top-concepts", {}),
        ("trend", {"concept": "deep learning"}),
    ]


def query(base: str, name: str, params: dict[str, str], timeout: int, out: Path) -> tuple[float, str]:
    """Run one named query as a `kg query` process; (seconds, rows or the failure)."""
    argv = [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
    fmt = "nt" if name == "paper-graph" else "tsv"
    t = time.perf_counter()
    proc = subprocess.run([*KG, "query", name, "--endpoint", f"{base}/query", *argv, "-f", fmt, "-o", str(out),
                           "--timeout", str(timeout)], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        return seconds, "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:150]
    lines = out.read_text(encoding="utf-8").count("\n")
    return seconds, str(lines if fmt == "nt" else lines - 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", type=Path, help="a built and analysed graph (Turtle or N-Triples)")
    ap.add_argument("--copies", type=int, default=47)
    ap.add_argument("--timeout", type=int, default=600, help="seconds a query may run, on the server and in kg query")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--store", type=Path, help="an Oxigraph store this script loaded before: skip the load")
    ap.add_argument("--keep", action="store_true", help="keep the store")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kg-server-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"# kg named queries on oxigraph serve, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    once, each = split(args.graph)
    papers = each.count(IDENTIFIER)
    first = min(line.split(b'"')[1] for line in each.splitlines() if IDENTIFIER in line).decode()
    paper = f"c{args.copies - 1}-{first}" if args.copies > 1 else first
    n_once, n_each = once.count(b"\n"), each.count(b"\n")
    lines = n_once + args.copies * n_each
    print(f"graph: {papers} papers, {n_once} lines about no paper, {n_each} about papers; "
          f"x{args.copies}: {papers * args.copies} papers, {lines} lines, {(len(once) + args.copies * len(each)) / 2**30:.1f} GiB of N-Triples",
          flush=True)
    store = args.store or work / "store"
    if args.store is None:
        seconds = load(store, once, each, args.copies)
        print(f"oxigraph load: {seconds:.0f} s, {lines / seconds:.0f} triples/s", flush=True)
    size = sum(f.stat().st_size for f in store.rglob("*") if f.is_file())
    print(f"store on disk: {size / 2**30:.1f} GiB, {size / lines:.0f} bytes a triple", flush=True)
    proc, base = serve(store, args.timeout)
    try:
        t = time.perf_counter()
        import kg

        try:
            held = kg.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", endpoint=f"{base}/query", timeout=args.timeout).column("n")[0]
            print(f"store holds {held} triples (count: {time.perf_counter() - t:.1f} s)", flush=True)
        except kg.QueryError as exc:
            print(f"store count: failed after {time.perf_counter() - t:.1f} s ({exc})", flush=True)
        print(f"{'query':<20} {'parameters':<58} {'rows':>9} {'seconds':>8}", flush=True)
        for name, params in runs(paper):
            seconds, rows = query(base, name, params, args.timeout, work / f"{name}.out")
            shown = " ".join(f"{k}={v}" for k, v in params.items())
            print(f"{name:<20} {shown:<58} {rows:>9} {seconds:>8.1f}", flush=True)
    finally:
        proc.terminate()
        proc.wait(60)
        if not args.keep and args.store is None:
            shutil.rmtree(store, ignore_errors=True)
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
