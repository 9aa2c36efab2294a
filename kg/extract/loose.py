"""Loose mentions: a label's words written apart, in another order or in another form of the same stem.

The phrase matcher finds a label written as one phrase ("robust reinforcement learning"). Papers also name
a concept with words between ("Robust Offline Reinforcement Learning"), turned round a preposition
("Transformers on Graphs" for graph transformer) or in a derived form ("interpretable models" beside
interpretability, "data-efficient" beside data efficiency). Here every label of two to four content words
is reduced to Snowball stems; a stretch of a sentence between punctuation that holds those stems in the
label's order with at most GAP other words among them, or a two-word label as "B of/on/for/in/over (the) A",
is a loose mention, unless a conjunction stands among them ("learning and optimization" names two things,
not learning to optimize). The scorer knows which mentions are loose (kg.extract.features: loose_share), so
it can trust them less than whole phrases.

Ambiguous labels (those read only in their field, kg:senseTerm, or only in exact case), acronyms and
labels whose stems repeat are left out: loose matching must not bring back the everyday senses the
scheme rules out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ..resources import data_path
from ..scheme import Scheme

GAP = 2  # other words allowed among a label's words
MAX_WORDS = 4
STOP = frozenset("a an the of in on for with to and or by from via using based at as its their into over under between".split())
PREPOSITIONS = frozenset({"of", "on", "for", "in", "over"})
ARTICLES = frozenset({"the", "a", "an"})
CONJUNCTIONS = frozenset({"and", "or", "but", "versus", "vs", "nor"})  # "learning and optimization" is two things
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of a lower-cased word, memoised: abstracts repeat their words."""
    found = _STEMS.get(word)
    if found is None:
        found = _STEMS[word] = _stemmer().stemWord(word.lower())
    return found


@lru_cache(maxsize=1)
def _stemmer():  # -> snowballstemmer.stemmer
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@dataclass(frozen=True)
class LooseLabels:
    """Each usable label as its tuple of content stems, indexed by its rarest stem."""

    by_rarest: dict[str, tuple[tuple[str, tuple[str, ...], frozenset[str]], ...]]  # by the label's stem fewest labels share
    stems: frozenset[str]  # every stem of every label: other words are skipped at once

    @classmethod
    def of(cls, scheme: Scheme, exact_only: frozenset[str]) -> LooseLabels:
        """The labels of `scheme` that loose matching may use; `exact_only` are labels matched in exact case only."""
        labels: set[tuple[str, tuple[str, ...]]] = set()
        heads = _learning_heads()
        for concept in scheme.concepts.values():
            for label in concept.labels:
                if label in concept.ambiguous or label in exact_only:
                    continue
                stems = tuple(stem(w) for w in _WORD.findall(label.replace("-", " ")) if w.lower() not in STOP)
                if 2 <= len(stems) <= MAX_WORDS and len(set(stems)) == len(stems):
                    labels.add((concept.iri, stems))
                    if len(stems) == 2 and stems[1] == LEARNING and stems[0] not in heads:
                        labels.update((concept.iri, (stems[0], head)) for head in heads)
        share = Counter(s for _, stems in labels for s in stems)
        index: dict[str, list[tuple[str, tuple[str, ...], frozenset[str]]]] = {}
        for iri, stems in sorted(labels):
            index.setdefault(min(stems, key=lambda s: (share[s], s)), []).append((iri, stems, frozenset(stems)))
        return cls({k: tuple(v) for k, v in index.items()}, frozenset(share))

    def find(self, doc) -> list[tuple[str, int, int]]:  # doc: spacy.tokens.Doc
        """(concept, start, end) of every loose mention in a Doc, the span from the label's first word to its last.

        Reads the Doc's token arrays (NORM, offsets, punctuation) at C speed; only tokens whose stem some label
        has are looked at in Python, so an abstract costs a few microseconds more than its tokenizing.
        """
        from spacy.attrs import IDX, IS_PUNCT, LENGTH, NORM

        strings = doc.vocab.strings
        known, by_rarest = self.stems, self.by_rarest
        out: set[tuple[str, int, int]] = set()
        words: list[tuple[str, int, int]] = []  # (stem, start, end) of the words since the last break
        at: dict[str, list[int]] = {}  # label stems among them → their positions in `words`
        for norm, idx, length, punct in doc.to_array([NORM, IDX, LENGTH, IS_PUNCT]).tolist():
            if punct:
                if strings[norm] not in _JOINERS:
                    if len(at) > 1:
                        _match(words, at, by_rarest, out)
                    words, at = [], {}
                continue
            word = _BY_HASH.get(norm)
            if word is None:
                word = _BY_HASH[norm] = stem(strings[norm])
            if word in known:
                at.setdefault(word, []).append(len(words))
            words.append((word, idx, idx + length))
        if len(at) > 1:
            _match(words, at, by_rarest, out)
        return sorted(out, key=lambda m: (m[1], m[0]))


LEARNING = "learn"


@lru_cache(maxsize=1)
def _learning_heads() -> frozenset[str]:
    """The stems of kg/patterns/learning-heads.txt: words that stand for "learning" after its modifier."""
    lines = (data_path("patterns") / "learning-heads.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(stem(w.strip()) for w in lines if w.strip() and not w.startswith("#"))


_JOINERS = frozenset({"-", "/", "'", "’"})  # punctuation inside a phrase ("data-efficient"), not between phrases
_BY_HASH: dict[int, str] = {}  # NORM hash → its stem (spaCy's hashes do not depend on the vocabulary)


def _match(words: list[tuple[str, int, int]], at: dict[str, list[int]], by_rarest: dict, out: set[tuple[str, int, int]]) -> None:
    """Add to `out` the loose mentions among the words of one stretch between punctuation."""
    present = at.keys()
    for key in present & by_rarest.keys():
        for concept, label, needed in by_rarest[key]:
            if needed <= present:
                raw = [w[0] for w in words]
                span = _in_order(at, label) or (_turned(raw, at, label) if len(label) == 2 else None)
                if span is not None and not CONJUNCTIONS.intersection(raw[span[0] : span[1]]):
                    out.add((concept, words[span[0]][1], words[span[1]][2]))


def _in_order(at: dict[str, list[int]], label: tuple[str, ...]) -> tuple[int, int] | None:
    """Word indexes (first, last) of the label's stems in order with at most GAP other words among them."""
    for first in at[label[0]]:
        last = first
        for s in label[1:]:
            following = [k for k in at[s] if last < k <= last + 1 + GAP]
            if not following:
                break
            last = following[0]
        else:
            if last - first <= len(label) - 1 + GAP:
                return first, last
    return None


def _turned(stems: list[str], at: dict[str, list[int]], label: tuple[str, ...]) -> tuple[int, int] | None:
    """"B of A" / "B on the A" for the two-word label "A B" ("transformers on graphs": graph transformer)."""
    a, b = label
    for k in at[b]:
        rest = stems[k + 1 : k + 4]
        if len(rest) >= 2 and rest[0] in PREPOSITIONS:
            if rest[1] == a:
                return k, k + 2
            if len(rest) == 3 and rest[1] in ARTICLES and rest[2] == a:
                return k, k + 3
    return None
