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
from kg.core.errors import InputError, UsageError
from kg.extract import dedup, ingest
from kg.extract import scheme as scheme_
from kg.graph.facts import digest
from kg.graph.handle import APPENDABLE, Derive, GraphFile, Writing, refuse_overwrite
from kg.graph.vocabulary import DEFAULT_BASE, OA, Namespaces
from kg.pipeline import parallel, triples


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
    extractor: str = "phrase",
    threshold: float | None = None,
    model: str | Path | None = None,
    base: str = DEFAULT_BASE,
    skip_bad: bool = False,
    jobs: int = 1,
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
    (kg.extract.dedup.in_graph).
    """
    graph, out = Path(graph), Path(output) if output is not None else Path(graph)
    paths = (Path(inputs),) if isinstance(inputs, (str, Path)) else tuple(Path(p) for p in inputs)
    schemes = (schemes,) if isinstance(schemes, (str, Path)) else tuple(schemes)
    refuse_overwrite(out, [*paths, *schemes, *([model] if model is not None else [])])  # every file the update reads but the graph
    source = GraphFile.existing(graph)
    with GraphFile(out).transaction(source, derived=derived) as writing:
        return _update(writing, paths, schemes=schemes, default_scheme=default_scheme, extractor=extractor,
                       threshold=threshold, model=model, base=base, skip_bad=skip_bad, jobs=jobs, progress=progress,
                       read=dict(venue=venue, year=year, keep_duplicates=keep_duplicates))


def _update(
    writing: Writing,
    paths: tuple[Path, ...],
    *,
    schemes: Sequence[str | Path],
    default_scheme: bool,
    extractor: str,
    threshold: float | None,
    model: str | Path | None,
    base: str,
    skip_bad: bool,
    jobs: int,
    progress: bool | None,
    read: dict,
) -> Updated:
    ns = Namespaces(base)
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {jobs})")
    source, target = writing.source, writing.target
    assert source is not None  # the transaction was begun from the graph read
    graph, out = source.path, target.path
    source.refuse_sharded()  # its bytes are not one file to append to: the cluster build adds shards to it
    target.refuse_sharded()
    files = [*(scheme_.default_scheme_files() if default_scheme else ()), *schemes]
    scheme = scheme_.load(files)
    got = ingest.read(paths, skip_bad=skip_bad, **read)
    known = source.known()  # from the graph's query index (made by one parse if missing): an append adds to a copy of it
    existing = known.facts
    if not existing.builds:
        raise InputError(f"{graph}: not a graph kg built (it has no kg build record); build it with 'kg build INPUT... -o {graph}' instead of --update")
    if existing.digests and not any(iri.startswith(ns.base + "paper/") for iri in existing.digests):
        raise UsageError(f"{graph}: its papers are not under --base {ns.base}; pass the --base it was built with")
    if existing.versions and scheme.versions and existing.versions != set(scheme.versions):
        raise UsageError(
            f"{graph} was built with concept scheme version {', '.join(sorted(existing.versions))}, "
            f"the scheme now is {', '.join(scheme.versions)}; run a full 'kg build' instead of --update"
        )
    # The dedup hook: papers the graph holds under other ids are reported, not added (kg.extract.dedup).
    fresh, held, duplicates = (list(got.papers), [], 0) if read["keep_duplicates"] else dedup.in_graph(got.papers, existing.digests, existing.ids, digest, existing.dois)
    problems = (*got.problems, *dedup.summarised(held, "papers already in the graph"))
    new: list[ingest.Paper] = []
    replaced: set[str] = set()
    folder = ns.base + "paper/"
    segments: dict[str, str] = {}
    for paper in fresh:
        iri = existing.ids.get(paper.id)
        if iri is not None and existing.digests.get(iri) == digest(paper.abstract):
            continue
        if iri is not None:
            replaced.add(iri)  # a changed paper keeps its IRI
            segments[paper.id] = iri[len(folder):]
        new.append(paper)
    taken = (iri[len(folder):] for iri in existing.digests if iri.startswith(folder))
    segments.update(triples.paper_slugs((p.id for p in new if p.id not in segments), taken=taken))
    unchanged = len(got.papers) - len(new)
    if not new:
        if out != graph:
            writing.copy(known.index)
        return Updated(out, 0, 0, unchanged, problems, duplicates=duplicates, notes=got.notes)
    run = extract.make_extractor(extractor, scheme, threshold, model)
    extractions = parallel.extract(run, new, jobs=jobs, progress=progress)
    build = triples.build_node(new, ns)
    added = [
        *triples.provenance(build, new, scheme, ns=ns, inputs=tuple(p.name for p in paths), informed_by=existing.builds),
        *triples.paper_triples(new, extractions, build, ns=ns, authors=set(existing.authors), venues=set(existing.venues), segments=segments),
    ]
    if replaced or target.format not in APPENDABLE or source.format != target.format or known.index is None:
        # The slow path: the graph's triples are read whole, those of the changed papers dropped.
        writing.write(_without(source.read_triples(), replaced), added, ns=ns)
    else:
        writing.append(added, ns=ns, base=known.index)
    analysed = any(b.startswith(ns.base + "analysis/") for b in existing.builds)
    return Updated(out, len(new) - len(replaced), len(replaced), unchanged, problems, analysed, duplicates, got.notes)


def _without(triples: list, papers: set[str]) -> list:
    """The triples minus those of the given papers and of their annotations (targets, selectors)."""
    if not papers:
        return triples
    oa = OA
    targets = {t.subject.value for t in triples if t.predicate.value == oa + "hasSource" and t.object.value in papers}
    gone = set(papers) | targets
    for t in triples:
        p = t.predicate.value
        if (p == oa + "hasTarget" and t.object.value in targets) or (p == oa + "hasSelector" and t.subject.value in targets):
            gone.add(t.subject.value if p == oa + "hasTarget" else t.object.value)
    return [t for t in triples if t.subject.value not in gone]
