"""Narrower concepts a paper names in parts: a concept's mention with, close by, the words that make it a narrower one.

"a provably efficient algorithm for reinforcement learning" names reinforcement learning word for word, and
"reinforcement learning theory" (altLabel "provably efficient reinforcement learning") in parts. For every
label of a narrower concept, the words it adds to its broader concept's labels (at most two, compared by their
Snowball stems, so "efficiency" is "efficient") are looked for within a few words of the broader concept's
mention, in the same sentence. Such a span is a candidate of its own kind: the scorer weighs it by the
`composed` feature, so a reader still sees exact mentions apart from these.
"""

from __future__ import annotations

import re
from functools import lru_cache

from kg.extract.scheme import Scheme

WINDOW = 6  # words on either side of the broader concept's mention
MAX_ADDED = 2  # words a narrower label may add to its broader concept's labels
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and as at based by for from in into of on or the to using via with".split())
_SENTENCE_END = frozenset(".!?;")


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The word's Snowball (Porter 2) stem, lower case."""
    return _english().stemWord(word.lower())


@lru_cache(maxsize=1)
def _english():  # -> snowballstemmer's English stemmer
    from snowballstemmer import stemmer

    return stemmer("english")


def _stems(label: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(label.lower()) if w not in _STOP)


class Composer:
    """Finds (narrower concept, start, end) spans around the mentions of their broader concepts."""

    def __init__(self, scheme: Scheme) -> None:
        narrower: dict[str, list[tuple[str, frozenset[str]]]] = {}
        own = {iri: frozenset().union(*(_stems(l) for l in c.labels)) for iri, c in scheme.concepts.items()}
        for iri, c in scheme.concepts.items():
            for parent in c.broader:
                if parent not in scheme.concepts:
                    continue
                added = {
                    _stems(label) - own[parent]
                    for label in c.labels
                    if label not in c.ambiguous and not label.isupper()
                }
                for words in added:
                    if 0 < len(words) <= MAX_ADDED:
                        narrower.setdefault(parent, []).append((iri, words))
        self.narrower = narrower

    def spans(self, doc, kept: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
        """Spans of narrower concepts not mentioned themselves, each covering its broader mention and the added words."""
        mentioned = {c for c, _, _ in kept}
        if not any(c in self.narrower for c in mentioned):
            return []
        by_char = {t.idx: t.i for t in doc}
        out: dict[str, tuple[int, int]] = {}
        for concept, a, b in kept:
            options = [(n, w) for n, w in self.narrower.get(concept, ()) if n not in mentioned and n not in out]
            if not options or a not in by_char:
                continue
            first = by_char[a]
            last = first
            while last + 1 < len(doc) and doc[last + 1].idx < b:
                last += 1
            lo, hi = first, last
            while lo > 0 and first - lo < WINDOW and doc[lo - 1].text not in _SENTENCE_END:
                lo -= 1
            while hi + 1 < len(doc) and hi - last < WINDOW and doc[hi + 1].text not in _SENTENCE_END:
                hi += 1
            near: dict[str, int] = {}
            for t in doc[lo : hi + 1]:
                if first <= t.i <= last or t.is_punct:
                    continue
                s = stem(t.text)
                if s not in near or abs(t.i - first) < abs(near[s] - first):
                    near[s] = t.i
            for narrower, words in options:
                if narrower in out or not words <= near.keys():
                    continue
                tokens = [near[w] for w in words] + [first, last]
                start, end = doc[min(tokens)], doc[max(tokens)]
                out[narrower] = (start.idx, end.idx + len(end))
        return [(c, a, b) for c, (a, b) in out.items()]
