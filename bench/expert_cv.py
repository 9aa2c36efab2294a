"""The scorer fitted on expert topic lists, cross-validated over several fold splits (kg.extract.training.expert).

Usage: python bench/expert_cv.py [EXPERT.jsonl PAPERS.jsonl] [--repeats N] [--held-out OTHER_EXPERT.jsonl]
The scorer is fitted and its threshold chosen as `kg train --expert` does (the lowest with out-of-fold
precision at least PRECISION_FLOOR), over N random splits into folds by paper (one split's figures move by
about 0.01); it prints the mean precision, recall and subjects a paper, the recall at fixed precisions (so
variants compare at one precision), and the candidate ceiling (every candidate a subject), for papers read
with their titles and without (seed lists have none). A variant of the features or the matcher is measured
by running it on a branch that has it. With --held-out, the scorer is also fitted on every paper of EXPERT as
`kg train --expert` fits it (threshold included) and scored on the papers of OTHER_EXPERT, which it never saw; the
recall at a precision floor on those papers' own curve is printed beside it, to compare variants at one precision.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from kg.extract import ingest, scheme
from kg.extract.expert import read_expert
from kg.extract.matcher import PhraseExtractor
from kg.extract.training.expert import PRECISION_FLOOR, THRESHOLDS, Judge, subjects, table, train
from kg.extract.training.scorer import Table, cross_validated

GOLD = Path(__file__).resolve().parent.parent.parent / "shared" / "gold"
def cross_validate(data: Table, judge: Judge, repeats: int, titled: bool) -> dict[str, float]:
    """Mean figures over `repeats` random fold splits (5 folds by paper)."""
    n = len(data.papers)
    sums: dict[str, float] = {}
    for seed in range(repeats):
        order = list(range(n))
        random.Random(seed).shuffle(order)
        fold_of = {p: k % 5 for k, p in enumerate(order)}
        oof = cross_validated(data, [fold_of[p] for p in range(n)])
        scores = {t: judge.score(data.papers, subjects(data, oof, t, titled)) for t in THRESHOLDS}
        passing = [t for t, s in scores.items() if s.precision >= PRECISION_FLOOR]
        best = scores[min(passing)] if passing else max(scores.values(), key=lambda s: s.precision)
        figures = {"P": best.precision, "R": best.recall, "R in scheme": best.recall_in_scheme, "subjects": best.subjects_a_paper, "generic": best.generic_share}
        for floor in (0.75, 0.85):
            figures[f"R@P{floor:.2f}"] = max((s.recall for s in scores.values() if s.precision >= floor), default=0.0)
        for key, value in figures.items():
            sums[key] = sums.get(key, 0.0) + value / repeats
    return sums


def main(argv: list[str]) -> None:
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 5
    held_out = Path(argv[argv.index("--held-out") + 1]) if "--held-out" in argv else None
    flags = ("--repeats", "--held-out")
    args = [a for i, a in enumerate(argv) if a not in flags and (i == 0 or argv[i - 1] not in flags)]
    expert_path, papers_path = (Path(args[0]), Path(args[1])) if len(args) > 1 else (GOLD / "expert-dev.jsonl", GOLD / "keywords-dev.jsonl")
    experts = read_expert(expert_path)
    wanted = {e.id for e in experts}
    texts = {p.id: p for p in ingest.read([papers_path]).papers if p.id in wanted}
    loaded = scheme.load()
    judge = Judge.of_scheme(loaded)
    data = table(experts, texts, judge, PhraseExtractor(loaded))
    print(f"{len(texts)} papers, {repeats} random 5-fold splits by paper; threshold: the lowest with precision >= {PRECISION_FLOOR}")
    print("| reading | P | R | in-scheme R | subjects a paper | generic share | R at P>=0.75 | R at P>=0.85 | candidate ceiling R (candidates a paper) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for titled in (True, False):
        f = cross_validate(data, judge, repeats, titled)
        every: dict[str, set[str]] = {}
        for p, c, t in zip(data.paper, data.concept, data.titled):
            if t == titled:
                every.setdefault(data.papers[p].id, set()).add(c)
        ceiling = judge.score(data.papers, every)
        print(f"| {'title and abstract' if titled else 'abstract only'} | {f['P']:.3f} | {f['R']:.3f} | {f['R in scheme']:.3f} | {f['subjects']:.2f} "
              f"| {f['generic']:.3f} | {f['R@P0.75']:.3f} | {f['R@P0.85']:.3f} | {ceiling.recall:.3f} ({ceiling.subjects_a_paper:.1f}) |")
    if held_out is not None:
        scorer = train(experts, texts, loaded).scorer
        others = read_expert(held_out)
        other_texts = {p.id: p for p in ingest.read([papers_path]).papers if p.id in {e.id for e in others}}
        test = table(others, other_texts, judge, PhraseExtractor(loaded))
        probabilities = scorer.probabilities(test.rows)
        print(f"\nfitted on all {len(texts)} papers (threshold {scorer.threshold:.2f}), scored on the {len(test.papers)} papers of {held_out.name}:")
        print("| reading | P | R | in-scheme R | subjects a paper | generic share | R at held-out P>=0.80 | R at held-out P>=0.85 |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for titled in (True, False):
            s = judge.score(test.papers, subjects(test, probabilities, scorer.threshold, titled))
            # The curve on the held-out papers themselves: variants compared at one precision, not a threshold kg could choose.
            curve = [judge.score(test.papers, subjects(test, probabilities, t, titled)) for t in THRESHOLDS]
            at = {floor: max((c.recall for c in curve if c.precision >= floor), default=0.0) for floor in (0.80, 0.85)}
            print(f"| {'title and abstract' if titled else 'abstract only'} | {s.precision:.3f} | {s.recall:.3f} | {s.recall_in_scheme:.3f} "
                  f"| {s.subjects_a_paper:.2f} | {s.generic_share:.3f} | {at[0.80]:.3f} | {at[0.85]:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
