"""A sharded graph: a folder of N-Triples files and the manifest that lists them.

`kg build --engine dask` writes one; `kg push` and `kg build --update` read one. The manifest is
the commit point: shard files are written first (each atomically), the manifest last (atomically),
so a shard the manifest does not list is not part of the graph, and a reader never sees half a build.
Authors, venues and methods are described in every shard that uses them: the union of the shards
(as a set of triples, which is what a store keeps) is the graph a local build makes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.core.errors import InputError
from kg.graph.atomic import atomic_write

MANIFEST = "manifest.json"
FORMAT = "kg-shards/1"


@dataclass(frozen=True)
class Shard:
    """One N-Triples file of a sharded graph, with what it holds."""

    file: str  # a name inside the folder
    papers: int
    triples: int
    bytes: int
    activity: str  # the prov:Activity (build or update) that wrote it


@dataclass(frozen=True)
class Manifest:
    """What a sharded graph folder holds: its shards in order, and how it was made."""

    shards: tuple[Shard, ...]
    inputs: tuple[str, ...]
    activities: tuple[dict[str, Any], ...]
    scheme_versions: tuple[str, ...]
    base: str
    kg_version: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def papers(self) -> int:
        return sum(s.papers for s in self.shards)

    @property
    def triples(self) -> int:
        return sum(s.triples for s in self.shards)

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kg_version": self.kg_version,
            "base": self.base,
            "scheme_versions": list(self.scheme_versions),
            "inputs": list(self.inputs),
            "papers": self.papers,
            "triples": self.triples,
            "activities": list(self.activities),
            "shards": [s.__dict__ for s in self.shards],
            **self.extra,
        }


def is_sharded(path: str | Path) -> bool:
    """Whether `path` is a folder holding a shard manifest."""
    return (Path(path) / MANIFEST).is_file()


def read(folder: str | Path) -> Manifest:
    """The manifest of a sharded graph folder; InputError naming the file when it is missing or broken, or when a shard
    entry is not a plain N-Triples file name of the folder with whole-number counts (`_entry`)."""
    path = Path(folder) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        if not isinstance(data["shards"], list):
            raise TypeError("'shards' is not a list")
        shards = tuple(_entry(path, i, s) for i, s in enumerate(data["shards"]))
        return Manifest(
            shards, tuple(data["inputs"]), tuple(data["activities"]), tuple(data["scheme_versions"]), data["base"], data["kg_version"]
        )
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; {folder} is not a sharded graph (build one with 'kg build --engine dask -o FOLDER')") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: not a kg shard manifest ({type(exc).__name__}: {_short(exc)}); rebuild the folder") from None


MAX_COUNT = (1 << 63) - 1  # what a shard's papers, triples and bytes may be at most (a file size fits in it)
COUNTS = ("papers", "triples", "bytes")


def _entry(path: Path, position: int, entry: object) -> Shard:
    """One shard entry of the manifest at `path`, checked: a plain N-Triples file name of the folder (no '/', no '..',
    not absolute: kg reads and deletes only its own folder's files) and whole-number counts from 0 to MAX_COUNT."""
    if not isinstance(entry, dict):
        raise InputError(f"{path}: shard {position + 1} is not an object; rebuild the folder")
    name = entry.get("file")
    if not isinstance(name, str) or not _plain(name):
        raise InputError(f"{path}: shard {_short(name, 300)} is not an N-Triples file of this folder (a plain name ending in .nt: "
                         "no '/', '..' or absolute path); rebuild the folder with 'kg build --engine dask'")
    for key in COUNTS:
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise InputError(f"{path}: shard {name!r}: {key!r} must be a whole number from 0 to {MAX_COUNT}, not {_short(value)}; "
                             "rebuild the folder")
    if not isinstance(entry.get("activity"), str):
        raise InputError(f"{path}: shard {name!r}: 'activity' must be the IRI of a build, not {_short(entry.get('activity'))}; "
                         "rebuild the folder")
    return Shard(name, entry["papers"], entry["triples"], entry["bytes"], entry["activity"])


def _plain(name: str) -> bool:
    """Whether `name` is what a manifest may list: a plain N-Triples file name (one path part, no '..', no control
    character, ending in .nt)."""
    return name.endswith(".nt") and name.isprintable() and "/" not in name and "\\" not in name and Path(name).name == name


def _short(value: object, width: int = 60) -> str:
    """A value (or error) as it goes in a one-line message: its repr, cut to `width` characters."""
    text = repr(value) if not isinstance(value, BaseException) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def path_of(folder: str | Path, name: str, manifest: Path | None = None) -> Path:
    """The file of shard `name` (a `_plain` name) in `folder`, once it is a file there whose real path is in the folder too
    (a link pointing out of the folder is refused); InputError naming the manifest otherwise."""
    folder = Path(folder)
    listed = manifest or folder / MANIFEST
    path = folder / name
    if not path.is_file():
        raise InputError(f"{path}: listed in {listed} but missing; rebuild the folder")
    real = path.resolve()
    if real.parent != folder.resolve():
        raise InputError(f"{listed}: shard {name!r} is a link to {real}, outside the folder; a shard folder reads only its own "
                         "files: put the shard in the folder, or rebuild it")
    return path


def files(folder: str | Path) -> list[Path]:
    """The shard files of a sharded graph, in manifest order; InputError when one is missing or not the folder's own (`path_of`)."""
    folder = Path(folder)
    return [path_of(folder, s.file) for s in read(folder).shards]


def write(folder: str | Path, manifest: Manifest) -> Path:
    """Write the manifest atomically (the commit point of a build or update); return its path."""
    path = Path(folder) / MANIFEST
    with atomic_write(path) as stream:
        stream.write(json.dumps(manifest.as_json(), indent=1, ensure_ascii=False).encode("utf-8") + b"\n")
    return path
