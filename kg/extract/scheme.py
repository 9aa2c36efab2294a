"""The SKOS concept scheme that extraction links papers to, loaded from Turtle files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from kg.core.errors import SchemeError
from kg.graph import files as graph_files
from kg.graph.names import topic_key
from kg.graph.resources import data_path
from kg.graph.vocabulary import KG, OWL, RDF, SKOS

RDF_TYPE = RDF + "type"
OWL_VERSION = OWL + "versionInfo"
LABELS = (SKOS + "prefLabel", SKOS + "altLabel")
SHOWN_TAKEN = 3  # label warnings shown per user scheme file; the rest are counted


@dataclass(frozen=True)
class Concept:
    """One skos:Concept with what the extractor and the renderer need of it."""

    iri: str
    label: str
    alt_labels: tuple[str, ...]
    ambiguous: tuple[str, ...]  # labels that match only in exact case or when defined in the text
    broader: tuple[str, ...]
    definition: str | None
    kinds: tuple[str, ...]  # rdf:types besides skos:Concept, e.g. kg:Dataset, kg:Model
    senses: tuple[str, ...] = ()  # kg:senseTerm: words that show the ambiguous labels are meant in this sense

    @property
    def labels(self) -> tuple[str, ...]:
        return (self.label, *self.alt_labels)


@dataclass(frozen=True)
class Scheme:
    """All concepts of the loaded schemes, plus their triples to copy into every graph."""

    iris: tuple[str, ...]
    versions: tuple[str, ...]
    concepts: dict[str, Concept]
    triples: tuple  # pyoxigraph.Triple, in file order
    warnings: tuple[str, ...] = ()  # a user scheme's labels that kg's own concepts already carry

    def ancestors(self, iri: str) -> set[str]:
        """Every concept above `iri` through skos:broader (poly-hierarchy included)."""
        seen: set[str] = set()
        todo = list(self.concepts[iri].broader) if iri in self.concepts else []
        while todo:
            parent = todo.pop()
            if parent not in seen:
                seen.add(parent)
                if parent in self.concepts:
                    todo.extend(self.concepts[parent].broader)
        return seen

    def top(self, iri: str) -> str:
        """The top-level area of a concept: its first ancestor (by label) with no broader."""
        roots = sorted(
            (a for a in self.ancestors(iri) | {iri} if a in self.concepts and not self.concepts[a].broader),
            key=lambda a: self.concepts[a].label,
        )
        return roots[0] if roots else iri


def default_scheme_files() -> tuple[Path, ...]:
    """The concept scheme files shipped with kg."""
    return tuple(sorted((data_path("ontology") / "concepts").glob("*.ttl")))


def load(paths: Iterable[str | Path] | None = None) -> Scheme:
    """Load one or more SKOS files into a Scheme (the shipped scheme when `paths` is None)."""
    files = tuple(Path(p).resolve() for p in (paths if paths is not None else default_scheme_files()))
    if not files:
        raise SchemeError("no concept scheme given: pass --scheme FILE.ttl or keep the bundled scheme")
    return _load(files)


@lru_cache(maxsize=8)
def _load(files: tuple[Path, ...]) -> Scheme:
    import pyoxigraph as ox

    per_file: list[tuple[Path, list]] = []
    for path in files:
        try:
            with path.open("rb") as stream:
                per_file.append((path, list(ox.parse(stream, format=_format(path), base_iri=path.as_uri()))))
        except FileNotFoundError:
            raise SchemeError(f"{path}: no such concept scheme file") from None
        except SyntaxError as exc:
            raise SchemeError(f"{path}: not valid RDF ({exc})") from None
    built = _build(files, [t for _, triples in per_file for t in triples])
    return replace(built, warnings=_labels_taken(per_file, built))


def _labels_taken(per_file: list[tuple[Path, list]], built: Scheme) -> tuple[str, ...]:
    """Warnings for labels a user's scheme file gives a concept when a bundled concept already has them.

    Both concepts would then claim the same words in every abstract, and a mention links to one of them
    only. A label the user marks kg:ambiguousLabel, or adds to the bundled concept itself, is no surprise.
    """
    bundled = {p.resolve() for p in default_scheme_files()}
    owners: dict[str, set[str]] = {}
    for path, triples in per_file:
        if path in bundled:
            for t in triples:
                if t.predicate.value in LABELS and t.subject.value in built.concepts:
                    owners.setdefault(topic_key(t.object.value), set()).add(t.subject.value)
    out: list[str] = []
    for path, triples in per_file:
        if path in bundled:
            continue
        found: list[str] = []
        ambiguous = {(t.subject.value, t.object.value) for t in triples if t.predicate.value == KG + "ambiguousLabel"}
        for t in triples:
            iri, label = t.subject.value, t.object.value
            if t.predicate.value not in LABELS or iri not in built.concepts or (iri, label) in ambiguous:
                continue
            others = owners.get(topic_key(label), set())
            for other in sorted(others - {iri}) if iri not in others else ():
                message = (f"{path.name}: the label \"{label}\" of <{iri}> is already a label of kg's concept "
                           f"\"{built.concepts[other].label}\" <{other}>; a mention links to only one of them "
                           "(mark it kg:ambiguousLabel, or use kg's concept)")
                if message not in found:
                    found.append(message)
        out.extend(found[:SHOWN_TAKEN])
        if len(found) > SHOWN_TAKEN:
            out.append(f"{path.name}: {len(found) - SHOWN_TAKEN} more labels are labels of kg's concepts too "
                       "(--no-default-scheme uses your scheme alone)")
    return tuple(out)


def _format(path: Path):  # -> pyoxigraph.RdfFormat
    """The format of a scheme file by the suffix table of graph files (kg.graph.files); an unknown suffix is refused."""
    if path.suffix and graph_files.suffix_format(path) is None:
        raise SchemeError(f"{path}: unknown RDF format; use one of {', '.join(graph_files.READ_SUFFIXES)}")
    return graph_files.rdf_format(path)  # refuses a DTD (entities that expand to gigabytes), as for a graph file


def _build(files: tuple[Path, ...], triples: list) -> Scheme:
    by_subject: dict[str, dict[str, list]] = {}
    for t in triples:
        if t.subject.__class__.__name__ != "NamedNode":
            continue
        by_subject.setdefault(t.subject.value, {}).setdefault(t.predicate.value, []).append(t.object)
    schemes = sorted(s for s, props in by_subject.items() if _has_type(props, SKOS + "ConceptScheme"))
    versions = tuple(str(v.value) for s in schemes for v in by_subject[s].get(OWL_VERSION, []))
    concepts: dict[str, Concept] = {}
    for iri, props in by_subject.items():
        if not _has_type(props, SKOS + "Concept"):
            continue
        pref = _english(props.get(SKOS + "prefLabel", []))
        if not pref:
            raise SchemeError(f"{files[0]}: concept <{iri}> has no skos:prefLabel; add one")
        concepts[iri] = Concept(
            iri=iri,
            label=pref[0],
            alt_labels=tuple(dict.fromkeys(_english(props.get(SKOS + "altLabel", [])))),
            ambiguous=tuple(sorted(_english(props.get(KG + "ambiguousLabel", [])))),
            broader=tuple(sorted(o.value for o in props.get(SKOS + "broader", []))),
            definition=next(iter(_english(props.get(SKOS + "definition", []))), None),
            kinds=tuple(sorted(o.value for o in props.get(RDF_TYPE, []) if o.value != SKOS + "Concept")),
            senses=tuple(dict.fromkeys(_english(props.get(KG + "senseTerm", [])))),
        )
    if not concepts:
        raise SchemeError(f"{', '.join(map(str, files))}: no skos:Concept found; is this a SKOS concept scheme?")
    return Scheme(tuple(schemes), versions, concepts, tuple(triples))


def _has_type(props: dict[str, list], cls: str) -> bool:
    return any(o.value == cls for o in props.get(RDF_TYPE, []))


def _english(objects: list) -> list[str]:
    """Literal values in English or with no language, in file order."""
    return [o.value for o in objects if getattr(o, "language", None) in (None, "en") or str(o.language).startswith("en")]
