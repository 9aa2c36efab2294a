"""Push throughput into a real `oxigraph serve`: the Graph Store Protocol against batched INSERT DATA, one run.

    python bench/push_rate.py GRAPH.ttl [--copies 5] [--ways insert,gsp,bulk] [--workdir DIR]

GRAPH is a built graph (the 21,368-paper ML corpus gives 106,840 papers at 5 copies). It is
replicated as bench/server_queries.py does (copy k renames every paper, annotation and similarity
IRI and paper identifier; nothing else changes) into a shard folder of N-Triples (one file a copy,
and a manifest), then pushed into a fresh on-disk server each way, in turn, with `kg push`'s
defaults: `--endpoint` (INSERT DATA, 20,000 triples a request), `--store` (the Graph Store Protocol,
10,000 a request), `--store --bulk` (Oxigraph's bulk loader, 500,000 a request). For each: seconds,
triples/s, the store's count against the distinct lines of the shards, and 200 random lines asked
for by ASK. First, what the client alone costs: reading the shards into requests (the bytes as they
are), and parsing the same graph as Turtle and writing it as N-Triples (what a `.ttl` file costs).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from scale import Oxigraph  # noqa: E402
from server_queries import copy, split  # noqa: E402

TARGET = "https://example.org/graph/bench"


def shard_folder(graph: Path, copies: int, folder: Path) -> tuple[int, int]:
    """Write the replicated graph as a shard folder kg push reads; (papers, lines)."""
    once, each = split(graph)
    from kg import shards

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for k in range(copies + 1):
        name = f"part-bench-{k:05d}.nt"
        body = once if k == 0 else copy(each, k - 1)
        (folder / name).write_bytes(body)
        papers = body.count(b"<http://purl.org/dc/terms/identifier> ")
        written.append(shards.Shard(name, papers, body.count(b"\n"), len(body), "bench"))
    manifest = shards.Manifest(tuple(written), (str(graph),), (), (), "https://w3id.org/kg/", "bench")
    shards.write(folder, manifest)
    return manifest.papers, manifest.triples


def distinct(folder: Path) -> int:
    cmd = f"cat {folder}/*.nt | LC_ALL=C sort -u -S 2G | wc -l"
    return int(subprocess.run(cmd, shell=True, capture_output=True, text=True, check=True).stdout)


def client_only(folder: Path, graph: Path) -> None:
    """Seconds the client spends making the requests, with no server: shard bytes, and a Turtle file parsed."""
    from kg import shards, upload

    t = time.perf_counter()
    n = sum(c for c, _ in upload._lines(shards.files(folder), upload.STORE_BATCH))
    s = time.perf_counter() - t
    print(f"client only, shards as bytes: {n} triples in {s:.1f} s ({n / s:.0f} triples/s)", flush=True)
    t = time.perf_counter()
    n = sum(c for c, _ in upload._chunks([graph], upload.STORE_BATCH))
    s = time.perf_counter() - t
    print(f"client only, {graph.name} parsed and written as N-Triples: {n} triples in {s:.1f} s ({n / s:.0f} triples/s)", flush=True)


def sample(server: Oxigraph, folder: Path, k: int = 200) -> int:
    import kg

    rng = random.Random(19)
    lines = []
    for f in sorted(folder.glob("*.nt")):
        with f.open("rb") as stream:
            lines += rng.sample(stream.readlines(), 100)
    found = 0
    for line in rng.sample(lines, k):
        ask = "ASK { " + line.decode("utf-8").strip().removesuffix(" .") + " }"
        found += bool(kg.query(ask, endpoint=f"{server.base}/query", graph_iri=TARGET).boolean)
    return found


def push(work: Path, folder: Path, how: str) -> dict:
    import kg

    server = Oxigraph(work)
    try:
        kwargs = {"insert": {"endpoint": f"{server.base}/update"},
                  "gsp": {"store": f"{server.base}/store"},
                  "bulk": {"store": f"{server.base}/store", "bulk": True}}[how]
        t = time.perf_counter()
        sent = kg.push(folder, graph_iri=TARGET, **kwargs)  # type: ignore[arg-type]
        seconds = time.perf_counter() - t
        return {"sent": sent, "seconds": seconds, "rate": sent / seconds, "held": server.count(TARGET), "found": sample(server, folder),
                "disk": sum(f.stat().st_size for f in server.dir.rglob("*") if f.is_file())}
    finally:
        server.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", type=Path, help="a built graph")
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--ways", default="insert,gsp,bulk")
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kg-push-"))
    print(f"# kg push rates, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    folder = work / "shards"
    papers, lines = shard_folder(args.graph, args.copies, folder)
    unique = distinct(folder)
    print(f"shards: {papers} papers, {lines} lines ({unique} distinct), "
          f"{sum(f.stat().st_size for f in folder.glob('*.nt')) / 2**20:.0f} MB", flush=True)
    client_only(folder, args.graph)
    rates = {}
    for how in args.ways.split(","):
        r = push(work, folder, how)
        rates[how] = r["rate"]
        print(f"push via {how}: {r['seconds']:.1f} s, {r['rate']:.0f} triples/s; store holds {r['held']} (distinct lines {unique}); "
              f"{r['found']}/200 sampled lines found; store on disk {r['disk'] / 2**20:.0f} MB; load average {os.getloadavg()[0]:.1f}",
              flush=True)
    if "insert" in rates:
        for how in rates:
            print(f"  {how} / insert: {rates[how] / rates['insert']:.2f}x")


if __name__ == "__main__":
    main()
