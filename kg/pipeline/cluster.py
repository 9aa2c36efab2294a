"""`kg build --engine dask`: extraction on a Dask cluster, written as a sharded N-Triples graph.

Three steps, each a dask.bag over the input partitions (kg.pipeline.partitions):
1. scan: each worker reads its partition and returns the ids and abstract hashes of its records;
2. the client checks them as `kg.extract.ingest.read` would (bad records, duplicate ids: the first is
   kept), gives every paper its IRI (`triples.paper_slugs` over all ids, in input order) and names the
   build after the ids (`triples.build_node_of_ids`), and writes shard 0: the scheme and provenance;
3. extract: each worker reads its partition again, extracts with an extractor it built once (a
   per-process cache keyed by the extractor's name, scheme files, threshold and model: the scheme and the
   spaCy pipeline are loaded on the worker, never pickled per task) and writes its shard atomically.
The manifest is written last (kg.graph.shards), and no shard a manifest lists is written again (a rebuild of the
same papers names its shards apart from the listed ones), so the manifest's stamp stands for the folder. A task that dies with its worker is run again elsewhere
and writes the same bytes under the same name, so no paper is lost or written twice.
The extractor must score each paper on its own (`per_paper`): the bundled one does with the
bundled scheme; a scheme with concepts the reference corpus lacks needs corpus counts, so it is refused.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg import extract
from kg.core import progress as progress_
from kg.core.defaults import VERSION as __version__
from kg.core.errors import InputError, UsageError
from kg.extract import ingest
from kg.extract import scheme as scheme_
from kg.graph import files, shards, vocabulary
from kg.graph.atomic import atomic_write
from kg.graph.handle import GraphFile, Writing
from kg.pipeline import triples
from kg.pipeline.build import _extract, sample_inputs
from kg.pipeline.partitions import BLOCKSIZE, Part, Scanned, plan, records, scan, shifted


@dataclass(frozen=True)
class Config:
    """What a worker needs to make its extractor: names and paths, never the built objects."""

    extractor: str
    scheme_files: tuple[str, ...]
    threshold: float | None
    base: str
    model: str | None = None


@dataclass(frozen=True)
class Sharded:
    """A cluster build or update: the folder, its manifest, and what was skipped or merged."""

    folder: Path
    manifest: shards.Manifest
    added: int
    problems: tuple[str, ...] = ()
    unchanged: int = 0


@dataclass(frozen=True)
class _Task:
    part: Part
    first_line: int
    drop: frozenset[int]  # positions (among the partition's good records) not built: duplicates, or already in the graph
    shard: str


_LOCK = threading.Lock()


@functools.lru_cache(maxsize=2)
def _extractor(config: Config) -> extract.Extractor:
    """The worker's extractor, built on first use in each worker process and kept."""
    run = extract.make_extractor(config.extractor, scheme_.load(list(config.scheme_files)), config.threshold, config.model)
    if not getattr(run, "per_paper", False):
        raise UsageError(
            "this scheme has concepts without corpus rates, so a paper's scores depend on the whole corpus: "
            "build it with the local engine (--engine local --jobs N)"
        )
    return run


def _extract_part(task: _Task, *, config: Config, folder: str, build_iri: str, segments: dict[str, str], skip_bad: bool) -> dict[str, Any]:
    """Extract one partition and write its shard (runs on a worker); return the shard's entry."""
    import pyoxigraph as ox

    from kg.graph.facts import digest

    with _LOCK:
        run = _extractor(config)
    papers: list[ingest.Paper] = []
    for item in records(task.part, task.first_line):
        if isinstance(item, ingest.Paper):
            papers.append(item)
    papers = [p for i, p in enumerate(papers) if i not in task.drop]
    kept, extractions, problems = _extract(run, tuple(papers), skip_bad) if papers else ((), (), ())
    ns = vocabulary.Namespaces(config.base)
    made = {p.id: segments.get(p.id) or vocabulary.slug(p.id) for p in kept}
    shared = _shared(ns)
    described: dict[str, list[str]] = {}  # author, venue, method → its description where first met here
    count = 0

    def papers_only(items: Iterator) -> Iterator:
        nonlocal count
        for t in items:
            if t.subject.value.startswith(shared):
                described.setdefault(t.subject.value, []).append(str(t))
                continue
            count += 1
            yield t

    path = Path(folder) / task.shard
    with atomic_write(path) as stream:
        files.write(papers_only(triples.paper_triples(kept, extractions, ox.NamedNode(build_iri), ns=ns, segments=made)), stream, "nt")
        size = stream.tell()
    with atomic_write(_ids_path(path)) as stream:
        stream.write("".join(f"{p.id}\t{made[p.id]}\t{digest(p.abstract)}\n" for p in kept).encode("utf-8"))
    return {"file": task.shard, "papers": len(kept), "triples": count, "bytes": size, "activity": build_iri,
            "problems": list(problems), "described": described}


