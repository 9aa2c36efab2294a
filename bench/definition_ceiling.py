"""How far candidates from the concepts' definitions could reach: the ceiling, before any code in the package.

Usage: python bench/definition_ceiling.py [EXPERT.jsonl PAPERS.jsonl] [--corpus CORPUS.jsonl] [--sample N] [--definition-only]

Every concept of the scheme has a skos:definition written by people (not fitted on any expert list). For each
expert paper and each concept this scores the paper's title and abstract against the concept's definition and
labels, by content-word Snowball stems (stop words out), IDF from CORPUS (the 21k reference abstracts):

- cos: cosine of the paper's TF-IDF vector (log tf) with the concept's (binary tf);
- bm25: the definition and labels as the query, the paper as the document (k1 1.2, b 0.75);
- cover: the share of the concept's IDF mass that the paper's words hold;
- each also standardised per concept over N corpus papers (suffix z), so a concept with a long or common-worded
  definition does not crowd the top of every paper.

Then, for the in-scheme topics the shipped extraction misses as "never matched" or "rolled up elsewhere"
(kg.extract.expert.CAUSES, in-sample with the shipped scorer, as `kg eval --expert -v` gives them): the rank among
all concepts at which the topic (its concept or one below it) first comes for its paper; and, at top k and at a
score floor, how many new candidates a paper gets (concepts the matcher did not already give it) and what share of
them are right by the expert rule (an about concept, below one, or, an umbrella aside, above one).
Needs `pip install snowballstemmer` (bench only).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import snowballstemmer
from scipy import sparse
from spacy.lang.en.stop_words import STOP_WORDS

from kg.extract import ingest, scheme
from kg.extract.expert import NEVER_MATCHED, ROLLED_UP, read_expert, score_expert
from kg.extract.matcher import PhraseExtractor
from kg.extract.training.expert import Judge

ROOT = Path(__file__).resolve().parent.parent.parent / "shared"
WORD = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_stemmer = snowballstemmer.stemmer("english")
_stems: dict[str, str] = {}
if os.environ.get("KG_DEFS_LEMMA"):  # spaCy's lemma lookup table instead of Snowball stems
    from spacy.lookups import load_lookups

    _lemmas = load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")
    _stemmer.stemWord = lambda w: _lemmas.get(w, w)  # type: ignore[method-assign]


def stems(text: str) -> list[str]:
    """Content-word stems of a text; hyphenated words give their parts."""
    out = []
    for word in WORD.findall(text.lower()):
        for part in word.split("-"):
            if len(part) < 3 or part in STOP_WORDS:
                continue
            s = _stems.get(part)
            if s is None:
                s = _stems[part] = _stemmer.stemWord(part)
            out.append(s)
    return out


def concept_text(c: scheme.Concept) -> str:
    return " ".join([c.definition or "", *c.labels])


class Space:
    """IDF of stems over a corpus, and sparse vectors of texts in it."""

    def __init__(self, corpus_texts: list[str]) -> None:
        df: Counter[str] = Counter()
        self.lengths = []
        for t in corpus_texts:
            words = stems(t)
            self.lengths.append(len(words))
            df.update(set(words))
        n = len(corpus_texts)
        self.index = {w: i for i, w in enumerate(sorted(df))}
        self.idf = np.array([math.log((n - df[w] + 0.5) / (df[w] + 0.5) + 1) for w in sorted(df)])
        self.avgdl = float(np.mean(self.lengths))

    def counts(self, texts: list[str]) -> sparse.csr_matrix:
        rows, cols, vals = [], [], []
        for r, t in enumerate(texts):
            for w, k in Counter(stems(t)).items():
                if w in self.index:
                    rows.append(r)
                    cols.append(self.index[w])
                    vals.append(k)
        return sparse.csr_matrix((vals, (rows, cols)), shape=(len(texts), len(self.index)), dtype=float)


def similarities(space: Space, papers: sparse.csr_matrix, concepts: sparse.csr_matrix) -> dict[str, np.ndarray]:
    """papers × concepts score matrices, one per measure."""
    idf = sparse.diags(space.idf)
    q = (concepts > 0).astype(float)  # concept words, binary
    # cos
    p_tfidf = papers.copy()
    p_tfidf.data = 1 + np.log(p_tfidf.data)
    p_tfidf = p_tfidf @ idf
    c_tfidf = q @ idf
    pn = np.sqrt(np.asarray(p_tfidf.multiply(p_tfidf).sum(axis=1))).ravel() + 1e-9
    cn = np.sqrt(np.asarray(c_tfidf.multiply(c_tfidf).sum(axis=1))).ravel() + 1e-9
    cos = np.asarray((p_tfidf @ c_tfidf.T).todense()) / pn[:, None] / cn[None, :]
    # bm25: paper as document, concept words as query
    k1, b = 1.2, 0.75
    dl = np.asarray(papers.sum(axis=1)).ravel()
    sat = papers.tocoo()
    norm = k1 * (1 - b + b * dl[sat.row] / space.avgdl)
    sat_vals = sat.data * (k1 + 1) / (sat.data + norm)
    saturated = sparse.csr_matrix((sat_vals, (sat.row, sat.col)), shape=papers.shape)
    bm25 = np.asarray((saturated @ idf @ q.T).todense())
    # cover: share of the concept's idf mass present in the paper
    present = (papers > 0).astype(float)
    mass = np.asarray(c_tfidf.sum(axis=1)).ravel() + 1e-9
    cover = np.asarray((present @ c_tfidf.T).todense()) / mass[None, :]
    return {"cos": cos, "bm25": bm25, "cover": cover}


class Definitions:
    """BM25 of every concept's definition and labels (the query) against texts (the documents), IDF from a corpus."""

    def __init__(self, loaded: scheme.Scheme, corpus_path: str | Path = ROOT / "corpora" / "ml-abstracts.jsonl") -> None:
        corpus = [json.loads(line) for line in open(corpus_path, encoding="utf-8")]
        self.space = Space([f"{r.get('title') or ''}. {r.get('abstract') or ''}" for r in corpus])
        self.iris = sorted(loaded.concepts)
        self.concepts = self.space.counts([concept_text(loaded.concepts[c]) for c in self.iris])

    def bm25(self, texts: list[str]) -> np.ndarray:
        return similarities(self.space, self.space.counts(texts), self.concepts)["bm25"]


