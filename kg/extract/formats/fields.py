"""A paper record's fields: the `Paper` dataclass, folding, limits, and the one conversion of a record to a Paper.

Every format (kg.extract.formats) turns what it reads into a plain mapping with kg's field names (`abstract`,
`id`, `title`, `authors`, `venue`, `year`, `doi`, `arxiv`) and hands it to `record`, so the checks and the
messages are the same whatever the file was. `canonical` maps the field names downloads use (`author`,
`creators`, `booktitle`, `publication_year`, `DOI`, …) onto kg's, and says which fields look like one kg reads
but were not used.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping

from kg.core.defaults import MAX_ABSTRACT, MAX_FIELD, MAX_ID
from kg.core.errors import InputError

# C0/C1 control characters (tab and newline included), odd spaces and the two
# noncharacters U+FFFE/U+FFFF become plain spaces, then runs of white space fold
# into one: the stored abstract is the input "with at most whitespace folded",
# every offset points into it, and every stored string is one that XML 1.0
# (RDF/XML) can carry as well as Turtle, N-Triples and JSON-LD.
_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b\ufeff\ufffe\uffff]+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class Paper:
    """One paper as read from an input file."""

    id: str
    abstract: str
    title: str | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    where: str = ""  # "file:line" or "file: record N", for messages
    doi: str | None = None  # lowercased, without a resolver prefix: "10.1234/abc"
    arxiv: str | None = None  # without a version: "2401.01234", "cs/0112017"
    aliases: tuple[str, ...] = ()  # the ids of other records of the same paper, kept once (kg.extract.dedup)
    weak: frozenset[str] = frozenset()  # "venue", "year": guessed by the format (arXiv, an embedded BibTeX), --venue/--year win


@dataclass(frozen=True)
class Notice:
    """A warning about a file that is read all the same (a field that looks like one kg reads but is not used)."""

    text: str


# The characters of _SPACE that str.split() does not already treat as white space.
_NOT_SPLIT = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u200b\ufeff\ufffe\uffff]")


def fold(text: str) -> str:
    """Fold white space and control characters into single spaces."""
    if _NOT_SPLIT.search(text) is None:
        return " ".join(text.split())  # the same result, twice as fast (str.split uses str.isspace, like \s)
    return _SPACE.sub(" ", text).strip()


def content_id(abstract: str) -> str:
    """A stable id for a paper that has none: a hash of its folded abstract."""
    return hashlib.sha256(fold(abstract).encode("utf-8")).hexdigest()[:16]


def text(value: str, where: str, name: str, limit: int) -> str | InputError:
    """A folded text field, or why it cannot be stored."""
    bad = None if value.isascii() else _SURROGATE.search(value)
    if bad:
        return InputError(f"{where}: the {name} holds an unpaired surrogate ({bad.group()!r}), which no RDF syntax can encode")
    folded = fold(value)
    if len(folded) > limit:
        return InputError(f"{where}: {name} of {len(folded):,} characters is longer than the limit of {limit:,}; is it a full text?")
    return folded


# Field names as downloads spell them (lowercased, without spaces, '-' and '_') -> kg's field. The first present wins.
ALIASES: dict[str, tuple[str, ...]] = {
    "abstract": ("abstract", "abstractnote", "summary", "paperabstract"),
    "id": ("id", "paperid", "key", "citationkey", "entryid"),
    "title": ("title", "papertitle", "displayname"),
    "authors": ("authors", "author", "creators", "authornames"),
    "venue": ("venue", "booktitle", "containertitle", "journal", "conference", "publicationtitle", "proceedingstitle", "journalname"),
    "year": ("year", "publicationyear", "pubyear", "issued", "date", "published", "publicationdate"),
    "doi": ("doi",),
    "arxiv": ("arxiv", "arxivid", "eprint"),
    "url": ("url", "link", "landingpageurl"),
    "bibtex": ("bibtex", "bib", "citation"),
}
_SQUEEZE = re.compile(r"[\s_\-.]+")
# Parts of a field name that say it is meant as one of kg's fields; a field holding one that is not read is named in a warning.
_LOOKS_READ = re.compile(r"abstract|title|author|creator|venue|conference|journal|booktitle|year|date|doi|arxiv")


@lru_cache(maxsize=4096)  # a file's records repeat their field names
def squeeze(name: str) -> str:
    """A field name as ALIASES spells it: 'Publication Year' -> 'publicationyear'."""
    return _SQUEEZE.sub("", name.lower())


def canonical(record: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The record under kg's field names (the first alias present of each), and the names of fields that look read but are not."""
    by_name: dict[str, str] = {}
    for name in record:
        if isinstance(name, str):
            by_name.setdefault(squeeze(name), name)
    out: dict[str, Any] = {}
    used: set[str] = set()
    for field, aliases in ALIASES.items():
        for alias in aliases:
            found = by_name.get(alias)
            if found is not None and record[found] not in (None, "", [], {}):
                out[field] = record[found]
                used.add(found)
                break
    unread = []
    for squeezed, name in by_name.items():
        stem = _LOOKS_READ.search(squeezed)
        if name not in used and stem and squeezed not in _NEVER_READ and _STEMS[stem.group()] not in out:
            unread.append(name)  # e.g. 'paper_summary' with no abstract read, not 'author_site' beside a read 'author'
    return out, unread


