"""Candidates from the concepts' definitions, weighed by the scorer: cross-validated and held out, before any code
in the package (bench/definition_ceiling.py gives the ceiling and the similarity).

Usage: python bench/definition_cv.py [--top K,...] [--repeats N] [--floor Z,...] [--no-base]

The expert rows of `kg train --expert` (/tmp/defs-expert350.jsonl: expert-dev + expert-dev-more, papers in
keywords-dev) are read as kg reads them; then each paper reading (with its title and without) gets:
- more features on every row: the BM25 of the concept's definition and labels against the paper's text
  (`definition_bm25`), 1/its rank among all concepts for that paper (`definition_rank`), its z-score among them,
  the same BM25 and z-score again on the new rows only (0 on the matcher's candidates, so they get slopes of their
  own), and `described` (0 for the matcher's candidates);
- its top K concepts by that BM25 that the matcher did not give it, as new rows (no mention: mention features 0,
  first_position 1; corpus, scheme and neighbour features as for any candidate; `described` 1), labelled by the
  expert rule, when their BM25 is at least Z standard deviations above the mean of that paper's scores.
Printed: the mean over N random 5-fold splits by paper (threshold: the lowest with precision >= 0.80) for the
shipped features alone and with the new rows, and the same fitted on expert-dev and scored on expert-dev-more.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from definition_ceiling import ROOT, Definitions
from expert_cv import cross_validate

from kg.extract import ingest, scheme
from kg.extract.expert import read_expert
from kg.extract.features import FEATURES, ConceptFacts
from kg.extract.matcher import PhraseExtractor
from kg.extract.salience import PRIOR_RATE
from kg.extract.training.expert import PRECISION_FLOOR, THRESHOLDS, Judge, subjects, table
from kg.extract.training.scorer import Table, fit

COLUMN = {name: i for i, name in enumerate(FEATURES)}


def augmented(data: Table, texts: dict, loaded: scheme.Scheme, defs: Definitions, extractor: PhraseExtractor, judge: Judge, top: int, floor: float) -> Table:
    facts = ConceptFacts.of(loaded)
    col = {c: j for j, c in enumerate(defs.iris)}
    readings = sorted({(p, t) for p, t in zip(data.paper, data.titled)})
    strings = []
    for p, t in readings:
        paper = texts[data.papers[p].id]
        strings.append(f"{paper.title or ''}. {paper.abstract}" if t else paper.abstract)
    m = defs.bm25(strings)
    z = (m - m.mean(axis=1, keepdims=True)) / (m.std(axis=1, keepdims=True) + 1e-9)
    ranks = np.empty_like(m, dtype=np.int64)
    for k in range(m.shape[0]):
        ranks[k, np.argsort(-m[k], kind="stable")] = np.arange(1, m.shape[1] + 1)
    at = {r: k for k, r in enumerate(readings)}
    paper, concept, rows, label, titled = list(data.paper), list(data.concept), [], list(data.label), list(data.titled)
    present: dict[tuple[int, bool], set[str]] = {}
    for i, (p, t, c) in enumerate(zip(data.paper, data.titled, data.concept)):
        k = at[(p, t)]
        rows.append((*data.rows[i], float(m[k, col[c]]), 1.0 / ranks[k, col[c]], float(z[k, col[c]]), 0.0, 0.0, 0.0))
        present.setdefault((p, t), set()).add(c)
    named_by = judge.hierarchy.named_by()
    from kg.extract.keywords import topic_key

    for (p, t), k in (at.items() if top else ()):
        e = data.papers[p]
        about = frozenset().union(*(named_by.get(topic_key(a.label), frozenset()) for a in e.about))
        up_about = judge.hierarchy.closure(about)
        have = present.get((p, t), set())
        order = [j for j in np.argsort(-m[k], kind="stable") if defs.iris[j] not in have][:top]
        for j in order:
            if z[k, j] < floor:
                continue
            c = defs.iris[j]
            prior = extractor.priors.get(c)
            row = [0.0] * len(FEATURES)
            row[COLUMN["has_title"]] = float(t and bool(texts[e.id].title))
            row[COLUMN["first_position"]] = 1.0
            row[COLUMN["corpus_rate"]] = -math.log10(max(prior.rate if prior else PRIOR_RATE, 1e-5))
            row[COLUMN["topicality"]] = prior.topicality if prior else 1.0
            row[COLUMN["depth"]] = float(facts.depth.get(c, 0))
            row[COLUMN["narrower_in_scheme"]] = math.log1p(facts.narrower.get(c, 0))
            row[COLUMN["narrower_mentioned"]] = float(sum(1 for d in have if c in facts.ancestors.get(d, ())))
            row[COLUMN["broader_mentioned"]] = float(len(facts.ancestors.get(c, frozenset()) & have))
            row[COLUMN["dataset"]] = float(c in facts.datasets)
            row[COLUMN["tool"]] = float(c in facts.tools)
            row[COLUMN["umbrella"]] = float(c in facts.umbrellas)
            at_or_below = c in about or bool(judge.hierarchy.closure((c,)) & about)
            right = c in about or (c not in judge.umbrellas and (c in up_about or at_or_below))
            paper.append(p)
            concept.append(c)
            rows.append((*row, float(m[k, j]), 1.0 / ranks[k, j], float(z[k, j]), float(m[k, j]), float(z[k, j]), 1.0))
            label.append(int(right))
            titled.append(t)
    return Table(data.papers, tuple(paper), tuple(concept), tuple(rows), tuple(label), tuple(titled))


def held_out(data: Table, judge: Judge, dev_ids: set[str]) -> dict[str, float]:
    """Fitted on the papers of dev_ids (threshold by 5-fold CV there, as kg train does), scored on the others."""
    from kg.extract.training.scorer import cross_validated

    inside = [p for p, e in enumerate(data.papers) if e.id in dev_ids]
    outside = [p for p, e in enumerate(data.papers) if e.id not in dev_ids]

    def part(ps: list[int]) -> Table:
        keep = set(ps)
        renum = {p: n for n, p in enumerate(ps)}
        idx = [i for i, p in enumerate(data.paper) if p in keep]
        return Table(tuple(data.papers[p] for p in ps), tuple(renum[data.paper[i]] for i in idx), tuple(data.concept[i] for i in idx),
                     tuple(data.rows[i] for i in idx), tuple(data.label[i] for i in idx), tuple(data.titled[i] for i in idx))

    train, test = part(inside), part(outside)
    n = len(train.papers)
    oof = cross_validated(train, [i % 5 for i in range(n)])
    scores = {t: judge.score(train.papers, subjects(train, oof, t)) for t in THRESHOLDS}
    passing = [t for t, s in scores.items() if s.precision >= PRECISION_FLOOR]
    best = min(passing) if passing else max(scores, key=lambda t: scores[t].precision)
    model = fit(train.rows, train.label, best)
    s = judge.score(test.papers, subjects(test, model.probabilities(test.rows), best, True))
    return {"threshold": best, "P": s.precision, "R": s.recall, "R in scheme": s.recall_in_scheme, "subjects": s.subjects_a_paper, "generic": s.generic_share}


def main(argv: list[str]) -> None:
    tops = [int(x) for x in argv[argv.index("--top") + 1].split(",")] if "--top" in argv else [3]
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3
    floors = [float(x) for x in argv[argv.index("--floor") + 1].split(",")] if "--floor" in argv else [3.0]
    experts = read_expert("/tmp/defs-expert350.jsonl")
    dev_ids = {e.id for e in read_expert(ROOT / "gold" / "expert-dev.jsonl")}
    wanted = {e.id for e in experts}
    texts = {p.id: p for p in ingest.read([ROOT / "gold" / "keywords-dev.jsonl"]).papers if p.id in wanted}
    loaded = scheme.load()
    judge = Judge.of_scheme(loaded)
    extractor = PhraseExtractor(loaded)
    data = table(experts, texts, judge, extractor)
    defs = Definitions(loaded)
    variants = {"shipped features": data} if "--no-base" not in argv else {}
    if "--no-base" not in argv:
        variants["+ similarity features"] = augmented(data, texts, loaded, defs, extractor, judge, 0, 0.0)
    for k in tops:
        for fl in floors:
            variants[f"+ top {k} new at z >= {fl}"] = augmented(data, texts, loaded, defs, extractor, judge, k, fl)
    print(f"{len(data.papers)} papers; {repeats} random 5-fold splits; held out: fitted on expert-dev ({len(dev_ids)}), scored on the rest")
    print("| variant | rows | new rows right | CV P | CV R | CV in-scheme R | CV subjects | CV generic | ceiling R | held-out P | held-out R | held-out in-scheme R | held-out generic | threshold |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, d in variants.items():
        f = cross_validate(d, judge, repeats, True)
        every: dict[str, set[str]] = {}
        for p, c, t in zip(d.paper, d.concept, d.titled):
            if t:
                every.setdefault(d.papers[p].id, set()).add(c)
        ceiling = judge.score(d.papers, every)
        new = [lab for r, lab in zip(d.rows, d.label) if len(r) > len(FEATURES) and r[-1] == 1.0 and True]
        h = held_out(d, judge, dev_ids)
        print(f"| {name} | {len(d.rows)} | {sum(new)}/{len(new)} | {f['P']:.3f} | {f['R']:.3f} | {f['R in scheme']:.3f} | {f['subjects']:.2f} | {f['generic']:.3f} | {ceiling.recall:.3f} "
              f"| {h['P']:.3f} | {h['R']:.3f} | {h['R in scheme']:.3f} | {h['generic']:.3f} | {h['threshold']:.2f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
