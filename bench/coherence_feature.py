"""Does a candidate's agreement with the paper's other candidates, by the corpus, help the scorer? (decision 0072)

Usage: python bench/coherence_feature.py CORPUS_GRAPH.ttl [EXPERT.jsonl PAPERS.jsonl] [--repeats N]

CORPUS_GRAPH is a graph kg built of a reference corpus (the 21k abstracts, say), with its query index beside it.
Two concepts co-occur where one paper of it mentions both (any candidate with a mention, subject or not); their
normalised PMI says how much more often than chance. Each candidate row of the expert lists then gains, over the
paper's other candidates: the mean NPMI (weighted by their mentions' weight sum), the largest, and the share above
0.2. The scorer is cross-validated with and without them as bench/expert_cv.py does it (5 folds by paper, N random
splits, the threshold where out-of-fold precision first reaches 0.80), and the figures are printed side by side.
"""

from __future__ import annotations

import math
import sqlite3
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

from expert_cv import GOLD, cross_validate

from kg.extract import ingest, scheme
from kg.extract.expert import read_expert
from kg.extract.features import FEATURES
from kg.extract.matcher import PhraseExtractor
from kg.extract.training.expert import Judge, table
from kg.graph.index_file import index_path


def co_occurrence(graph: Path) -> tuple[int, Counter, Counter]:
    """Papers, papers a concept is mentioned in, and papers a (sorted) pair is mentioned in together."""
    db = sqlite3.connect(index_path(graph))
    mentioned: dict[int, set[str]] = defaultdict(set)
    for paper, concept in db.execute("SELECT DISTINCT m.paper, t.value FROM mention AS m JOIN term_row AS t ON t.id = m.body"):
        mentioned[paper].add(concept)
    db.close()
    count: Counter = Counter()
    pairs: Counter = Counter()
    for concepts in mentioned.values():
        ordered = sorted(concepts)
        count.update(ordered)
        pairs.update((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :])
    return len(mentioned), count, pairs


def main(argv: list[str]) -> None:
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 5
    args = [a for i, a in enumerate(argv) if a != "--repeats" and (i == 0 or argv[i - 1] != "--repeats")]
    graph = Path(args[0])
    expert_path, papers_path = (Path(args[1]), Path(args[2])) if len(args) > 2 else (GOLD / "expert-dev.jsonl", GOLD / "keywords-dev.jsonl")
    n, count, pairs = co_occurrence(graph)

    def npmi(a: str, b: str) -> float:
        together, ca, cb = pairs.get((min(a, b), max(a, b)), 0), count.get(a, 0), count.get(b, 0)
        if not ca or not cb:
            return 0.0
        if not together:  # never together: -1 where chance would put them together often, else unknown
            return -1.0 if ca * cb / n > 5 else 0.0
        p = together / n
        return math.log(p / (ca / n * cb / n)) / -math.log(p)

    experts = read_expert(expert_path)
    texts = {p.id: p for p in ingest.read([papers_path]).papers if p.id in {e.id for e in experts}}
    loaded = scheme.load()
    judge = Judge.of_scheme(loaded)
    data = table(experts, texts, judge, PhraseExtractor(loaded))
    weight = FEATURES.index("weight_sum")
    reading: dict[tuple[int, bool], list[int]] = defaultdict(list)
    for i, key in enumerate(zip(data.paper, data.titled)):
        reading[key].append(i)
    extra: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(data.rows)
    for rows in reading.values():
        for i in rows:
            others = [(npmi(data.concept[i], data.concept[j]), data.rows[j][weight]) for j in rows if j != i]
            if others:
                total = sum(w for _, w in others) or 1.0
                extra[i] = (sum(v * w for v, w in others) / total, max(v for v, _ in others),
                            sum(v > 0.2 for v, _ in others) / len(others))
    print(f"{len(texts)} papers, {len(data.rows)} candidate rows; co-occurrence over {n:,} papers of {graph.name}, {repeats} splits")
    print("| features | P | R | in-scheme R | subjects a paper | generic share | R at P>=0.75 | R at P>=0.85 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, columns in (("shipped", ()), ("+ mean NPMI", (0,)), ("+ mean, largest, share above 0.2", (0, 1, 2))):
        rows = tuple(tuple(r) + tuple(extra[i][c] for c in columns) for i, r in enumerate(data.rows))
        f = cross_validate(replace(data, rows=rows), judge, repeats, True)
        print(f"| {name} | {f['P']:.3f} | {f['R']:.3f} | {f['R in scheme']:.3f} | {f['subjects']:.2f} | {f['generic']:.3f} "
              f"| {f['R@P0.75']:.3f} | {f['R@P0.85']:.3f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
