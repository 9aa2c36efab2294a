"""`kg build --update`: add new papers to a built graph without extracting the old ones again.

What an update keeps stable: every triple already in the graph stays as it is, in its place, so
existing papers keep the scores they got when they were built. Only papers that are new (an id
the graph does not have) or changed (same id, different abstract: compared by a hash of the
stored abstract) are extracted. A changed paper's old triples (the paper and its annotations) are
dropped and the paper is added again. New papers are scored against the whole corpus where the
extractor uses corpus statistics: it is given, as background, how many papers of the graph have
an annotation of each concept. A full rebuild can therefore give slightly different scores from
a sequence of updates; it is the reference.

Each update is its own `prov:Activity` (`prov:wasInformedBy` the earlier builds) and the new
papers are `prov:wasGeneratedBy` it. Updating with inputs that are all in the graph already
leaves the file untouched, byte for byte. Turtle and N-Triples graphs are appended to; other
formats are rewritten.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from . import extract, ingest, parallel, rdf
from . import scheme as scheme_
from .atomic import atomic_write
from .errors import InputError, UsageError


@dataclass(frozen=True)
class Updated:
    """What an update did: the file written (or left alone) and how many papers it added."""

    path: Path
    added: int
    replaced: int
    unchanged: int
    problems: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return bool(self.added or self.replaced)


@dataclass
class _Existing:
    """What an update needs to know about a graph file, gathered in one pass over its triples."""

    triples: list
    papers: dict[str, str] = field(default_factory=dict)  # paper IRI -> sha256 of its abstract
    ids: dict[str, str] = field(default_factory=dict)  # paper id (dcterms:identifier) -> paper IRI
    builds: list[str] = field(default_factory=list)
    authors: set[str] = field(default_factory=set)
    venues: set[str] = field(default_factory=set)
    versions: set[str] = field(default_factory=set)
    background: Counter = field(default_factory=Counter)  # concept -> papers annotated with it


def digest(abstract: str) -> str:
    """The content hash that tells an unchanged paper from a changed one."""
    return hashlib.sha256(abstract.encode("utf-8")).hexdigest()


def update(
    graph: str | Path,
    inputs: Iterable[str | Path],
    *,
    output: str | Path | None = None,
    schemes: Sequence[str | Path] = (),
    default_scheme: bool = True,
    extractor: str = "phrase",
    threshold: float = extract.DEFAULT_THRESHOLD,
    base: str = rdf.DEFAULT_BASE,
    skip_bad: bool = False,
    jobs: int = 1,
    progress: bool = False,
) -> Updated:
    """Add the papers of `inputs` that `graph` lacks (or has with another abstract); write to `output` or in place."""
    graph, out = Path(graph), Path(output) if output is not None else Path(graph)
    ns = rdf.Namespaces(base)
    fmt = rdf.format_for(None, out)
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {jobs})")
    if not graph.is_file():
        raise InputError(f"{graph}: no such graph file; build it first with 'kg build INPUT -o {graph}'")
    paths = tuple(Path(p) for p in inputs)
    files = [*(scheme_.default_scheme_files() if default_scheme else ()), *schemes]
    scheme = scheme_.load(files)
    got = ingest.read(paths, skip_bad=skip_bad)
    existing = _scan(graph)
    if existing.papers and not any(iri.startswith(ns.base + "paper/") for iri in existing.papers):
        raise UsageError(f"{graph}: its papers are not under --base {ns.base}; pass the --base it was built with")
    if existing.versions and scheme.versions and existing.versions != set(scheme.versions):
        raise UsageError(
            f"{graph} was built with concept scheme version {', '.join(sorted(existing.versions))}, "
            f"the scheme now is {', '.join(scheme.versions)}; run a full 'kg build' instead of --update"
        )
    new: list[ingest.Paper] = []
    replaced: set[str] = set()
    folder = ns.base + "paper/"
    segments: dict[str, str] = {}
    for paper in got.papers:
        iri = existing.ids.get(paper.id)
        if iri is not None and existing.papers.get(iri) == digest(paper.abstract):
            continue
        if iri is not None:
            replaced.add(iri)  # a changed paper keeps its IRI
            segments[paper.id] = iri[len(folder):]
        new.append(paper)
    taken = (iri[len(folder):] for iri in existing.papers if iri.startswith(folder))
    segments.update(rdf.paper_slugs((p.id for p in new if p.id not in segments), taken=taken))
    unchanged = len(got.papers) - len(new)
    if not new:
        if out != graph:
            with atomic_write(out) as stream:
                stream.write(graph.read_bytes())
        return Updated(out, 0, 0, unchanged, got.problems)
    run = extract.make_extractor(extractor, scheme, threshold)
    options = {"background": existing.background, "background_papers": len(existing.papers)} if _takes_background(run) else {}
    extractions = parallel.extract(run, new, jobs=jobs, progress=progress, **options)
    build = rdf.build_node(new, ns)
    added = [
        *rdf.provenance(build, new, scheme, ns=ns, inputs=tuple(p.name for p in paths), informed_by=existing.builds),
        *rdf.paper_triples(new, extractions, build, ns=ns, authors=existing.authors, venues=existing.venues, segments=segments),
    ]
    if replaced or fmt not in ("ttl", "nt") or rdf.format_for(None, graph) != fmt:
        _rewrite(out, _without(existing.triples, replaced), added, fmt, ns)
    else:
        _append(graph, out, added, fmt, ns)
    return Updated(out, len(new) - len(replaced), len(replaced), unchanged, got.problems)


def _takes_background(run: object) -> bool:
    import inspect

    finish = getattr(run, "finish", None)
    if not callable(finish) or not callable(getattr(run, "read", None)):
        return False
    return "background" in inspect.signature(finish).parameters


def _scan(graph: Path) -> _Existing:
    """Parse the graph once and note its papers, builds, authors, venues and concept annotations."""
    triples = rdf.read_triples(graph)
    found = _Existing(triples)
    a, abstract, version = rdf.RDF + "type", rdf.DCTERMS + "abstract", rdf.KG + "schemeVersion"
    identifier = rdf.DCTERMS + "identifier"
    body, target, source = rdf.OA + "hasBody", rdf.OA + "hasTarget", rdf.OA + "hasSource"
    bodies: dict[str, str] = {}
    targets: dict[str, str] = {}
    sources: dict[str, str] = {}
    for t in triples:
        p = t.predicate.value
        if p == abstract:
            found.papers[t.subject.value] = digest(t.object.value)
        elif p == identifier:
            found.ids[t.object.value] = t.subject.value
        elif p == body:
            bodies[t.subject.value] = t.object.value
        elif p == target:
            targets[t.subject.value] = t.object.value
        elif p == source:
            sources[t.subject.value] = t.object.value
        elif p == a:
            kind = t.object.value
            if kind == rdf.PROV + "Activity":
                found.builds.append(t.subject.value)
            elif kind == rdf.FOAF + "Person":
                found.authors.add(t.subject.value)
            elif kind == rdf.FABIO + "ConferenceProceedings":
                found.venues.add(t.subject.value)
        elif p == version:
            found.versions.add(t.object.value)
    pairs = {(sources.get(targets.get(ann, ""), ""), concept) for ann, concept in bodies.items()}
    found.background.update(concept for paper, concept in pairs if paper)
    return found


def _without(triples: list, papers: set[str]) -> list:
    """The triples minus those of the given papers and of their annotations (targets, selectors)."""
    if not papers:
        return triples
    oa = rdf.OA
    targets = {t.subject.value for t in triples if t.predicate.value == oa + "hasSource" and t.object.value in papers}
    gone = set(papers) | targets
    for t in triples:
        p = t.predicate.value
        if (p == oa + "hasTarget" and t.object.value in targets) or (p == oa + "hasSelector" and t.subject.value in targets):
            gone.add(t.subject.value if p == oa + "hasTarget" else t.object.value)
    return [t for t in triples if t.subject.value not in gone]


def _append(graph: Path, out: Path, added: list, fmt: str, ns: rdf.Namespaces) -> None:
    """Write the graph's own bytes, then the new triples (their @prefix lines dropped: the file has them)."""
    import io

    buffer = io.BytesIO()
    rdf.write(added, buffer, fmt, ns=ns)
    lines = buffer.getvalue().splitlines(keepends=True)
    skip = 0
    while skip < len(lines) and lines[skip].startswith(b"@prefix "):
        skip += 1
    body = b"".join(lines[skip:])
    old = graph.read_bytes()
    with atomic_write(out) as stream:
        stream.write(old)
        if old and not old.endswith(b"\n"):
            stream.write(b"\n")
        stream.write(body)


def _rewrite(out: Path, kept: list, added: list, fmt: str, ns: rdf.Namespaces) -> None:
    with atomic_write(out) as stream:
        rdf.write([*kept, *added], stream, fmt, ns=ns)
