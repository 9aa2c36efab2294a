"""Concepts a paper describes without naming them, from the concepts' definitions.

Writers often describe a topic instead of naming it ("only state trajectories are available" for imitation from
observation, "a lower bound to the log marginal likelihood" for the evidence lower bound). Every concept of the
scheme has a skos:definition written by people; each concept's definition and labels are a query, and the paper's
title and abstract the document, scored by BM25 over content words (lower case, spaCy's lemma table, stop words
out) with document frequencies from a reference corpus of ML abstracts (`patterns/definition-df.tsv`, written by
bench/definition_df.py). A paper's best-scoring concept that the matcher did not find becomes one more candidate
(`described`), with the sentence whose words hold most of the concept's weight as its evidence; the scorer
decides, like every candidate, whether it is a subject. Decision 0062.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from kg.extract.lexicon import lemmas
from kg.extract.scheme import Scheme
from kg.graph.resources import data_path

K1, B = 1.2, 0.75  # BM25's usual term saturation and length normalisation
SHORTLIST = 10  # best-scoring concepts the matcher did not find that are scored again for the described one
MIN_LENGTH = 3  # shorter words ("of", "rl", "x") carry no definition


@dataclass(frozen=True)
class Similarity:
    """A concept's BM25 against one paper, 1/its rank among every concept for that paper, and its z-score there."""

    bm25: float
    rank: float
    z: float


