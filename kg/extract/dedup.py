"""One paper once: records of the same paper under other ids (two files, two sites) found by DOI, arXiv id, title with
first author, or abstract, and kept as one paper that carries every id.

`merge` is what `kg build` does with the papers of all its inputs; `in_graph` is what `kg build --update` does with
new papers whose abstract a graph already holds under another id. The keys are normalised so that case, accents,
punctuation and white space do not tell two copies apart; a DOI or arXiv id is compared only with the same kind.
Two records with the same title or abstract that give different venues or years are different publications (a
workshop paper and its conference version) and stay apart; the same DOI or arXiv id is the same paper whatever else.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping

from kg.extract.formats.fields import Paper

_WORD = re.compile(r"[^\W_]+")
_ASCII_GAPS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})  # _WORD's gaps, in ASCII
_MARKS = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")  # combining marks: accents once decomposed
_KINDS = {"doi": "DOI", "arxiv": "arXiv id", "title": "title and first author", "abstract": "abstract"}


@dataclass(frozen=True)
class Merged:
    """The papers kept, in input order (each with the ids of its other copies as aliases), and one line per copy merged."""

    papers: tuple[Paper, ...]
    problems: tuple[str, ...] = ()


def words(text: str) -> str:
    """The words of a text, lowercased, without accents and punctuation: 'Über-RL: a Study' -> 'uber rl a study'."""
    plain = text.casefold()
    if plain.isascii():  # most abstracts are: every character not a letter or digit a space, in C (a fifth of the read)
        return " ".join(plain.translate(_ASCII_GAPS).split())
    return " ".join(_WORD.findall(_MARKS.sub("", unicodedata.normalize("NFKD", plain))))


def fingerprint(abstract: str) -> str:
    """A hash of an abstract's words: the same for two copies that differ in case, accents, punctuation or spacing."""
    return hashlib.sha256(words(abstract).encode("utf-8")).hexdigest()[:24]


def keys(paper: Paper) -> list[tuple[str, str]]:
    """The keys under which two records are the same paper."""
    found = []
    if paper.doi:
        found.append(("doi", paper.doi.lower()))
    if paper.arxiv:
        found.append(("arxiv", paper.arxiv.lower()))
    title = words(paper.title) if paper.title and paper.authors else ""
    if len(title) >= 12:  # a title of a few words may be shared
        found.append(("title", f"{title}|{words(paper.authors[0]).rsplit(' ', 1)[-1]}"))
    if len(paper.abstract) >= 100:
        found.append(("abstract", fingerprint(paper.abstract)))
    return found


def merge(papers: Iterable[Paper]) -> Merged:
    """Each paper once: a later record sharing a key with an earlier one is folded into it (its id kept as an alias)."""
    kept: list[Paper] = []
    owner: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    for paper in papers:
        found = keys(paper)
        hit = next(((owner[k], k) for k in found if k in owner and (k[0] in ("doi", "arxiv") or not _apart(kept[owner[k]], paper))), None)
        if hit is None:
            for k in found:
                owner.setdefault(k, len(kept))
            kept.append(paper)
            continue
        at, (kind, _) = hit
        first = kept[at]
        kept[at] = _fold(first, paper)
        for k in keys(kept[at]):
            owner.setdefault(k, at)
        problems.append(f"{paper.where}: the same paper as {first.where} (same {_KINDS[kind]}); kept once, with both ids "
                        f"({first.id!r}, {paper.id!r}); --keep-duplicates keeps both")
    return Merged(tuple(kept), tuple(problems))


def _apart(a: Paper, b: Paper) -> bool:
    """True when two records name different publications: both give a venue (not one only guessed, such as arXiv) and
    they differ, or both give a year and they differ. A workshop paper and its conference version stay two papers."""
    if a.venue and b.venue and "venue" not in a.weak | b.weak and a.venue.casefold() != b.venue.casefold():
        return True
    return bool(a.year and b.year and "year" not in a.weak | b.weak and a.year != b.year)


def _fold(first: Paper, other: Paper) -> Paper:
    """The first copy, with the other's id as an alias and what it lacked (title, authors, venue, year, DOI, arXiv id) from the other."""
    aliases = tuple(dict.fromkeys([*first.aliases, *([other.id] if other.id != first.id else []), *other.aliases]))
    return replace(
        first, aliases=aliases, title=first.title or other.title, authors=first.authors or other.authors,
        venue=first.venue or other.venue, year=first.year or other.year, doi=first.doi or other.doi, arxiv=first.arxiv or other.arxiv,
    )


def in_graph(papers: Iterable[Paper], digests: Mapping[str, str], ids: Mapping[str, str], digest: Callable[[str], str],
             dois: Mapping[str, str] | None = None) -> tuple[list[Paper], list[str], int]:
    """The papers a graph lacks, the lines reporting those it holds under another id (same DOI or abstract), and how many those are.

    `digests`: paper IRI -> hash of its stored abstract; `ids`: dcterms:identifier -> paper IRI; `dois`: bibo:doi -> paper
    IRI (kg.graph.stamp.GraphIndex); `digest`: the hash (kg.graph.facts.digest). A paper whose id the graph has is left
    to the update (new or changed).
    """
    by_digest: dict[str, str] = {}
    for iri, value in digests.items():
        by_digest.setdefault(value, iri)
    kept: list[Paper] = []
    problems: list[str] = []
    for paper in papers:
        if paper.id in ids:
            kept.append(paper)
            continue
        by_doi = (dois or {}).get(paper.doi) if paper.doi else None
        held = by_doi or by_digest.get(digest(paper.abstract))
        if held is None:
            kept.append(paper)
            continue
        problems.append(f"{paper.where}: already in the graph as <{held}> (same {'DOI' if by_doi else 'abstract'}, id {paper.id!r}); "
                        f"not added again, --keep-duplicates adds it")
    return kept, problems, len(problems)


def summarised(lines: list[str], what: str, limit: int = 5) -> list[str]:
    """At most `limit` of the lines, then one saying how many more there were (21,000 copies are not 21,000 warnings)."""
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"… and {len(lines) - limit:,} more {what} ({len(lines):,} in all)"]
