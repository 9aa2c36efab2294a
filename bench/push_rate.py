"""Push throughput into a real `oxigraph serve`: the Graph Store Protocol against batched INSERT DATA, one run.

    python bench/push_rate.py GRAPH.ttl [--copies 5] [--ways insert,gsp,bulk] [--workdir DIR]
    python bench/push_rate.py GRAPH.ttl --ways insert:1,gsp:1,bulk:1,bulk   # the slow ways on the first copy only

GRAPH is a built graph (the 21,368-paper ML corpus gives 106,840 papers at 5 copies). It is
replicated as bench/server_queries.py does (copy k renames every paper, annotation and similarity
IRI and paper identifier; nothing else changes) into a shard folder of N-Triples (one file a copy,
and a manifest), then pushed into a fresh on-disk server each way, in turn, with `kg push`'s
defaults: `--endpoint` (INSERT DATA, 20,000 triples a request), `--store` (the Graph Store Protocol,
10,000 a request), `--store --bulk` (Oxigraph's bulk loader, 500,000 a request). For each: seconds,
triples/s, the store's count against the distinct lines of the shards, and 200 random lines asked
for by ASK. `WAY:K` pushes only the first K copies that way: INSERT DATA and the transactional protocol
get slower per triple as the store grows, so their rate on one copy is their best, and a ratio to it
is a lower bound. First, what the client alone costs: reading the shards into requests (the bytes as they
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

from scale import Oxigraph, executable  # noqa: E402
from server_queries import copy, split  # noqa: E402

TARGET = "https://example.org/graph/bench"


def shard_folder(graph: Path, copies: int, folder: Path) -> tuple[int, int]:
    """Write the replicated graph as a shard folder kg push reads; (papers, lines)."""
    once, each = split(graph)
    from kg.graph import shards

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


def first_copies(folder: Path, k: int, out: Path) -> Path:
    """A shard folder of the scheme shard and the first k copies (hard links), for the slow way."""
    from kg.graph import shards

    manifest = shards.read(folder)
    out.mkdir(exist_ok=True)
    kept = manifest.shards[: k + 1]
    for s in kept:
        if not (out / s.file).exists():
            os.link(folder / s.file, out / s.file)
    shards.write(out, shards.Manifest(kept, manifest.inputs, manifest.activities, manifest.scheme_versions, manifest.base,
                                      manifest.kg_version))
    return out


def distinct(folder: Path) -> int:
    cmd = f"cat {folder}/*.nt | LC_ALL=C sort -u -S 2G | wc -l"
    return int(subprocess.run(cmd, shell=True, capture_output=True, text=True, check=True).stdout)


def client_only(folder: Path, graph: Path) -> None:
    """Seconds the client spends making the requests, with no server: shard bytes, and a Turtle file parsed."""
    from kg.graph import shards
    from kg.sparql import push as upload

    t = time.perf_counter()
    n = sum(c for c, _ in upload._lines(shards.files(folder), upload.STORE_BATCH))
    s = time.perf_counter() - t
    print(f"client only, shards as bytes: {n} triples in {s:.1f} s ({n / s:.0f} triples/s)", flush=True)
    t = time.perf_counter()
    n = sum(c for c, _ in upload._chunks([graph], upload.STORE_BATCH))
    s = time.perf_counter() - t
    print(f"client only, {graph.name} parsed and written as N-Triples: {n} triples in {s:.1f} s ({n / s:.0f} triples/s)", flush=True)


def sample(server: Oxigraph, folder: Path, target: str | None, k: int = 200) -> int:
    import kg

    rng = random.Random(19)
    lines = []
    for f in sorted(folder.glob("*.nt")):
        with f.open("rb") as stream:
            lines += rng.sample(stream.readlines(), 100)
    found = 0
    for line in rng.sample(lines, k):
        ask = "ASK { " + line.decode("utf-8").strip().removesuffix(" .") + " }"
        found += bool(kg.query(ask, endpoint=f"{server.base}/query", graph_iri=target).boolean)
    return found


def push(work: Path, folder: Path, how: str, target: str | None) -> dict:
    import kg

    if how == "offline":
        return offline(work, folder, target)
    server = Oxigraph(work)
    try:
        kwargs = {"insert": {"endpoint": f"{server.base}/update"},
                  "gsp": {"store": f"{server.base}/store"},
                  "bulk": {"store": f"{server.base}/store", "bulk": True}}[how]
        t = time.perf_counter()
        sent = kg.push(folder, graph_iri=target, **kwargs)  # type: ignore[arg-type]
        return outcome(server, folder, target, sent, time.perf_counter() - t)
    finally:
        server.close()


def outcome(server: Oxigraph, folder: Path, target: str | None, sent: int, seconds: float) -> dict:
    """What one way did: its rate, and what the store holds afterwards (count, sampled lines, disk)."""
    return {"sent": sent, "seconds": seconds, "rate": sent / seconds, "held": server.count(target), "found": sample(server, folder, target),
            "disk": sum(f.stat().st_size for f in server.dir.rglob("*") if f.is_file())}


def offline(work: Path, folder: Path, target: str | None) -> dict:
    """The ceiling: the shards loaded by `oxigraph load` (the store's own offline bulk loader, no server), then served to count."""
    from kg.graph import shards

    location = Path(tempfile.mkdtemp(prefix="oxigraph-load-", dir=work))
    files = [str(f) for f in shards.files(folder)]
    cmd = [executable(), "load", "--location", str(location), "--file", *files, *(["--graph", target] if target else [])]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    seconds = time.perf_counter() - t
    server = Oxigraph(work, location)
    try:
        return outcome(server, folder, target, shards.read(folder).triples, seconds)
    finally:
        server.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", type=Path, help="a built graph")
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--ways", default="insert,gsp,bulk", help="ways in turn (insert, gsp, bulk, offline: `oxigraph load` with no "
                    "server, the store's ceiling); WAY:K pushes only the first K copies that way")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--insert-copies", type=int, help="push only the first K copies by INSERT DATA (its rate falls as the store "
                    "grows, so the ratio is then a lower bound)")
    ap.add_argument("--default-graph", action="store_true", help="push into the default graph, not the named graph " + TARGET +
                    " (a store keeps a named graph's triples in more indexes, so each way is slower there)")
    ap.add_argument("--reuse", action="store_true", help="reuse the shard folder of an earlier run in --workdir")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kg-push-"))
    print(f"# kg push rates, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; into {'the default graph' if args.default_graph else TARGET}", flush=True)
    folder = work / "shards"
    if args.reuse:
        from kg.graph import shards

        manifest = shards.read(folder)
        papers, lines = manifest.papers, manifest.triples
    else:
        papers, lines = shard_folder(args.graph, args.copies, folder)
    unique = distinct(folder)
    print(f"shards: {papers} papers, {lines} lines ({unique} distinct), "
          f"{sum(f.stat().st_size for f in folder.glob('*.nt')) / 2**20:.0f} MB", flush=True)
    client_only(folder, args.graph)
    rates = {}
    for spec in args.ways.split(","):
        how, _, first = spec.partition(":")
        source = folder
        if first or (how == "insert" and args.insert_copies):
            source = first_copies(folder, int(first or args.insert_copies), work / f"first-{first or args.insert_copies}")
        r = push(work, source, how, None if args.default_graph else TARGET)
        rates[spec] = r["rate"]
        expect = unique if source == folder else distinct(source)
        print(f"push via {spec}: {r['sent']} triples in {r['seconds']:.1f} s, {r['rate']:.0f} triples/s; store holds {r['held']} "
              f"(distinct lines {expect}); "
              f"{r['found']}/200 sampled lines found; store on disk {r['disk'] / 2**20:.0f} MB; load average {os.getloadavg()[0]:.1f}",
              flush=True)
    base = next((w for w in rates if w.startswith("insert")), None)
    if base is not None:
        for how in rates:
            print(f"  {how} / {base}: {rates[how] / rates[base]:.2f}x")


if __name__ == "__main__":
    main()
