"""`kg build --engine dask`: extraction on a Dask cluster, written as a sharded N-Triples graph.

Three steps, each a dask.bag over the input partitions (kg.pipeline.partitions):
1. scan: each worker reads its partition and returns the ids and abstract hashes of its records;
2. the client checks them as `kg.extract.ingest.read` would (bad records, duplicate ids: the first is
   kept) and makes the plan every engine executes (kg.pipeline.plan: which papers are new, changed, unchanged
   or held under another id, and each extracted paper's IRI segment), names the build after the ids it extracts
   (`triples.build_node_of_ids`), writes shard 0 (the scheme and provenance) and, for an update, writes anew the
   shards that hold a changed paper without it (kg.pipeline.shard_folder.without);
3. extract: each worker reads its partition again, extracts the papers the plan names with an extractor it built
   once (a per-process cache keyed by the options: the scheme and the spaCy pipeline are loaded on the worker,
   never pickled per task) and writes its shard atomically.
Records of one paper under other ids within the inputs are kept apart (as --keep-duplicates): merging them needs
every copy's fields on one worker.
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kg import extract
from kg.core import progress as progress_
from kg.core.defaults import CLUSTER_BLOCKSIZE
from kg.core.defaults import VERSION as __version__
from kg.core.errors import InputError, UsageError
from kg.extract import ingest
from kg.graph import files, shards, vocabulary
from kg.graph.atomic import atomic_write
from kg.graph.handle import GraphFile, Writing, refuse_overwrite
from kg.pipeline import plan as plan_
from kg.pipeline import shard_folder, triples
from kg.pipeline.build import _extract, sample_inputs
from kg.pipeline.partitions import Part, Scanned, plan, records, scan, shifted
from kg.pipeline.plan import Options


@dataclass(frozen=True)
class Sharded:
    """A cluster build or update: the folder, its manifest, and what was skipped or merged."""

    folder: Path
    manifest: shards.Manifest
    added: int
    problems: tuple[str, ...] = ()
    unchanged: int = 0
    replaced: int = 0  # papers held with another abstract, extracted again under their IRIs


@dataclass(frozen=True)
class _Task:
    part: Part
    first_line: int
    keep: frozenset[int]  # positions (among the partition's good records) of the papers the plan extracts
    shard: str


_LOCK = threading.Lock()


@functools.lru_cache(maxsize=2)
def _extractor(options: Options) -> extract.Extractor:
    """The worker's extractor, built on first use in each worker process and kept (`options`: with absolute paths, never
    the built objects)."""
    run = extract.make_extractor(options.scheme(), options.threshold, options.model)
    if not getattr(run, "per_paper", False):
        raise UsageError(
            "this scheme has concepts without corpus rates, so a paper's scores depend on the whole corpus: "
            "build it with the local engine (--engine local --jobs N)"
        )
    return run


def _extract_part(task: _Task, *, options: Options, folder: str, build_iri: str, segments: dict[str, str]) -> dict[str, Any]:
    """Extract one partition and write its shard (runs on a worker); return the shard's entry."""
    import pyoxigraph as ox

    from kg.graph.facts import digest

    with _LOCK:
        run = _extractor(options)
    papers: list[ingest.Paper] = []
    for item in records(task.part, task.first_line):
        if isinstance(item, ingest.Paper):
            papers.append(item)
    papers = [ingest.given(p, options.venue, options.year) for i, p in enumerate(papers) if i in task.keep]
    kept, extractions, problems = _extract(run, tuple(papers), options.skip_bad) if papers else ((), (), ())
    ns = options.ns
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
    shard_folder.write_ids(path, [(p.id, made[p.id], digest(p.abstract)) for p in kept])
    return {"file": task.shard, "papers": len(kept), "triples": count, "bytes": size, "activity": build_iri,
            "problems": list(problems), "described": described}