def main(argv: list[str]) -> None:
    opts = {"--corpus": str(ROOT / "corpora" / "ml-abstracts.jsonl"), "--sample": "4000"}
    args = []
    flags = {a for a in argv if a == "--definition-only"}
    argv = [a for a in argv if a not in flags]
    i = 0
    while i < len(argv):
        if argv[i] in opts:
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    expert_path, papers_path = (Path(args[0]), Path(args[1])) if len(args) > 1 else (Path("/tmp/defs-expert350.jsonl"), ROOT / "gold" / "keywords-dev.jsonl")
    experts = read_expert(expert_path)
    wanted = {e.id for e in experts}
    texts = {p.id: p for p in ingest.read([papers_path]).papers if p.id in wanted}
    experts = [e for e in experts if e.id in texts]
    loaded = scheme.load()
    judge = Judge.of_scheme(loaded)
    hierarchy = judge.hierarchy
    named_by = hierarchy.named_by()

    # The shipped extraction: subjects and candidates, misses by cause.
    extractor = PhraseExtractor(loaded)
    extractions = extractor([texts[e.id] for e in experts])
    predicted = {x.paper_id: {link.concept for link in x.links if link.subject} for x in extractions}
    candidates = {x.paper_id: {link.concept for link in x.links} for x in extractions}
    ev = score_expert(experts, predicted, hierarchy, judge.umbrellas, candidates)
    print(f"{len(experts)} papers, {ev.topics} topics; shipped P {ev.precision:.3f} R {ev.recall:.3f}; misses {dict(ev.misses_by_cause())}")

    # The similarity space.
    corpus = [json.loads(line) for line in open(opts["--corpus"], encoding="utf-8")]
    corpus_texts = [f"{r.get('title') or ''}. {r.get('abstract') or ''}" for r in corpus]
    space = Space(corpus_texts)
    iris = sorted(loaded.concepts)
    col = {c: j for j, c in enumerate(iris)}
    concepts = space.counts([concept_text(loaded.concepts[c]) for c in iris])
    paper_texts = [f"{texts[e.id].title or ''}. {texts[e.id].abstract}" for e in experts]
    sims = similarities(space, space.counts(paper_texts), concepts)
    rng = np.random.default_rng(0)
    sample = rng.choice(len(corpus_texts), size=min(int(opts["--sample"]), len(corpus_texts)), replace=False)
    base = similarities(space, space.counts([corpus_texts[k] for k in sample]), concepts)
    for name in list(sims):
        mu, sd = base[name].mean(axis=0), base[name].std(axis=0) + 1e-9
        sims[name + "z"] = (sims[name] - mu[None, :]) / sd[None, :]
    if "--definition-only" in flags:
        only = space.counts([loaded.concepts[c].definition or "" for c in iris])
        for name, m in similarities(space, space.counts(paper_texts), only).items():
            sims[name + "-def"] = m
    # The same, ranked among the concepts the matcher did not already give the paper (suffix -new).
    for name in list(sims):
        m = sims[name].copy()
        for k, e in enumerate(experts):
            m[k, [col[c] for c in candidates[e.id] if c in col]] = -np.inf
        sims[name + "-new"] = m

    # Down-closure of each concept: itself and every concept below it.
    below: dict[str, set[str]] = {c: {c} for c in iris}
    for c in iris:
        for a in loaded.ancestors(c):
            if a in below:
                below[a].add(c)

    missed = []  # (paper index, cause, concepts the topic names)
    for k, p in enumerate(ev.papers):
        for t in p.topics:
            if t.cause in (NEVER_MATCHED, ROLLED_UP):
                missed.append((k, t.cause, t.concepts))
    print(f"missed topics looked at: {Counter(c for _, c, _ in missed)}")

    abouts = []
    for e in experts:
        about = frozenset().union(*(named_by.get(_key(t.label), frozenset()) for t in e.about))
        abouts.append(about)
    up_about = [hierarchy.closure(a) for a in abouts]

    def right(k: int, c: str) -> bool:
        about = abouts[k]
        at_or_below = c in about or bool(hierarchy.closure((c,)) & about)
        return c in about or (c not in judge.umbrellas and (c in up_about[k] or at_or_below))

    print("\n### Rank of the missed topic among all concepts, for its paper")
    print("| measure | cause | topics | top 1 | top 3 | top 5 | top 10 | top 20 | median rank |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, m in sims.items():
        order = np.argsort(-m, axis=1, kind="stable")
        rank_of = np.empty_like(order)
        for k in range(order.shape[0]):
            rank_of[k, order[k]] = np.arange(1, order.shape[1] + 1)
        for cause in (NEVER_MATCHED, ROLLED_UP, "both"):
            ranks = []
            for k, c, cs in missed:
                if cause != "both" and c != cause:
                    continue
                cols = [col[x] for cc in cs for x in below.get(cc, {cc}) if x in col]
                ranks.append(int(min(rank_of[k, cols])) if cols else 10**6)
            r = np.array(ranks)
            shares = " | ".join(f"{(r <= n).mean():.2f}" for n in (1, 3, 5, 10, 20))
            print(f"| {name} | {cause} | {len(r)} | {shares} | {int(np.median(r))} |")

    print("\n### New candidates (concepts the matcher did not give the paper), at top k / a floor")
    print(f"| measure | top k | floor | new a paper | right share of new | missed topics reached (of {len(missed)}) | never matched reached | rolled up reached |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, m in sims.items():
        for top in (1, 2, 3, 5, 10):
            finite = m[np.isfinite(m)]
            floors = [None] + (list(np.quantile(finite, [0.99, 0.995, 0.999])) if top in (3, 5, 10) else [])
            for floor in floors:
                new = right_n = 0
                chosen: list[set[str]] = []
                for k, e in enumerate(experts):
                    order = np.argsort(-m[k], kind="stable")[:top]
                    picks = {iris[j] for j in order if floor is None or m[k, j] >= floor} - candidates[e.id]
                    chosen.append(picks)
                    new += len(picks)
                    right_n += sum(right(k, c) for c in picks)
                reached = Counter()
                for k, c, cs in missed:
                    down = set().union(*(below.get(cc, {cc}) for cc in cs))
                    if chosen[k] & down:
                        reached[c] += 1
                fl = "-" if floor is None else f"{floor:.3f}"
                print(f"| {name} | {top} | {fl} | {new / len(experts):.2f} | {right_n / max(1, new):.2f} | {sum(reached.values())} | {reached[NEVER_MATCHED]} | {reached[ROLLED_UP]} |")


def _key(label: str) -> str:
    from kg.extract.keywords import topic_key

    return topic_key(label)


if __name__ == "__main__":
    main(sys.argv[1:])
