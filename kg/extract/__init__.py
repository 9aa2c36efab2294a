"""Stage 2: link papers to concepts of the scheme, with scores, character-span evidence and proposed methods.

matcher: the phrase extractor; cleanup: markup removal with offset maps; acronyms: definitions in the
text; salience: which concepts a paper is about; contributions: the methods it proposes.
"""

from __future__ import annotations

from pathlib import Path

from kg.core.errors import UsageError
from kg.extract.matcher import PhraseExtractor, make_matchers, make_nlp
from kg.extract.records import Extraction, Extractor, Link, Mention, Method
from kg.extract.scheme import Scheme

KEPT_EXTRACTORS = 2  # extractors kept per process: one for the shipped scheme, one for a user's
_kept: dict[tuple, tuple[Scheme, Extractor]] = {}  # key -> (the scheme, kept alive so its id stays its own; the extractor)


def make_extractor(scheme: Scheme, threshold: float | None = None, model: str | Path | None = None) -> Extractor:
    """Build the extractor (kg.extract.matcher.PhraseExtractor, the one kg has) for a scheme, scoring with `model`
    (None: the shipped scorer).

    `threshold` None uses the model's own threshold (the one that maximised F1 where it was fitted).
    An extractor holds no state between calls, so the last few made are kept and handed out again: the scheme's
    matchers (about 1 s of CPU for the shipped scheme) are made once per process, as kg.extract.scheme.load
    parses a scheme file once (decision 0054).
    """
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1):  # nan fails too
        raise UsageError(f"threshold {threshold!r} must be a number from 0 to 1 (the probability a subject link needs)")
    factory = PhraseExtractor
    path = Path(model).resolve() if model is not None else None
    key = (factory, id(scheme), threshold, path)
    if key not in _kept:
        if len(_kept) >= KEPT_EXTRACTORS:
            del _kept[next(iter(_kept))]  # the oldest
        _kept[key] = (scheme, factory(scheme, threshold, path))
    return _kept[key][1]


def forget_extractors() -> None:
    """Let the kept extractors go (kg build once its papers are extracted: about 50 MB it need not hold while it
    draws the page)."""
    _kept.clear()


__all__ = [
    "Extraction",
    "Extractor",
    "Link",
    "Mention",
    "Method",
    "PhraseExtractor",
    "make_extractor",
    "forget_extractors",
    "make_matchers",
    "make_nlp",
]