def _shared(ns: vocabulary.Namespaces) -> tuple[str, ...]:
    """The IRI folders of what papers share (authors, venues, methods): described once, in the last shard."""
    return (ns.base + "author/", ns.base + "venue/", ns.base + "method/")


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


def _check(parts: list[Part], scanned: list[Scanned], skip_bad: bool) -> tuple[list[int], list[list[tuple[int, plan_.Entry]]], list[str]]:
    """What `ingest.read` would keep: each partition's first line and its first records of an id (position, entry), problems."""
    first_lines: list[int] = []
    next_line: dict[str, int] = {}
    entries: list[list[tuple[int, plan_.Entry]]] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for part, sc in zip(parts, scanned):
        first = next_line.get(part.url, 1)
        first_lines.append(first)
        next_line[part.url] = first + sc.lines
        for message in sc.problems:
            if not skip_bad:
                raise InputError(shifted(message, part.url, first))
            problems.append(f"skipped {shifted(message, part.url, first)}")
        here: list[tuple[int, plan_.Entry]] = []
        for i, (pid, where, derived, hashed) in enumerate(zip(sc.ids, sc.wheres, sc.derived, sc.digests or itertools.repeat(""))):
            where = shifted(where, part.url, first)
            if pid in seen:
                problems.append(ingest.repeated(where, pid, derived, seen[pid]))
                continue
            seen[pid] = where
            here.append((i, plan_.Entry(pid, hashed, where)))
        entries.append(here)
    return first_lines, entries, problems


def build(inputs: Sequence[str | Path] | None, output: str | Path, options: Options | None = None, **engine: Any) -> Sharded:
    """Build (or, with `update=True`, update with `inputs`) the sharded graph in folder `output` (`engine`: the keywords
    of `_build` that say where extraction runs), one transaction on the folder (kg.graph.handle) as a local build is on
    its graph: the lock held for the whole run, the new manifest written only over the one an update read."""
    options = options or Options()
    refuse_overwrite(output, [*(inputs if inputs is not None else sample_inputs()), *options.reads()])  # every file the run reads
    folder = GraphFile(Path(output).absolute())
    with folder.transaction(folder if engine.get("update") and folder.exists else None) as writing:
        return _build(inputs, output, options, writing=writing, **engine)


