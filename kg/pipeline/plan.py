"""One plan for a build or an update, whatever engine extracts (local, worker processes, Dask).

The plan says which papers of the inputs are extracted (new, or held with another abstract: changed), which are left
as the graph holds them (unchanged, or held under another id: duplicates), what IRI segment each extracted paper gets,
and which options apply (`Options`, the build options spelled once). An engine executes the plan: it decides only where
extraction runs and how the result is written (one file, or a folder of shards). What a graph holds comes to the plan
as `Held`, from a graph file's query index or from a shard folder's sidecars; the checks that a graph fits the options
(`fits`) are made here once for both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from kg.core.errors import InputError, UsageError
from kg.extract import dedup
from kg.extract import scheme as scheme_
from kg.graph.vocabulary import DEFAULT_BASE, Namespaces
from kg.pipeline import triples


@dataclass(frozen=True)
class Options:
    """How papers are read and extracted, the same for a build and an update on every engine."""

    schemes: tuple[Path, ...] = ()
    default_scheme: bool = True
    threshold: float | None = None
    model: Path | None = None
    base: str = DEFAULT_BASE
    skip_bad: bool = False
    venue: str | None = None  # for the papers whose records have none
    year: int | None = None
    keep_duplicates: bool = False

    def __post_init__(self) -> None:
        Namespaces(self.base)  # a bad --base fails before any work

    @classmethod
    def of(cls, schemes: Sequence[str | Path] | str | Path = (), model: str | Path | None = None, **rest: Any) -> Options:
        """Options from the keywords of kg.build and kg.update (scheme and model paths as str or Path, one scheme or several)."""
        schemes = (schemes,) if isinstance(schemes, (str, Path)) else schemes
        return cls(schemes=tuple(Path(s) for s in schemes), model=None if model is None else Path(model), **rest)

    @property
    def ns(self) -> Namespaces:
        return Namespaces(self.base)

    def scheme_files(self) -> list[str | Path]:
        return [*(scheme_.default_scheme_files() if self.default_scheme else ()), *self.schemes]

    def scheme(self) -> scheme_.Scheme:
        return scheme_.load(self.scheme_files())

    def reads(self) -> list[Path]:
        """The files these options make a run read besides its inputs (for refuse_overwrite)."""
        return [*self.schemes, *([self.model] if self.model is not None else [])]


@dataclass(frozen=True)
class Entry:
    """One paper of the inputs, as the plan needs it: id, hash of its abstract (kg.graph.facts.digest), where, DOI."""

    id: str
    digest: str
    where: str
    doi: str | None = None


@dataclass(frozen=True)
class Held:
    """What a graph holds: each paper's id and IRI segment, each segment's abstract hash, DOIs (to segments)."""

    segments: Mapping[str, str] = field(default_factory=dict)  # id -> IRI segment under BASE/paper/
    digests: Mapping[str, str] = field(default_factory=dict)  # IRI segment -> abstract hash
    dois: Mapping[str, str] = field(default_factory=dict)  # DOI -> IRI segment


@dataclass(frozen=True)
class Plan:
    """What a run extracts (ids in input order, with their IRI segments) and what it leaves as the graph holds it."""

    extract: tuple[str, ...]
    segments: Mapping[str, str]  # id -> IRI segment, for every id extracted
    changed: Mapping[str, str]  # id -> IRI segment of the held papers whose abstract changed: their old triples go
    unchanged: int = 0  # papers of the inputs left as held (`duplicates` of them under another id)
    duplicates: int = 0
    problems: tuple[str, ...] = ()

    @property
    def added(self) -> int:
        return len(self.extract) - len(self.changed)


def plan(entries: Iterable[Entry], held: Held | None = None, *, ns: Namespaces = Namespaces(), keep_duplicates: bool = False) -> Plan:
    """The plan of a build (`held` None) or of an update of a graph that holds `held`.

    A paper whose id the graph holds is unchanged when its abstract hash is the held one, else changed: extracted
    again under its old IRI. A paper under a new id whose DOI or abstract the graph holds is a duplicate, reported
    and not added, unless `keep_duplicates`.
    """
    held = held if held is not None else Held()
    by_digest: dict[str, str] = {}
    for held_segment, value in held.digests.items():
        by_digest.setdefault(value, held_segment)
    extract: list[str] = []
    changed: dict[str, str] = {}
    reported: list[str] = []
    unchanged = 0
    for entry in entries:
        segment = held.segments.get(entry.id)
        if segment is not None:
            if held.digests.get(segment) == entry.digest:
                unchanged += 1
                continue
            changed[entry.id] = segment
        elif not keep_duplicates:
            by_doi = held.dois.get(entry.doi) if entry.doi else None
            same = by_doi or by_digest.get(entry.digest)
            if same is not None:
                unchanged += 1
                reported.append(f"{entry.where}: already in the graph as <{ns.base}paper/{same}> (same {'DOI' if by_doi else 'abstract'}, "
                                f"id {entry.id!r}); not added again, --keep-duplicates adds it")
                continue
        extract.append(entry.id)
    segments = dict(changed)
    segments.update(triples.paper_slugs((i for i in extract if i not in changed), taken=held.digests.keys()))
    problems = tuple(dedup.summarised(reported, "papers already in the graph"))
    return Plan(tuple(extract), segments, changed, unchanged, len(reported), problems)


def fits(graph: str | Path, options: Options, scheme: scheme_.Scheme, *, under_base: bool, versions: Iterable[str], built: bool) -> None:
    """UsageError or InputError unless the graph `graph` (made by kg when `built`, its papers under --base when `under_base`,
    with scheme `versions`) can be updated with these options and `scheme`."""
    if not built:
        raise InputError(f"{graph}: not a graph kg built (it has no kg build record); build it with 'kg build INPUT... -o {graph}' instead of --update")
    if not under_base:
        raise UsageError(f"{graph}: its papers are not under --base {options.ns.base}; pass the --base it was built with")
    held = set(versions)
    if held and scheme.versions and held != set(scheme.versions):
        raise UsageError(f"{graph} was built with concept scheme version {', '.join(sorted(held))}, the scheme now is "
                         f"{', '.join(scheme.versions)}; run a full 'kg build' instead of --update")
