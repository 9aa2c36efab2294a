"""The forms writers use for a concept beyond its labels as written: other word orders and inflections, and composites.

A label matches word for word (kg.extract.matcher); writers also say "compressing a grid-based NeRF model" for
model compression, "the reasoning abilities of LLMs" for LLM reasoning, "agents built on language models" for LLM
agents. Two readings find these, each sentence at a time, on word stems (Snowball's English stemmer, so
"navigate", "navigating" and "navigation" are one word), with the little words of
kg/extract/patterns/form-stopwords.txt left out:

- **a label's words in another form**: every content word of a label of two or more words, within a few words of
  each other (the label's length plus SLACK), in any order and inflection;
- **a composite**: a label that contains another concept's label ("LLM agent" holds "LLM") is found where a
  sentence mentions that concept, or one below it (GPT-4 for LLM), and the label's other words.

Such a form is a candidate, not a subject: the scorer sees that it is one (kg.extract.features: form_only,
composite_only) and weighs it by what it learnt from expert topic lists. Ambiguous and exact-case labels (acronyms)
take no part: their words say too little out of their case and context.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from kg.extract.scheme import Scheme
from kg.graph.resources import data_path

SLACK = 4  # a form's words lie within (its number of words + SLACK) tokens

# One form found: concept, start char, end char (the stretch from its first to its last word), composite or not.
Form = tuple[str, int, int, bool]
# One content word of a text: start char, end char, stem.
Word = tuple[int, int, str]


@dataclass(frozen=True)
class FormIndex:
    """The scheme's labels as sets of stems, looked up by one of their stems (the anchor)."""

    by_anchor: dict[str, tuple[tuple[str, frozenset[str]], ...]]  # stem → (concept, stems of a label)
    composites: dict[str, tuple[tuple[str, str, frozenset[str]], ...]]  # stem → (part concept, concept, its other stems)
    ancestors: dict[str, frozenset[str]]
    anchors: frozenset[str] = frozenset()  # the stems by_anchor and composites are looked up by

    def __post_init__(self) -> None:
        object.__setattr__(self, "anchors", frozenset(self.by_anchor) | frozenset(self.composites))

    @classmethod
    def of(cls, scheme: Scheme, exact_labels: Iterable[str] = ()) -> FormIndex:
        """The index of a scheme; `exact_labels` (acronyms, ambiguous labels) take no part."""
        skip = set(exact_labels)
        words: dict[tuple[str, ...], set[str]] = {}  # a label's stems, in order → the concepts with that label
        for concept in scheme.concepts.values():
            for label in concept.labels:
                if label in skip or label in concept.ambiguous:
                    continue
                stems = tuple(stem_words(label))
                if stems:
                    words.setdefault(stems, set()).add(concept.iri)
        anchored: dict[str, set[tuple[str, frozenset[str]]]] = {}
        parts: dict[str, set[tuple[str, str, frozenset[str]]]] = {}
        # A label is looked up by its least shared stem: "graph attention network" by "attent", not "network".
        shared = Counter(stem for stems in words for stem in set(stems))

        def rarest(stems: Iterable[str]) -> str:
            return min(stems, key=lambda s: (shared[s], -len(s), s))

        for stems, concepts in words.items():
            if len(set(stems)) > 1:
                anchor = rarest(stems)
                for iri in concepts:
                    anchored.setdefault(anchor, set()).add((iri, frozenset(stems)))
            for i in range(len(stems)):
                for j in range(i + 1, len(stems) + 1):
                    rest = frozenset(stems[:i] + stems[j:])
                    if j - i == len(stems) or not rest or rest <= _generic():
                        continue
                    anchor = rarest(rest)
                    for part in words.get(stems[i:j], ()):
                        for iri in concepts - {part}:
                            parts.setdefault(anchor, set()).add((part, iri, rest))
        return cls(
            {k: tuple(sorted(v, key=lambda x: (x[0], sorted(x[1])))) for k, v in anchored.items()},
            {k: tuple(sorted(v, key=lambda x: (x[0], x[1], sorted(x[2])))) for k, v in parts.items()},
            {iri: frozenset(scheme.ancestors(iri)) for iri in scheme.concepts},
        )

    def find(self, words: Sequence[Word], sentence_starts: Sequence[int], mentions: Sequence[tuple[str, int, int]]) -> list[Form]:
        """The forms among a text's words (`words_of` it), sentence by sentence, given its sentences' start
        characters and its label matches (concept, start, end): a form inside one label match is that match's.

        Labels are first looked up in the whole text (every stem present), then only those few in its sentences."""
        where: dict[str, list[int]] = {}  # stem → its word positions in the text
        sentence_of = []  # the sentence of each word
        n, next_start = -1, 0
        starts = list(sentence_starts)
        for i, (start, _, stem) in enumerate(words):
            while next_start is not None and start >= next_start:
                n += 1
                next_start = starts[n + 1] if n + 1 < len(starts) else None
            sentence_of.append(n)
            spots = where.get(stem)
            if spots is None:
                where[stem] = [i]
            else:
                spots.append(i)
        present = where.keys()
        named: dict[str, list[tuple[int, int, int]]] = {}  # a concept named, or one above it → (sentence, start, end)
        found: dict[str, Form] = {}
        for anchor in present & self.anchors:
            for concept, stems in self.by_anchor.get(anchor, ()):
                if concept not in found and present >= stems:
                    form = _closest(words, where, sentence_of, stems)
                    if form is not None and not _inside(form, mentions):
                        found[concept] = (concept, *form, False)
            for part, concept, rest in self.composites.get(anchor, ()):
                if concept in found or not present >= rest:
                    continue
                if not named:
                    for c, a, b in mentions:
                        for above in (c, *self.ancestors.get(c, ())):
                            named.setdefault(above, []).append((bisect_right(starts, a) - 1, a, b))
                for k, a, b in named.get(part, ()):
                    spots = [[i for i in where[s] if sentence_of[i] == k] for s in rest]
                    if all(spots):
                        form = (min(a, *(words[i[0]][0] for i in spots)), max(b, *(words[i[-1]][1] for i in spots)))
                        if not _inside(form, mentions):
                            found[concept] = (concept, *form, True)
                            break
        return sorted(found.values(), key=lambda f: (f[1], f[0]))


