"""Word vectors kg trains itself, for a similarity of a paper to a concept's definition that sees related words.

BM25 (kg.extract.definitions) sees only the words a definition and a paper share; a writer says "reducing the number
of weights" where a definition of pruning says "removing parameters". The vectors (`patterns/word-vectors.npy`,
float16, beside the words and their counts in `word-vectors.txt`) come from the co-occurrences of the compared words
in a reference corpus of ML abstracts (positive PMI, truncated SVD: bench/definition_vectors.py rebuilds them). A text
is the SIF-weighted mean of its words' vectors (weight a / (a + the word's share of the corpus's words)): a concept's
text is its definition and labels, a paper's its title and abstract. Decision 0066.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from kg.graph.resources import data_path

if TYPE_CHECKING:
    import numpy as np

SIF = 1e-3  # SIF's a: a word as common as this share of the corpus's words weighs 1/2


@dataclass(frozen=True)
class WordVectors:
    """The vectors (one row a word, length 1) and each word's SIF weight."""

    index: Mapping[str, int]
    vectors: np.ndarray
    weights: np.ndarray


@lru_cache(maxsize=2)
def read(path: Path | None = None) -> WordVectors | None:
    """The word vectors at `path` (without suffix; default the bundled ones), None when there are none."""
    import numpy as np

    base = path or data_path("patterns") / "word-vectors"
    npy, txt = base.with_suffix(".npy"), base.with_suffix(".txt")
    if not (npy.is_file() and txt.is_file()):
        return None
    total, words, counts = 1, [], []
    for line in txt.read_text(encoding="utf-8").splitlines():
        if line.startswith("# words\t"):
            total = int(line.split("\t")[1])
        elif line and not line.startswith("#"):
            w, n = line.split("\t")
            words.append(w)
            counts.append(int(n))
    vectors = np.load(npy, allow_pickle=False).astype(np.float32)
    weights = SIF / (SIF + np.asarray(counts, dtype=np.float32) / total)
    return WordVectors({w: i for i, w in enumerate(words)}, vectors, weights)


def embedding(vectors: WordVectors, terms: Sequence[str]) -> np.ndarray:
    """term x dimension: each term's SIF-weighted vector (0 for a term without one), so that a matrix of counts of the
    terms times it is the texts' weighted sums."""
    import numpy as np

    out = np.zeros((len(terms), vectors.vectors.shape[1]), dtype=np.float32)
    for j, t in enumerate(terms):
        i = vectors.index.get(t)
        if i is not None:
            out[j] = vectors.weights[i] * vectors.vectors[i]
    return out


def unit(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a row of zeros stays 0)."""
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-12)