def _shared(ns: vocabulary.Namespaces) -> tuple[str, ...]:
    """The IRI folders of what papers share (authors, venues, methods): described once, in the last shard."""
    return (ns.base + "author/", ns.base + "venue/", ns.base + "method/")


def _ids_path(shard: Path) -> Path:
    """The sidecar of a shard: id, IRI segment and abstract hash of each of its papers (read by --update)."""
    return shard.with_suffix(".ids.tsv")


@contextmanager
def _client(scheduler: Any, workers: int) -> Iterator[Any]:
    """A distributed.Client: of the scheduler at ADDRESS, a Client given as is, or of a new LocalCluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError('--engine dask needs Dask: pip install "kg[dask]"') from None
    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); is it running?") from None
        with client:
            yield client
        return
    import logging

    # Task failures come back to the client as kg errors; the workers' own log lines would repeat them as tracebacks.
    quiet = {"silence_logs": logging.CRITICAL, "dashboard_address": None}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, **quiet) as cluster, Client(cluster) as client:
        yield client


def _map(client: Any, fn: Callable, items: Sequence, progress: bool | None, desc: str) -> list:
    """fn over items as a dask.bag of one item a partition, computed on the cluster; results in order."""
    import dask.bag as db
    from distributed import as_completed

    if not items:
        return []
    bag = db.from_sequence(items, npartitions=len(items)).map(fn)
    futures = client.compute(bag.to_delayed())
    with progress_.step(desc, total=len(futures), unit="parts", show=progress) as tick:
        if tick is not progress_.silent:
            for _ in as_completed(futures):
                tick(1)
    return [item for chunk in client.gather(futures) for item in chunk]


def _check(parts: list[Part], scanned: list[Scanned], skip_bad: bool, existing: dict[str, str]) -> tuple[list[int], list[set[int]], list[str], list[str], int]:
    """What `ingest.read` would keep: first lines, dropped positions, kept ids, problems, and how many were already in the graph."""
    first_lines: list[int] = []
    next_line: dict[str, int] = {}
    drops: list[set[int]] = []
    kept: list[str] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    unchanged = changed = 0
    for part, sc in zip(parts, scanned):
        first = next_line.get(part.url, 1)
        first_lines.append(first)
        next_line[part.url] = first + sc.lines
        for message in sc.problems:
            if not skip_bad:
                raise InputError(shifted(message, part.url, first))
            problems.append(f"skipped {shifted(message, part.url, first)}")
        drop: set[int] = set()
        for i, (pid, where, derived, hashed) in enumerate(zip(sc.ids, sc.wheres, sc.derived, sc.digests or itertools.repeat(""))):
            where = shifted(where, part.url, first)
            if pid in seen:
                what = "the same abstract as" if derived else f"duplicate id {pid!r}, first at"
                problems.append(f"{where}: {what} {seen[pid]}; kept the first")
                drop.add(i)
            elif pid in existing:
                seen[pid] = where
                drop.add(i)
                unchanged += existing[pid] == hashed
                changed += existing[pid] != hashed
            else:
                seen[pid] = where
                kept.append(pid)
        drops.append(drop)
    if changed:
        problems.append(f"{changed} papers already in the graph have another abstract now; a sharded graph takes new papers only (rebuild it to refresh them)")
    if not kept and not existing:
        raise InputError(f"no papers to build: {problems[0].removeprefix('skipped ') if problems else 'the inputs hold no records'}")
    return first_lines, drops, kept, problems, unchanged


def build(inputs: Sequence[str | Path] | None, output: str | Path, **options: Any) -> Sharded:
    """Build (or, with `update=True`, add the new papers of `inputs` to) the sharded graph in folder `output`
    (options: those of `_build`), one transaction on the folder (kg.graph.handle) as a local build is on its graph:
    the lock held for the whole run, the new manifest written only over the one an update read."""
    folder = GraphFile(Path(output).absolute())
    with folder.transaction(folder if options.get("update") and folder.exists else None) as writing:
        return _build(inputs, output, writing=writing, **options)


def _build(
    inputs: Sequence[str | Path] | None,
    output: str | Path,
    *,
    writing: Writing,
    scheduler: Any = None,
    workers: int = 2,
    schemes: Sequence[str | Path] = (),
    default_scheme: bool = True,
    extractor: str = "phrase",
    threshold: float | None = None,
    model: str | Path | None = None,
    base: str = vocabulary.DEFAULT_BASE,
    skip_bad: bool = False,
    blocksize: int = BLOCKSIZE,
    progress: bool | None = None,
    update: bool = False,
) -> Sharded:
    """Build (or, with `update`, add the new papers of `inputs` to) the sharded graph in folder `output`.

    `scheduler` is a Dask scheduler address or a distributed.Client; None starts a LocalCluster of
    `workers` processes. The folder must be one all workers can write (a shared file system).
    """
    ns = vocabulary.Namespaces(base)
    folder = Path(output).absolute()
    old, scheme, scheme_files = _checked(folder, output, ns, update, schemes, default_scheme)
    config = Config(extractor, tuple(str(Path(f).absolute()) for f in scheme_files), threshold, ns.base, str(Path(model).absolute()) if model else None)
    urls = [str(p) for p in inputs] if inputs is not None else [str(p) for p in sample_inputs()]
    parts = plan(urls, blocksize)
    existing, taken = _existing(folder, old) if old is not None else ({}, [])
    listed = set(_listed(folder))
    names = [Path(u).name for u in urls]
    name = ""
    try:
        with _client(scheduler, workers) as client:
            # Abstract hashes only for an update (they tell changed papers): a new build's client holds less.
            scanned: list[Scanned] = _map(client, functools.partial(scan, hashes=old is not None), parts, progress, "scan")
            first_lines, drops, kept, problems, unchanged = _check(parts, scanned, skip_bad, existing)
            if not kept:
                assert old is not None
                return Sharded(folder, old, 0, tuple(problems), unchanged)
            node = triples.build_node_of_ids(kept, ns)
            name = node.value.rsplit("/", 1)[-1]
            if any(f.startswith(f"part-{name}-") for f in listed):
                # A rebuild of the same papers: its shards take the other name, so that none the manifest lists is
                # written over before the new manifest is (the manifest's stamp stands for the folder: kg.graph.stamp).
                name += "b"
            slugs = triples.paper_slugs(kept, taken=taken)
            segments = {pid: s for pid, s in slugs.items() if s != vocabulary.slug(pid)}  # only the rare renamed ones travel
            head_entry, made = _head_shard(folder, f"part-{name}-00000.nt", node, kept, scheme, ns, names, old)
            tasks = [_Task(p, f, frozenset(d), f"part-{name}-{i + 1:05d}.nt") for i, (p, f, d) in enumerate(zip(parts, first_lines, drops))]
            work = functools.partial(_extract_part, config=config, folder=str(folder), build_iri=node.value, segments=segments, skip_bad=skip_bad)
            done = _map(client, work, [t for t, sc in zip(tasks, scanned) if len(sc.ids) > len(t.drop)], progress, "extract")
        for entry in done:
            problems.extend(entry.pop("problems"))
        tail_entry = _tail_shard(folder, f"part-{name}-described.nt", done, old, node.value)
        activity = {"iri": node.value, "papers": len(kept), "inputs": names, "started": _started(made)}
        new = [head_entry, *(shards.Shard(**e) for e in done if e["papers"]), tail_entry]
        manifest = shards.Manifest(
            (*(old.shards if old is not None else ()), *new),
            (*(old.inputs if old is not None else ()), *names),
            (*(old.activities if old is not None else ()), activity),
            tuple(scheme.versions),
            ns.base,
            __version__,
        )
        writing.unchanged()  # the manifest this update read is still the folder's
        shards.write(folder, manifest)
    except BaseException:
        if name:  # this run's shards, not yet listed by any manifest: gone with it
            for path in folder.glob(f"part-{name}-*"):
                if path.name not in listed and path.name.removesuffix(".ids.tsv") + ".nt" not in listed:
                    path.unlink(missing_ok=True)
        raise
    _tidy(folder, listed if old is None else set(), manifest, done)
    return Sharded(folder, manifest, sum(e["papers"] for e in done), tuple(problems), unchanged)


def _checked(folder: Path, output: str | Path, ns: vocabulary.Namespaces, update: bool, schemes: Sequence[str | Path],
             default_scheme: bool) -> tuple[shards.Manifest | None, Any, list[str | Path]]:
    """The folder's manifest (for an update), the scheme and its files, once the folder and scheme are known to fit."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{output}: is a file; a cluster build writes a folder of shards (give a folder name)")
    old = shards.read(folder) if update else None
    if not update and folder.is_dir() and any(folder.iterdir()) and not shards.is_sharded(folder):
        raise UsageError(f"{output}: is a folder that is not a sharded graph; give a new or empty folder")
    if old is not None and old.base != ns.base:
        raise UsageError(f"{output}: its papers are under --base {old.base}; pass that --base")
    scheme_files = [*(scheme_.default_scheme_files() if default_scheme else ()), *schemes]
    scheme = scheme_.load(scheme_files)  # here first: a bad scheme fails before the cluster starts
    if old is not None and old.scheme_versions and scheme.versions and set(old.scheme_versions) != set(scheme.versions):
        raise UsageError(f"{output} was built with concept scheme version {', '.join(old.scheme_versions)}, the scheme now is "
                         f"{', '.join(scheme.versions)}; run a full build instead of --update")
    return old, scheme, scheme_files