_STEMS = {"abstract": "abstract", "title": "title", "author": "authors", "creator": "authors", "venue": "venue", "conference": "venue",
          "journal": "venue", "booktitle": "venue", "year": "year", "date": "year", "doi": "doi", "arxiv": "arxiv"}
# Names that hold a read field's words but are plainly something else: not worth a warning.
_NEVER_READ = frozenset({"abstractinvertedindex", "authorships", "titleshort", "shorttitle", "dateadded", "datemodified", "accessdate", "updated",
                         "authorid", "authorids", "authorsparsed"})


def unread_notice(where: str, names: Iterable[str]) -> Notice | None:
    """One warning naming the fields that look like kg's but were not used, or None."""
    names = sorted(set(names))
    if not names:
        return None
    fields = ", ".join(repr(n) for n in names[:8]) + (", …" if len(names) > 8 else "")
    return Notice(f"{where}: field{'s' if len(names) > 1 else ''} {fields} not read (kg reads {', '.join(a[0] for a in ALIASES.values() if a[0] not in ('url', 'bibtex'))} "
                  f"and their usual spellings; see docs/inputs.md): rename {'them' if len(names) > 1 else 'it'} if meant")


_DOI = re.compile(r"10\.\d{4,9}/\S+")
_ARXIV = re.compile(r"(?:arxiv\.org/(?:abs|pdf)/|arxiv:\s*)?(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?$", re.IGNORECASE)


def doi_of(value: Any) -> str | None:
    """A DOI, lowercased (DOIs are case-insensitive) and without its resolver: 'https://doi.org/10.1/X' -> '10.1/x'."""
    if not isinstance(value, str):
        return None
    found = _DOI.search(value.strip())
    return found.group().rstrip(".,;").lower() if found else None


def arxiv_of(value: Any) -> str | None:
    """An arXiv id without its version from an id, 'arXiv:…' or an arxiv.org URL: '2401.01234', 'cs/0112017'."""
    if not isinstance(value, str):
        return None
    found = _ARXIV.search(value.strip())
    return found.group(1) if found else None


_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")


def year_of(value: Any) -> Any:
    """A year from a date ('2024-07-21', '2024/07//', CSL's {'date-parts': [[2024, 7]]}); other values as they are."""
    if isinstance(value, dict):
        parts = value.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return parts[0][0]
        return value.get("raw") or value.get("literal")
    if isinstance(value, str) and not value.strip().isdigit():
        found = _YEAR.search(value)
        return found.group(1) if found else value
    return value