def _build(
    inputs: Sequence[str | Path] | None,
    output: str | Path,
    options: Options,
    *,
    writing: Writing,
    scheduler: Any = None,
    workers: int = 2,
    blocksize: int = CLUSTER_BLOCKSIZE,
    progress: bool | None = None,
    update: bool = False,
) -> Sharded:
    """Execute the plan (kg.pipeline.plan) of a build or update of the sharded graph in folder `output` on a cluster.

    `scheduler` is a Dask scheduler address or a distributed.Client; None starts a LocalCluster of
    `workers` processes. The folder must be one all workers can write (a shared file system).
    """
    ns = options.ns
    folder = Path(output).absolute()
    old, scheme = _checked(folder, output, options, update)
    absolute = replace(options, schemes=tuple(p.absolute() for p in options.schemes), model=options.model.absolute() if options.model else None)
    urls = [str(p) for p in inputs] if inputs is not None else [str(p) for p in sample_inputs()]
    parts = plan(urls, blocksize)
    listed = set(shard_folder.listed(folder))
    names = [Path(u).name for u in urls]
    name = ""
    try:
        with _client(scheduler, workers) as client:
            # Abstract hashes only for an update (they tell changed papers): a new build's client holds less.
            scanned: list[Scanned] = _map(client, functools.partial(scan, hashes=old is not None), parts, progress, "scan")
            first_lines, entries, problems = _check(parts, scanned, options.skip_bad)
            held = shard_folder.held(folder, old) if old is not None else None
            planned = plan_.plan((e for here in entries for _, e in here), held, ns=ns, keep_duplicates=options.keep_duplicates)
            problems.extend(planned.problems)
            if not planned.extract:
                if old is None:
                    raise InputError(f"no papers to build: {problems[0].removeprefix('skipped ') if problems else 'the inputs hold no records'}")
                return Sharded(folder, old, 0, tuple(problems), planned.unchanged)
            chosen = set(planned.extract)
            node = triples.build_node_of_ids(planned.extract, ns)
            name = node.value.rsplit("/", 1)[-1]
            if any(f.startswith(f"part-{name}-") for f in listed):
                # A rebuild of the same papers: its shards take the other name, so that none the manifest lists is
                # written over before the new manifest is (the manifest's stamp stands for the folder: kg.graph.stamp).
                name += "b"
            # The shards holding the papers extracted again, written anew without them (the old ones go with the new manifest).
            rewritten = shard_folder.without(folder, old, set(planned.changed), ns, f"part-{name}-kept") if old is not None else {}
            segments = {pid: s for pid, s in planned.segments.items() if s != vocabulary.slug(pid)}  # only the rare renamed ones travel
            head_entry, made = _head_shard(folder, f"part-{name}-00000.nt", node, planned.extract, scheme, ns, names, old)
            tasks = [_Task(p, f, frozenset(i for i, e in here if e.id in chosen), f"part-{name}-{k + 1:05d}.nt")
                     for k, (p, f, here) in enumerate(zip(parts, first_lines, entries))]
            work = functools.partial(_extract_part, options=absolute, folder=str(folder), build_iri=node.value, segments=segments)
            done = _map(client, work, [t for t in tasks if t.keep], progress, "extract")
        for entry in done:
            problems.extend(entry.pop("problems"))
        tail_entry = _tail_shard(folder, f"part-{name}-described.nt", done, old, node.value)
        activity = {"iri": node.value, "papers": len(planned.extract), "inputs": names, "started": _started(made)}
        new = [head_entry, *(shards.Shard(**e) for e in done if e["papers"]), tail_entry]
        kept = [rewritten.get(s.file, s) for s in old.shards] if old is not None else []
        manifest = shards.Manifest(
            (*(s for s in kept if s is not None), *new),
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
    shard_folder.tidy(folder, set(rewritten) if old is not None else listed, manifest, [e["file"] for e in done if not e["papers"]])
    return Sharded(folder, manifest, sum(e["papers"] for e in done) - len(planned.changed), tuple(problems), planned.unchanged, len(planned.changed))


def _checked(folder: Path, output: str | Path, options: Options, update: bool) -> tuple[shards.Manifest | None, Any]:
    """The folder's manifest (for an update) and the scheme, once the folder and scheme are known to fit."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{output}: is a file; a cluster build writes a folder of shards (give a folder name)")
    old = shards.read(folder) if update else None
    if not update and folder.is_dir() and any(folder.iterdir()) and not shards.is_sharded(folder):
        raise UsageError(f"{output}: is a folder that is not a sharded graph; give a new or empty folder")
    scheme = options.scheme()  # here first: a bad scheme fails before the cluster starts
    if old is not None:
        plan_.fits(output, options, scheme, under_base=old.base == options.ns.base, versions=old.scheme_versions, built=True)
    return old, scheme


def _head_shard(folder: Path, head: str, node: Any, kept: Sequence[str], scheme: Any, ns: vocabulary.Namespaces, names: list[str],
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
    known = shard_folder.described(folder, old) if old is not None else set()
    lines: list[str] = []
    for entry in done:
        for iri, described in entry.pop("described").items():
            if iri not in known:
                known.add(iri)
                lines.extend(described)
    with atomic_write(folder / tail) as stream:
        stream.write("".join(f"{line} .\n" for line in lines).encode("utf-8"))
        return shards.Shard(tail, 0, len(lines), stream.tell(), build_iri)


def _started(made: list) -> str:
    """The prov:startedAtTime written in shard 0 (what the manifest's activity repeats)."""
    return next((t.object.value for t in made if t.predicate.value == vocabulary.PROV + "startedAtTime"), "")
