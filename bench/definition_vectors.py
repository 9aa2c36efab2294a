"""Write kg/extract/patterns/word-vectors.npy and word-vectors.txt: word vectors kg trains on a reference corpus.

Usage: python bench/definition_vectors.py [CORPUS.jsonl] [-o kg/extract/patterns/word-vectors]

The words are those kg.extract.definitions compares (lower case, spaCy's lemma table, stop words and words under
three letters out), read from each paper's cleaned title and abstract with the matcher's tokenizer. The VOCABULARY
most frequent words held by at least MIN_PAPERS papers are counted together within WINDOW compared words of each
other (weighted 1/distance); the counts become positive pointwise mutual information (the contexts' counts raised to
0.75), and a truncated SVD of that matrix (ARPACK from a fixed start vector: the same file on every run) gives each
word DIMENSIONS numbers, U·sqrt(S), scaled to length 1 and stored as float16 (`.npy`, no pickle) beside the words one
a line with its count (`.txt`, for the SIF weights). kg.extract.vectors reads them (decision 0066).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import svds

from kg.extract.cleanup import clean
from kg.extract.definitions import keys
from kg.extract.matcher import make_nlp

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
VOCABULARY = 12_000
MIN_PAPERS = 3
WINDOW = 5
DIMENSIONS = 128
SMOOTHING = 0.75


def main(argv: list[str]) -> None:
    out = Path(argv[argv.index("-o") + 1]) if "-o" in argv else ROOT / "kg" / "extract" / "patterns" / "word-vectors"
    args = [a for i, a in enumerate(argv) if a != "-o" and (i == 0 or argv[i - 1] != "-o")]
    corpus = Path(args[0]) if args else CORPUS
    records = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    texts = [clean(f"{r.get('title') or ''}. {r.get('abstract') or ''}").text for r in records]
    nlp = make_nlp()
    docs = [keys(t.text for t in doc) for doc in nlp.pipe(texts, batch_size=256)]
    frequency: Counter[str] = Counter(w for d in docs for w in d)
    papers: Counter[str] = Counter(w for d in docs for w in set(d))
    words = sorted((w for w in frequency if papers[w] >= MIN_PAPERS), key=lambda w: (-frequency[w], w))[:VOCABULARY]
    index = {w: i for i, w in enumerate(words)}
    rows, cols, weights = [], [], []
    for d in docs:
        ids = [index.get(w, -1) for w in d]
        for i, a in enumerate(ids):
            if a < 0:
                continue
            for distance in range(1, WINDOW + 1):
                if i + distance >= len(ids):
                    break
                b = ids[i + distance]
                if b >= 0 and b != a:
                    rows += [a, b]
                    cols += [b, a]
                    weights += [1.0 / distance] * 2
    counts = sparse.csr_matrix((weights, (rows, cols)), shape=(len(words), len(words)), dtype=np.float64)
    counts.sum_duplicates()
    total = counts.sum()
    word_sums = np.asarray(counts.sum(axis=1)).ravel()
    context = np.asarray(counts.sum(axis=0)).ravel() ** SMOOTHING
    context /= context.sum()
    coo = counts.tocoo()
    pmi = np.log(coo.data * 1.0 / (word_sums[coo.row] / total) / context[coo.col] / total)
    keep = pmi > 0
    ppmi = sparse.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape)
    start = np.full(len(words), 1.0 / np.sqrt(len(words)))
    u, s, _ = svds(ppmi, k=DIMENSIONS, v0=start, solver="arpack")
    order = np.argsort(-s)
    vectors = u[:, order] * np.sqrt(s[order])
    signs = np.sign(vectors[np.abs(vectors).argmax(axis=0), np.arange(vectors.shape[1])])  # one sign per dimension
    vectors *= signs
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    np.save(out.with_suffix(".npy"), vectors.astype(np.float16), allow_pickle=False)
    lines = [f"{w}\t{frequency[w]}" for w in words]
    header = [
        f"# The {len(words)} words of the vectors in {out.with_suffix('.npy').name}, in its row order, and how often each",
        f"# occurs in the {len(texts)} papers of {corpus.name}. Written by bench/definition_vectors.py (decision 0066).",
        f"# words\t{sum(frequency.values())}",
    ]
    out.with_suffix(".txt").write_text("\n".join(header + lines) + "\n", encoding="utf-8")
    print(f"wrote {out.with_suffix('.npy')} ({vectors.shape[0]} x {vectors.shape[1]}), {out.with_suffix('.txt')}")


if __name__ == "__main__":
    main(sys.argv[1:])