def _closest(words: Sequence[Word], where: dict[str, list[int]], sentence_of: list[int], stems: frozenset[str]) -> tuple[int, int] | None:
    """The first stretch of one sentence, at most the label's length plus SLACK words, holding every stem."""
    shared: set[int] | None = None
    for s in stems:
        here = {sentence_of[i] for i in where[s]}
        shared = here if shared is None else shared & here
        if not shared:
            return None
    for n in sorted(shared or ()):
        spots = {s: [i for i in where[s] if sentence_of[i] == n] for s in stems}
        window = _window(spots, stems)
        if window is not None and window[1] - window[0] < len(stems) + SLACK:
            return words[window[0]][0], words[window[1]][1]
    return None


def _inside(form: tuple[int, int], mentions: Sequence[tuple[str, int, int]]) -> bool:
    """A form that lies inside one label match is that match's own words ("deep reinforcement learning")."""
    return any(a <= form[0] and form[1] <= b for _, a, b in mentions)


def _window(where: dict[str, list[int]], stems: frozenset[str]) -> tuple[int, int] | None:
    """The shortest stretch of token positions holding every stem (first and last position), if any."""
    hits = sorted((i, s) for s in stems for i in where[s])
    count: dict[str, int] = {}
    best: tuple[int, int] | None = None
    left = 0
    for i, s in hits:
        count[s] = count.get(s, 0) + 1
        while len(count) == len(stems):
            j, t = hits[left]
            if best is None or i - j < best[1] - best[0]:
                best = (j, i)
            count[t] -= 1
            if not count[t]:
                del count[t]
            left += 1
    return best


def words_of(doc) -> list[Word]:
    """A spaCy doc's content words with their stems, in order (read as arrays: no Token objects)."""
    from spacy.attrs import IDX, LENGTH, LOWER

    strings = doc.vocab.strings
    cache = _by_hash
    out = []
    for lower, idx, length in doc.to_array([LOWER, IDX, LENGTH]).tolist():
        stem = cache.get(lower)
        if stem is None:
            stem = cache[lower] = _stem(strings[lower])
        if stem:
            out.append((idx, idx + length, stem))
    return out


_by_hash: dict[int, str] = {}  # a lower-case word's hash → its stem ("" for a stop word), filled as words are met


def stem_words(text: str) -> list[str]:
    """The stems of a text's content words, in order ("Compressing the models" → ["compress", "model"])."""
    out = []
    word = []
    for ch in text.lower() + " ":
        if ch.isalnum():
            word.append(ch)
        elif word:
            stem = _stem("".join(word))
            if stem:
                out.append(stem)
            word = []
    return out


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """A lower-case word's stem, or "" for a stop word or a token with no letter or digit."""
    if word in _stopwords() or not any(c.isalnum() for c in word):
        return ""
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def _stemmer():  # -> snowballstemmer.Stemmer
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return frozenset(_words("form-stopwords.txt"))


@lru_cache(maxsize=1)
def _generic() -> frozenset[str]:
    return frozenset(_stem(w) for w in _words("form-generic.txt"))


def _words(name: str) -> list[str]:
    lines = (data_path("patterns") / name).read_text(encoding="utf-8").splitlines()
    return [w.strip().lower() for w in lines if w.strip() and not w.startswith("#")]
