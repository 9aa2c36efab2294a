"""`kg build --update`: add new papers to a built graph without extracting the old ones again.

What an update keeps stable: every triple already in the graph stays as it is, in its place, so
existing papers keep the scores they got when they were built. Only papers that are new (an id
the graph does not have) or changed (same id, different abstract: compared by a hash of the
stored abstract) are extracted. A changed paper's old triples (the paper and its annotations) are
dropped and the paper is added again. New papers are extracted by themselves, with no statistics
of the papers already in the graph: when every concept of the scheme has a bundled corpus prior
(the default scheme), a paper's links depend on that paper alone and match a full rebuild's; with
concepts that have none, their document frequencies are counted over the new papers only, and a
full rebuild is the reference.

Each update is its own `prov:Activity` (`prov:wasInformedBy` the earlier builds) and the new
papers are `prov:wasGeneratedBy` it. Updating with inputs that are all in the graph already
leaves the file untouched, byte for byte. Turtle and N-Triples graphs are appended to (the old
bytes copied by the kernel, the new papers' triples serialized after them); other formats, and a
graph with a changed paper, are read whole and rewritten. What the update knows of the graph (its
papers' ids and abstract hashes, builds, authors, venues, scheme version) comes from the graph's
query index (kg.graph.index_file.known), made by one parse of the graph when it is missing or stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from kg import extract
from kg.core.defaults import BUILD_JOBS
from kg.extract import ingest
from kg.graph.facts import digest
from kg.graph.handle import APPENDABLE, Derive, GraphFile, Writing, refuse_overwrite
from kg.graph.vocabulary import DEFAULT_BASE
from kg.pipeline import parallel, triples
from kg.pipeline import plan as plan_
from kg.pipeline.plan import Options


@dataclass(frozen=True)
class Updated:
    """What an update did: the file written (or left alone) and how many papers it added."""

    path: Path
    added: int
    replaced: int
    unchanged: int
    problems: tuple[str, ...] = field(default=())
    analysed: bool = False  # the graph holds a `kg analyze` result, which describes the papers before the update
    duplicates: int = 0  # papers of the inputs the graph holds under another id (same abstract), of `unchanged`
    notes: tuple[str, ...] = field(default=())  # advice about the inputs (kg.extract.ingest.Ingested.notes)

    @property
    def stale_analysis(self) -> bool:
        """True when papers were added to an analysed graph: its communities, ranks and similar papers miss them."""
        return self.analysed and self.changed

    @property
    def changed(self) -> bool:
        return bool(self.added or self.replaced)


def update(
    graph: str | Path,
    inputs: Iterable[str | Path],
    *,
    output: str | Path | None = None,
    schemes: Sequence[str | Path] = (),
    default_scheme: bool = True,
    threshold: float | None = None,
    model: str | Path | None = None,
    base: str = DEFAULT_BASE,
    skip_bad: bool = False,
    jobs: int | str = BUILD_JOBS,
    progress: bool | None = None,
    derived: Sequence[Derive] = (),
    venue: str | None = None,
    year: int | None = None,
    keep_duplicates: bool = False,
) -> Updated:
    """Add the papers of `inputs` that `graph` lacks (or has with another abstract); write to `output` or in place
    (`derived`: what makes the output's page or store once it is written, in the same transaction).

    The update is one transaction on the output (kg.graph.handle.GraphFile.transaction): its lock is held for the
    whole update, so a second writer of the same graph (an update, a build, `kg analyze`) waits, then reads the
    graph the first one wrote; and the result replaces nothing that changed since the update read the graph.
    A paper the graph holds under another id (the same DOI or abstract) is not added again unless `keep_duplicates`
    (kg.pipeline.plan).
    """
    options = Options.of(schemes, model, default_scheme=default_scheme, threshold=threshold, base=base,
                         skip_bad=skip_bad, venue=venue, year=year, keep_duplicates=keep_duplicates)
    return update_with(graph, inputs, options, output=output, jobs=jobs, progress=progress, derived=derived)


def update_with(graph: str | Path, inputs: Iterable[str | Path], options: Options, *, output: str | Path | None = None, jobs: int | str = BUILD_JOBS,
                progress: bool | None = None, derived: Sequence[Derive] = (), kept: Sequence[Derive] = (), beside: Sequence[Path] = ()) -> Updated:
    """`update` with its options as one `Options` (what `kg build --update` calls). `kept`: what makes the derived files
    of a graph the update leaves as it was (kg.graph.handle.GraphFile.transaction); `beside`: the files the caller writes
    beside the output (its page), refused as the output is where one of them is a file the update reads."""
    parallel.processes(jobs)  # a bad --jobs fails before anything is read
    graph, out = Path(graph), Path(output) if output is not None else Path(graph)
    paths = (Path(inputs),) if isinstance(inputs, (str, Path)) else tuple(Path(p) for p in inputs)
    for written in (out, *beside):
        refuse_overwrite(written, [*paths, *options.reads()])  # every file the update reads but the graph
    source = GraphFile.existing(graph)
    with GraphFile(out).transaction(source, derived=derived, kept=kept) as writing:
        return _update(writing, paths, options, jobs=jobs, progress=progress)


def _update(writing: Writing, paths: tuple[Path, ...], options: Options, *, jobs: int | str, progress: bool | None) -> Updated:
    ns = options.ns
    source, target = writing.source, writing.target
    assert source is not None  # the transaction was begun from the graph read
    graph, out = source.path, target.path
    source.refuse_sharded()  # its bytes are not one file to append to: the cluster build adds shards to it
    target.refuse_sharded()
    scheme = options.scheme()
    got = ingest.read(paths, skip_bad=options.skip_bad, venue=options.venue, year=options.year, keep_duplicates=options.keep_duplicates)
    known = source.known()  # from the graph's query index (made by one parse if missing): an append adds to a copy of it
    existing = known.facts
    folder = ns.base + "paper/"
    plan_.fits(graph, options, scheme, built=bool(existing.builds), versions=existing.versions,
               under_base=not existing.digests or any(iri.startswith(folder) for iri in existing.digests))
    held = plan_.Held(
        {pid: iri[len(folder):] for pid, iri in existing.ids.items() if iri.startswith(folder)},
        {iri[len(folder):]: value for iri, value in existing.digests.items() if iri.startswith(folder)},
        {doi: iri[len(folder):] for doi, iri in (existing.dois or {}).items() if iri.startswith(folder)},
    )
    planned = plan_.plan((plan_.Entry(p.id, digest(p.abstract), p.where, p.doi) for p in got.papers), held, ns=ns,
                         keep_duplicates=options.keep_duplicates)
    problems = (*got.problems, *planned.problems)
    if not planned.extract:
        if out != graph:
            writing.copy(known.index)
        return Updated(out, 0, 0, planned.unchanged, problems, duplicates=planned.duplicates, notes=got.notes)
    chosen = set(planned.extract)
    new = [p for p in got.papers if p.id in chosen]
    replaced = {folder + segment for segment in planned.changed.values()}  # a changed paper keeps its IRI
    run = extract.make_extractor(scheme, options.threshold, options.model)
    extractions = parallel.extract(run, new, jobs=max(parallel.workers(jobs, len(new)), 1), progress=progress)  # waits for them all
    build = triples.build_node(new, ns)
    added = [
        *triples.provenance(build, new, scheme, ns=ns, inputs=tuple(p.name for p in paths), informed_by=existing.builds),
        *triples.paper_triples(new, extractions, build, ns=ns, authors=set(existing.authors), venues=set(existing.venues),
                               segments=dict(planned.segments)),
    ]
    if replaced or target.format not in APPENDABLE or source.format != target.format or known.index is None:
        # The slow path: the graph's triples are read whole, those of the changed papers dropped.
        writing.write(triples.without(source.read_triples(), replaced), added, ns=ns)
    else:
        writing.append(added, ns=ns, base=known.index)
    analysed = any(b.startswith(ns.base + "analysis/") for b in existing.builds)
    return Updated(out, planned.added, len(planned.changed), planned.unchanged, problems, analysed, planned.duplicates, got.notes)