def _head_shard(folder: Path, head: str, node: Any, kept: list, scheme: Any, ns: vocabulary.Namespaces, names: list[str],
                old: shards.Manifest | None) -> tuple[shards.Shard, list]:
    """Shard 0 of a run: the scheme (a new build only) and the build's provenance."""
    informed = [a["iri"] for a in old.activities] if old is not None else []
    with atomic_write(folder / head) as stream:
        made = [*(scheme.triples if old is None else ()), *triples.provenance(node, len(kept), scheme, ns=ns, inputs=names, informed_by=informed)]
        made = list({str(t): t for t in made}.values())  # a scheme may state a triple twice; a shard states it once
        files.write(made, stream, "nt")
        return shards.Shard(head, 0, len(made), stream.tell(), node.value), made


def _tail_shard(folder: Path, tail: str, done: list[dict], old: shards.Manifest | None, build_iri: str) -> shards.Shard:
    """The run's last shard: each author, venue and method described once, as where it is first met in input order
    (a local build's choice between spellings that share an IRI)."""
    known = _described(folder, old) if old is not None else set()
    lines: list[str] = []
    for entry in done:
        for iri, described in entry.pop("described").items():
            if iri not in known:
                known.add(iri)
                lines.extend(described)
    with atomic_write(folder / tail) as stream:
        stream.write("".join(f"{line} .\n" for line in lines).encode("utf-8"))
        return shards.Shard(tail, 0, len(lines), stream.tell(), build_iri)


