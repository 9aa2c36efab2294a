"""`kg build --update` against a full rebuild, as whole processes, in one run.

    python bench/update_speed.py [--corpus ../shared/corpora/ml-abstracts.jsonl] [--repeat 3]

The corpus is split into the first 99 % ("old") and the last 1 % ("new"). The graph of the old
papers is built once (not timed). Then, `--repeat` times, interleaved so that the load of the
machine weighs on all of them alike:
  * full: `kg build ALL --no-render --jobs 1` (old + new), a whole process;
  * update: `kg build --update GRAPH NEW --no-render` on a fresh copy of the old graph and its index;
  * no-op: `kg build --update GRAPH OLD NEW --no-render` again on the result (must change nothing).
Once each, for reference: the update with no query index beside the graph (it makes one by parsing the graph), and
with an empty label-token cache (KG_CACHE_DIR). Medians are printed, with the ratios the issue asks
for (update and no-op against the full build) and byte checks of the results.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import KG, run_process

INDEX = ".kg-query.sqlite"


def sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora" / "ml-abstracts.jsonl")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, help="where corpora and graphs go [a temporary folder]")
    args = parser.parse_args()
    d = args.workdir or Path(tempfile.mkdtemp(prefix="kg-update-bench-"))
    d.mkdir(parents=True, exist_ok=True)
    lines = [line for line in args.corpus.read_text(encoding="utf-8").split("\n") if line.strip()]
    # On Linux a child's peak RSS counts this process's size when it forked: keep this one small.
    cut = len(lines) - max(1, len(lines) // 100)
    old, new, every = d / "old.jsonl", d / "new.jsonl", d / "all.jsonl"
    old.write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")
    new.write_text("\n".join(lines[cut:]) + "\n", encoding="utf-8")
    every.write_text("\n".join(lines) + "\n", encoding="utf-8")
    total = len(lines)
    del lines
    print(f"{total:,} papers: {cut:,} old, {total - cut} new; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    (d / "base").mkdir(exist_ok=True)
    base = d / "base" / "g.ttl"
    wall, _, _ = run_process([*KG, "build", str(old), "-o", str(base), "--no-render", "--jobs", "2"])
    print(f"(set-up: graph of the old papers built in {wall:.1f} s, {base.stat().st_size / 1e6:.0f} MB)")

    def fresh(name: str, index: bool = True) -> Path:
        """A copy of the old graph (same name, another folder) with or without its index."""
        shutil.rmtree(d / name, ignore_errors=True)
        (d / name).mkdir()
        graph = d / name / base.name
        shutil.copy2(base, graph)  # with its mtime: the index is stamped with it
        if index and base.with_name(base.stem + INDEX).is_file():  # (kg before the index had none)
            shutil.copy2(base.with_name(base.stem + INDEX), graph.with_name(graph.stem + INDEX))
        return graph

    times: dict[str, list[float]] = {"full": [], "update": [], "no-op": []}
    rss: dict[str, float] = {}
    unchanged: list[bool] = []
    results: list[str] = []  # sha256 of each update's output (bytes kept in memory would count in the children's peak RSS)
    for _ in range(args.repeat):
        wall, mb, _ = run_process([*KG, "build", str(every), "-o", str(d / "full.ttl"), "--no-render", "--jobs", "1"])
        times["full"].append(wall)
        rss["full"] = max(rss.get("full", 0), mb)
        graph = fresh("up")
        wall, mb, out = run_process([*KG, "build", "--update", str(graph), str(new), "--no-render"])
        assert f"{total - cut} papers added" in out, out
        times["update"].append(wall)
        rss["update"] = max(rss.get("update", 0), mb)
        before, mtime = sha(graph), graph.stat().st_mtime_ns
        results.append(before)
        wall, mb, out = run_process([*KG, "build", "--update", str(graph), str(old), str(new), "--no-render"])
        assert "up to date" in out, out
        times["no-op"].append(wall)
        rss["no-op"] = max(rss.get("no-op", 0), mb)
        unchanged.append(sha(graph) == before and graph.stat().st_mtime_ns == mtime)
    scan_graph = fresh("scan", index=False)
    scan, _, _ = run_process([*KG, "build", "--update", str(scan_graph), str(new), "--no-render"])
    with tempfile.TemporaryDirectory() as cache:
        os.environ["KG_CACHE_DIR"] = cache
        cold_graph = fresh("cold")
        cold, _, _ = run_process([*KG, "build", "--update", str(cold_graph), str(new), "--no-render"])
        del os.environ["KG_CACHE_DIR"]
    same = len(set(results)) == 1 and sha(scan_graph) == results[0] == sha(cold_graph)

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{'process':<34}{'median s':>9}  runs")
    for name, label in (("full", "full `kg build --jobs 1`"), ("update", "`kg build --update` (1 % new)"), ("no-op", "no-op re-run (all inputs again)")):
        print(f"{label:<34}{med[name]:>9.2f}  {', '.join(f'{t:.2f}' for t in times[name])}  (peak RSS {rss[name]:.0f} MB)")
    print(f"{'update, no index (made by a parse)':<34}{scan:>9.2f}")
    print(f"{'update, empty label-token cache':<34}{cold:>9.2f}")
    print(f"update {med['full'] / med['update']:.1f}x faster than the full build; no-op re-run {med['full'] / med['no-op']:.1f}x")
    print(f"no-op re-run left the file byte-identical (and its mtime): {all(unchanged)}; "
          f"every update wrote the same bytes (index, scan, cold cache): {same}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end; work files in {d}")


if __name__ == "__main__":
    main()
