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
    """The manifest of a sharded graph folder; InputError naming the file when it is missing or broken."""
    path = Path(folder) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        shards = tuple(Shard(**s) for s in data["shards"])
        return Manifest(
            shards, tuple(data["inputs"]), tuple(data["activities"]), tuple(data["scheme_versions"]), data["base"], data["kg_version"]
        )
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; {folder} is not a sharded graph (build one with 'kg build --engine dask -o FOLDER')") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a kg shard manifest ({type(exc).__name__}: {exc}); rebuild the folder") from None


def files(folder: str | Path) -> list[Path]:
    """The shard files of a sharded graph, in manifest order; InputError when one is missing."""
    folder = Path(folder)
    out = [folder / s.file for s in read(folder).shards]
    for path in out:
        if not path.is_file():
            raise InputError(f"{path}: listed in {folder / MANIFEST} but missing; rebuild the folder")
    return out


def write(folder: str | Path, manifest: Manifest) -> Path:
    """Write the manifest atomically (the commit point of a build or update); return its path."""
    path = Path(folder) / MANIFEST
    with atomic_write(path) as stream:
        stream.write(json.dumps(manifest.as_json(), indent=1, ensure_ascii=False).encode("utf-8") + b"\n")
    return path