def _tidy(folder: Path, stale: set[str], manifest: shards.Manifest, done: list[dict]) -> None:
    """Remove an earlier build's shards the new manifest no longer lists, and this run's empty ones."""
    for gone in stale - {s.file for s in manifest.shards}:
        (folder / gone).unlink(missing_ok=True)
        _ids_path(folder / gone).unlink(missing_ok=True)
    for entry in done:
        if not entry["papers"]:
            (folder / entry["file"]).unlink(missing_ok=True)
            _ids_path(folder / entry["file"]).unlink(missing_ok=True)


def _listed(folder: Path) -> list[str]:
    return [s.file for s in shards.read(folder).shards] if shards.is_sharded(folder) else []


def _started(made: list) -> str:
    """The prov:startedAtTime written in shard 0 (what the manifest's activity repeats)."""
    return next((t.object.value for t in made if t.predicate.value == vocabulary.PROV + "startedAtTime"), "")


def _described(folder: Path, manifest: shards.Manifest) -> set[str]:
    """The authors, venues and methods a sharded graph describes already (its '-described' shards)."""
    import pyoxigraph as ox

    out: set[str] = set()
    for shard in manifest.shards:
        if shard.file.endswith("-described.nt"):
            with shards.path_of(folder, shard.file).open("rb") as stream:
                out.update(t.subject.value for t in ox.parse(stream, format=ox.RdfFormat.N_TRIPLES))
    return out


def _existing(folder: Path, manifest: shards.Manifest) -> tuple[dict[str, str], list[str]]:
    """The papers of a sharded graph (id → abstract hash) and their IRI segments, from the shards' sidecars."""
    digests: dict[str, str] = {}
    taken: list[str] = []
    for shard in manifest.shards:
        if not shard.papers:
            continue
        path = _ids_path(folder / shard.file)
        if path.is_file():
            shards.path_of(folder, path.name)  # a sidecar that links out of the folder is refused, as a shard is
        try:
            for line in path.read_text(encoding="utf-8").splitlines():
                pid, segment, hashed = line.split("\t")
                digests[pid] = hashed
                taken.append(segment)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read the papers of shard {shard.file} ({exc}); rebuild the folder") from None
    return digests, taken