NONE = Similarity(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Described:
    """What the definitions say of one paper: the similarity of each of its candidates, and the concept it
    describes best without the matcher finding it (None: none shares a word), with its evidence sentence
    (start, end in the cleaned text; None: only the title holds its words)."""

    similarity: dict[str, Similarity]
    concept: str | None = None
    sentence: tuple[int, int] | None = None
    place: int = -1  # the index of that sentence (-1: none)


def word_key(lower: str) -> str | None:
    """The form a lower-case word is compared by, None for words that say nothing (stop words, short, numbers)."""
    if len(lower) < MIN_LENGTH or not lower[0].isalpha():
        return None
    return _keys().get(lower, lower) or None


@lru_cache(maxsize=1)
def _keys() -> dict[str, str]:
    """Lower-case word → its compared form: spaCy's lemma, "" for a stop word (the table turns "second" into "2",
    which stays "second")."""
    from spacy.lang.en.stop_words import STOP_WORDS

    out = {w: lemma for w, lemma in lemmas().items() if lemma[:1].isalpha()}
    out.update(dict.fromkeys(STOP_WORDS, ""))
    return out


def keys(tokens: Iterable[str]) -> list[str]:
    """The compared forms of tokens' texts (spaCy tokens: hyphens are tokens of their own)."""
    out = []
    for t in tokens:
        k = word_key(t.lower())
        if k is not None:
            out.append(k)
    return out


class DefinitionIndex:
    """Every concept's definition and labels as a BM25 query over a paper's words."""

    def __init__(self, scheme: Scheme, nlp, df_path: Path | None = None) -> None:
        import numpy as np

        papers, mean_length, df = read_df(df_path or data_path("patterns") / "definition-df.tsv")
        self.iris = tuple(sorted(scheme.concepts))
        self.index = {c: i for i, c in enumerate(self.iris)}
        self.mean_length = mean_length
        # word → (concept indexes, their idf) for the concepts whose definition or labels hold it
        postings: dict[str, list[int]] = {}
        self.weights: list[dict[str, float]] = []  # per concept: its words and their idf
        self.ancestors = [frozenset(scheme.ancestors(c)) for c in self.iris]
        texts = [" ".join([scheme.concepts[c].definition or "", *scheme.concepts[c].labels]) for c in self.iris]
        for i, doc in enumerate(nlp.pipe(texts)):
            weights = {}
            for w in set(keys(t.text for t in doc)):
                n = df.get(w, 0)
                weights[w] = math.log((papers - n + 0.5) / (n + 0.5) + 1)
                postings.setdefault(w, []).append(i)
            self.weights.append(weights)
        self.postings = {w: (np.array(ix), np.array([self.weights[i][w] for i in ix])) for w, ix in postings.items()}

    def describe(self, words: Sequence[tuple[str, int, str | None]], sentence_starts: Sequence[int], text: str, found: Iterable[str],
                 title_words: Sequence[tuple[str, str | None]] = ()) -> Described:
        """The similarities of a paper's words and its title's words to every concept; `found`: the concepts the
        matcher gives the paper. A word is (compared form, character offset in the cleaned abstract `text` whose
        sentences start at `sentence_starts`, the concept whose mention holds it or None); a title word has no offset.

        The described concept is the best of the SHORTLIST best-scoring concepts the matcher did not find, each
        scored again without the words of mentions of the concepts above it: a narrower concept is not described
        by its parent's name ("semantic segmentation" says nothing of weakly supervised semantic segmentation)."""
        import numpy as np

        held: dict[str, list[str | None]] = {}  # word → the mention concept (or None) of each occurrence
        for w, _, c in words:
            held.setdefault(w, []).append(c)
        for w, c in title_words:
            held.setdefault(w, []).append(c)
        length = sum(len(v) for v in held.values())
        norm = K1 * (1 - B + B * length / self.mean_length)
        postings = [(p, _saturation(len(occurrences), norm)) for w, occurrences in held.items() if (p := self.postings.get(w)) is not None]
        scores = np.bincount(
            np.concatenate([p[0] for p, _ in postings]), np.concatenate([p[1] * s for p, s in postings]), len(self.iris)
        ) if postings else np.zeros(len(self.iris))
        order = np.argsort(-scores, kind="stable")
        rank = np.empty(len(self.iris), dtype=np.int64)
        rank[order] = np.arange(1, len(self.iris) + 1)
        mean, spread = float(scores.mean()), float(scores.std()) or 1.0
        found = set(found)
        index = self.index
        similarity = {c: Similarity(float(scores[index[c]]), 1.0 / rank[index[c]], (float(scores[index[c]]) - mean) / spread) for c in found if c in index}
        best, best_score = None, 0.0
        shortlist = []
        for i in order:
            if self.iris[i] not in found:
                shortlist.append(int(i))
                if len(shortlist) == SHORTLIST:
                    break
        mentioned = {c for occurrences in held.values() for c in occurrences if c is not None}
        for i in shortlist:
            above = self.ancestors[i]
            score = float(scores[i]) if not above & mentioned else sum(idf * _saturation(n, norm) for w, idf in self.weights[i].items() if (n := sum(c not in above for c in held.get(w, ()))))
            if score > best_score:
                best, best_score = i, score
        if best is None:
            return Described(similarity)
        concept = self.iris[best]
        similarity[concept] = Similarity(best_score, 1.0 / rank[best], (best_score - mean) / spread)
        return Described(similarity, concept, *self._sentence(best, words, sentence_starts, text))

    def _sentence(self, concept: int, words: Sequence[tuple[str, int, str | None]], starts: Sequence[int], text: str) -> tuple[tuple[int, int] | None, int]:
        """The first sentence whose distinct words hold the most of the concept's idf ((start, end without its
        trailing space), its index); (None, -1) when no sentence holds any (only the title does)."""
        from bisect import bisect_right

        weight, above = self.weights[concept], self.ancestors[concept]
        held: dict[int, set[str]] = {}
        for w, offset, c in words:
            if w in weight and c not in above:
                held.setdefault(max(0, bisect_right(starts, offset) - 1), set()).add(w)
        if not held:
            return None, -1
        n = max(sorted(held), key=lambda k: sum(weight[w] for w in held[k]))
        start = starts[n] if starts else 0
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        return (start, len(text[:end].rstrip())), n


def _saturation(n: int, norm: float) -> float:
    return n * (K1 + 1) / (n + norm)


@lru_cache(maxsize=4)
def read_df(path: Path) -> tuple[int, float, dict[str, int]]:
    """(papers, mean compared words a paper, word → papers holding it) from the table bench/definition_df.py writes."""
    papers, mean_length, df = 1, 100.0, {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# papers\t"):
                papers = int(line.split("\t")[1])
            elif line.startswith("# mean words\t"):
                mean_length = float(line.split("\t")[1])
            elif line and not line.startswith("#"):
                w, n = line.split("\t")
                df[w] = int(n)
    return papers, mean_length, df
