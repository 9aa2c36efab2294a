"""A sentence-embedding model shipped inside a PyPI wheel (WordLlama) against the concepts' BM25, on expert lists.

Usage: pip install wordllama==0.4.0.post1; python bench/embedding_candidates.py [EXPERT.jsonl PAPERS.jsonl]

WordLlama's wheel holds its 256-dimension weights and its tokenizer; its loader looks for the tokenizer in a folder
the wheel does not use and then downloads it, so the bench points it at a folder that links the wheel's own copy
(no network). Each concept is embedded from its labels and definition, each paper from its title and abstract.
Printed, as decision 0062's table: how often the best concepts that the matcher did not find are an expert's topic
(exact) or right by the rule, and how many of the topics kg's candidates miss they reach, for BM25 (kg.extract.
definitions), the embedding's cosine, and the sum of both as z-scores; then recall at P 0.80, cross-validated
(3 splits), with the cosine's z-score and rank as scorer features. See docs/decisions/0072.
"""

from __future__ import annotations

import random
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from choice_variants import read_with_scores  # bench/, the folder of this script

from kg.extract import ingest, scheme
from kg.extract.expert import read_expert
from kg.extract.keywords import topic_key
from kg.extract.matcher import PhraseExtractor
from kg.extract.training.expert import PRECISION_FLOOR, THRESHOLDS, Judge, subjects, table
from kg.extract.training.scorer import Table, cross_validated

GOLD = Path(__file__).resolve().parent.parent.parent / "shared" / "gold"


def model():  # -> wordllama.WordLlamaInference
    import wordllama
    from wordllama import WordLlama

    cache = Path(tempfile.mkdtemp(prefix="wordllama-"))
    (cache / "tokenizers").mkdir()
    (cache / "tokenizers" / "l2_supercat_tokenizer_config.json").symlink_to(Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json")
    return WordLlama.load(cache_dir=cache, disable_download=True)


def z(scores: np.ndarray) -> np.ndarray:
    return (scores - scores.mean(axis=1, keepdims=True)) / (scores.std(axis=1, keepdims=True) + 1e-9)


def main(argv: list[str]) -> None:
    expert_file, papers_file = (Path(argv[0]), Path(argv[1])) if len(argv) == 2 else (GOLD / "expert-dev.jsonl", GOLD / "keywords-dev.jsonl")
    texts = {p.id: p for p in ingest.read([papers_file]).papers}
    experts = [e for e in read_expert(expert_file) if e.id in texts]
    papers = [texts[e.id] for e in experts]
    loaded = scheme.load()
    judge = Judge.of_scheme(loaded)
    extractor = PhraseExtractor(loaded)
    _, captured = read_with_scores(extractor, papers)
    iris = extractor.definitions.iris
    wl = model()
    concepts = wl.embed([", ".join(loaded.concepts[i].labels[:8]) + ". " + (loaded.concepts[i].definition or "") for i in iris], norm=True)
    cosine = wl.embed([f"{p.title or ''}. {p.abstract}" for p in papers], norm=True) @ concepts.T
    bm25 = np.stack([s for _, s in captured])
    named_by = judge.hierarchy.named_by()
    above = {i: loaded.ancestors(i) for i in loaded.concepts}
    topics_of = [{c for t in e.about for c in named_by.get(topic_key(t.label), ())} for e in experts]
    print(f"{len(papers)} papers; the best concepts the matcher did not find (exact: an expert's topic; right: by the rule):")
    for name, scores in (("BM25", bm25), ("embedding", cosine), ("both (z-scores summed)", z(bm25) + z(cosine))):
        counts: Counter = Counter()
        for j, (found, _) in enumerate(captured):
            topics = topics_of[j]
            ranked = [iris[k] for k in np.argsort(-scores[j]) if iris[k] not in found][:5]
            missed = [t for t in topics if not any(t == f or t in above.get(f, ()) for f in found)]
            counts["missed"] += len(missed)
            for k in (1, 3):
                top = ranked[:k]
                counts[f"top {k}"] += len(top)
                counts[f"top {k} exact"] += sum(c in topics for c in top)
                counts[f"top {k} right"] += sum(c in topics or bool(above[c] & topics) or any(c in above[t] for t in topics) for c in top)
                counts[f"top {k} reach"] += sum(any(t == c or t in above[c] for c in top) for t in missed)
        print(f"  {name:24} " + "; ".join(f"top {k}: exact {counts[f'top {k} exact'] / counts[f'top {k}']:.3f}, right {counts[f'top {k} right'] / counts[f'top {k}']:.3f}, "
                                           f"reaches {counts[f'top {k} reach']} of {counts['missed']}" for k in (1, 3)))
    data = table(experts, texts, judge, extractor)
    untitled = z(wl.embed([p.abstract for p in papers], norm=True) @ concepts.T)
    titled = z(cosine)
    column = {c: i for i, c in enumerate(iris)}

    def with_feature(d: Table) -> Table:
        rows = []
        for i, row in enumerate(d.rows):
            s = (titled if d.titled[i] else untitled)[d.paper[i]]
            c = column[d.concept[i]]
            rows.append((*row, float(s[c]), 1.0 / (1 + int((s > s[c]).sum()))))
        return replace(d, rows=tuple(rows))

    for name, d in (("shipped features", data), ("+ the embedding's z-score and rank", with_feature(data))):
        runs = []
        for seed in range(3):
            order = list(range(len(d.papers)))
            random.Random(seed).shuffle(order)
            fold_of = {p: k % 5 for k, p in enumerate(order)}
            oof = cross_validated(d, [fold_of[p] for p in range(len(d.papers))])
            for t in THRESHOLDS:
                s = judge.score(d.papers, subjects(d, oof, t, True))
                if s.precision >= PRECISION_FLOOR:
                    runs.append((s.precision, s.recall))
                    break
        print(f"  {name:36} cross-validated at P >= {PRECISION_FLOOR}: P {sum(r[0] for r in runs) / 3:.3f}, R {sum(r[1] for r in runs) / 3:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
