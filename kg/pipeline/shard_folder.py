"""What a cluster build keeps beside the shards of its folder: each shard's sidecar of papers (id, IRI segment, abstract
hash), read back as what the folder holds (`held`); the shards rewritten without the papers an update extracts again
(`without`); the authors, venues and methods the folder describes already; the tidying after a manifest is written.
"""

from __future__ import annotations

from pathlib import Path

from kg.core.errors import InputError
from kg.graph import files, shards
from kg.graph.atomic import atomic_write
from kg.graph.vocabulary import Namespaces
from kg.pipeline import triples
from kg.pipeline.plan import Held


def ids_path(shard: Path) -> Path:
    """The sidecar of a shard: id, IRI segment and abstract hash of each of its papers (read by --update)."""
    return shard.with_suffix(".ids.tsv")


def write_ids(shard: Path, rows: list[tuple[str, str, str]]) -> None:
    """The sidecar of `shard`: one line per paper (id, IRI segment, abstract hash)."""
    with atomic_write(ids_path(shard)) as stream:
        stream.write("".join(f"{pid}\t{segment}\t{hashed}\n" for pid, segment, hashed in rows).encode("utf-8"))


def _rows(folder: Path, shard: shards.Shard) -> list[tuple[str, str, str]]:
    path = ids_path(folder / shard.file)
    if path.is_file():
        shards.path_of(folder, path.name)  # a sidecar that links out of the folder is refused, as a shard is
    try:
        rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
        if any(len(row) != 3 for row in rows):
            raise ValueError("a line without three tab-separated fields")
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the papers of shard {shard.file} ({exc}); rebuild the folder") from None
    return [(pid, segment, hashed) for pid, segment, hashed in rows]


def held(folder: Path, manifest: shards.Manifest) -> Held:
    """The papers of a sharded graph (id -> IRI segment -> abstract hash), from the shards' sidecars."""
    segments: dict[str, str] = {}
    digests: dict[str, str] = {}
    for shard in manifest.shards:
        if shard.papers:
            for pid, segment, hashed in _rows(folder, shard):
                segments[pid] = segment
                digests[segment] = hashed
    return Held(segments, digests)


def without(folder: Path, manifest: shards.Manifest, changed: set[str], ns: Namespaces, name: str) -> dict[str, shards.Shard | None]:
    """The shards of `manifest` that hold a paper whose id is in `changed`, each written again under a new name (`name`
    and its place) without that paper's triples (kg.pipeline.triples.without): old shard -> new shard (None: nothing left).
    The old shards stay until a new manifest lists the new ones; no shard a manifest lists is written over."""
    out: dict[str, shards.Shard | None] = {}
    if not changed:
        return out
    for i, shard in enumerate(manifest.shards):
        if not shard.papers:
            continue
        rows = _rows(folder, shard)
        gone = {segment for pid, segment, _ in rows if pid in changed}
        if not gone:
            continue
        kept = triples.without(files.read_triples(shards.path_of(folder, shard.file)), {f"{ns.base}paper/{s}" for s in gone})
        left = [row for row in rows if row[1] not in gone]
        if not left and not kept:
            out[shard.file] = None
            continue
        path = folder / f"{name}-{i:05d}.nt"
        with atomic_write(path) as stream:
            files.write(kept, stream, "nt")
            size = stream.tell()
        write_ids(path, left)
        out[shard.file] = shards.Shard(path.name, len(left), len(kept), size, shard.activity)
    return out


def described(folder: Path, manifest: shards.Manifest) -> set[str]:
    """The authors, venues and methods a sharded graph describes already (its '-described' shards)."""
    import pyoxigraph as ox

    out: set[str] = set()
    for shard in manifest.shards:
        if shard.file.endswith("-described.nt"):
            with shards.path_of(folder, shard.file).open("rb") as stream:
                out.update(t.subject.value for t in ox.parse(stream, format=ox.RdfFormat.N_TRIPLES))
    return out


def tidy(folder: Path, stale: set[str], manifest: shards.Manifest, empty: list[str]) -> None:
    """Remove the shards (and sidecars) of `stale` the new manifest no longer lists, and this run's `empty` ones."""
    for gone in (stale - {s.file for s in manifest.shards}) | set(empty):
        (folder / gone).unlink(missing_ok=True)
        ids_path(folder / gone).unlink(missing_ok=True)


def listed(folder: Path) -> list[str]:
    """The shard files the folder's manifest lists (none when it has none)."""
    return [s.file for s in shards.read(folder).shards] if shards.is_sharded(folder) else []
