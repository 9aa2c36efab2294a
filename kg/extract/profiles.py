"""How much a paper reads like the papers about a concept: the cosine of its words with the concept's profile.

A paper that names "tool use" in an abstract about LLM agents reads like the papers about tool use; one that names
"distributed learning" while it studies how a reinforcement-learning agent copes with a shifting data distribution
does not. The profile of a concept is the centroid of the TF-IDF vectors (word stems, kg.extract.forms) of the
reference-corpus abstracts about it or about a concept below it (the title names it, or the abstract twice),
cut to its heaviest words; it ships in kg/extract/patterns/concept-profiles.tsv with the words' inverse document
frequencies (stem-idf.tsv), both written by bench/concept_profiles.py. A concept with too few such papers has no
profile, and the scorer knows that (kg.extract.features: has_profile).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

from kg.core.errors import SchemeError
from kg.graph.resources import data_path


@dataclass(frozen=True)
class Profiles:
    """Concept profiles and the word weights that paper vectors are made with."""

    idf: Mapping[str, float]
    unseen_idf: float  # the weight of a word the reference corpus (nearly) never used
    centroids: Mapping[str, Mapping[str, float]]  # concept IRI → stem → weight (unit length)

    def vector(self, stems: Iterable[str]) -> dict[str, float]:
        """A text's TF-IDF vector of unit length, from its content-word stems."""
        counts = Counter(stems)
        weights = {w: (1.0 + math.log(n)) * self.idf.get(w, self.unseen_idf) for w, n in counts.items()}
        norm = math.sqrt(sum(x * x for x in weights.values())) or 1.0
        return {w: x / norm for w, x in weights.items()}

    def similarity(self, vector: Mapping[str, float], concept: str) -> float | None:
        """The cosine of a paper vector with a concept's profile; None for a concept without one."""
        centroid = self.centroids.get(concept)
        if centroid is None:
            return None
        return sum(x * vector.get(w, 0.0) for w, x in centroid.items())


@lru_cache(maxsize=4)
def load(folder: Path | None = None) -> Profiles:
    """The shipped profiles (kg/extract/patterns); a user's scheme gets profiles for the concepts they share."""
    home = folder or data_path("patterns")
    idf: dict[str, float] = {}
    centroids: dict[str, dict[str, float]] = {}
    unseen = 0.0
    try:
        for line in _lines(home / "stem-idf.tsv"):
            word, value = line.split("\t")
            if word == "*":
                unseen = float(value)
            else:
                idf[word] = float(value)
        for line in _lines(home / "concept-profiles.tsv"):
            concept, words = line.split("\t")
            centroids[concept] = {w: float(x) for w, x in (pair.rsplit(":", 1) for pair in words.split())}
    except (OSError, ValueError) as e:
        raise SchemeError(f"{home}: the concept profiles cannot be read ({e}); reinstall kg or rerun bench/concept_profiles.py") from None
    return Profiles(idf, unseen, centroids)


def _lines(path: Path) -> Iterable[str]:
    return (line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#"))