def record(fields: Mapping[str, Any], where: str, weak: frozenset[str] = frozenset()) -> Paper | InputError:
    """A Paper from a mapping with kg's field names, or what is wrong with it."""
    abstract = fields.get("abstract")
    if abstract is not None and not isinstance(abstract, str):
        return InputError(f"{where}: the abstract must be text, not {type(abstract).__name__} ({str(abstract)[:40]})")
    abstract = text(abstract, where, "abstract", MAX_ABSTRACT) if abstract is not None else ""
    if isinstance(abstract, InputError):
        return abstract
    if not abstract:
        return InputError(f"{where}: the record has no abstract")
    raw_id = fields.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int, type(None))):
        return InputError(f"{where}: id {raw_id!r} must be a string or a whole number")
    paper_id = text(str(raw_id), where, "id", MAX_ID) if raw_id is not None else ""
    if isinstance(paper_id, InputError):
        return paper_id
    found: dict[str, str | None] = {}
    for name in ("title", "venue"):
        value = fields.get(name)
        got = text(str(value), where, name, MAX_FIELD) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
        if isinstance(got, InputError):
            return got
        found[name] = got or None
    year = _year(year_of(fields.get("year")), where)
    if isinstance(year, InputError):
        return year
    authors = _authors(fields.get("authors"), where)
    if isinstance(authors, InputError):
        return authors
    url = fields.get("url")
    doi = doi_of(fields.get("doi")) or (doi_of(url) if isinstance(url, str) and "doi.org/" in url else None)
    arxiv = arxiv_of(fields.get("arxiv")) or (arxiv_of(url) if isinstance(url, str) and "arxiv.org/" in url else None)
    return Paper(paper_id or content_id(abstract), abstract, found["title"], authors, found["venue"], year, where, doi, arxiv,
                 weak=frozenset(weak & {k for k in ("venue", "year") if fields.get(k) is not None}))


def _year(value: Any, where: str) -> int | InputError | None:
    """A publication year between 1 and 9999 (xsd:gYear with four digits), or None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        year = int(value.strip()) if isinstance(value, str) else int(value) if isinstance(value, int) and not isinstance(value, bool) else None
    except ValueError:
        year = None
    if year is None and isinstance(value, float) and value.is_integer():
        year = int(value)
    if year is None or not 1 <= year <= 9999:
        return InputError(f"{where}: year {value!r} is not a whole year between 1 and 9999")
    return year


def _authors(value: Any, where: str) -> tuple[str, ...] | InputError:
    """Author names from a list (of names or name objects) or one string ('A; B', 'Last, First and Last, First')."""
    if isinstance(value, str):
        value = split_names(value)
    if not isinstance(value, list):
        return ()
    names = []
    for item in value:
        if isinstance(item, dict):
            item = name_of(item)
        elif isinstance(item, str):
            item = first_last(item)
        if not isinstance(item, (str, int)) or isinstance(item, bool):
            continue
        name = text(str(item), where, "author name", MAX_FIELD)
        if isinstance(name, InputError):
            return name
        if name and name.lower() not in ("others", "et al.", "et al"):
            names.append(name)
    return tuple(names)


def split_names(value: str) -> list[str]:
    """One string of names as a list: split on ';', else on ' and ', else on ',' unless it is one 'Last, First'."""
    if ";" in value:
        return value.split(";")
    if re.search(r"\s+and\s+", value):
        return re.split(r"\s+and\s+", value)
    parts = [p.strip() for p in value.split(",")]
    if len(parts) == 2 and " " not in parts[0]:
        return [value]  # "Lovelace, Ada": one name
    return parts


def first_last(name: str) -> str:
    """'Lovelace, Ada' -> 'Ada Lovelace'; 'Lovelace, Jr., Ada' -> 'Ada Lovelace Jr.'; other names unchanged."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and all(parts):
        return f"{parts[1]} {parts[0]}"
    if len(parts) == 3 and all(parts):
        return f"{parts[2]} {parts[0]} {parts[1]}"
    return name


def name_of(item: Mapping[str, Any]) -> Any:
    """A name from the objects exports use: {name}, CSL's {given, family} or {literal}, Zotero's {firstName, lastName},
    OpenAlex's {author: {display_name}}."""
    if isinstance(item.get("author"), dict):
        item = item["author"]
    for key in ("name", "literal", "display_name", "displayName"):
        if isinstance(item.get(key), str):
            return first_last(item[key])
    given = item.get("given") or item.get("firstName") or ""
    family = " ".join(str(p) for p in (item.get("non-dropping-particle"), item.get("family") or item.get("lastName")) if p)
    return " ".join(str(p) for p in (given, family) if p) or None
