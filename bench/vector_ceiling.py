"""How far the word vectors could move the described candidate: the missed expert topics each ordering reaches.

Usage: python bench/vector_ceiling.py (reads /tmp/vectors-expert350.jsonl: the two expert files concatenated)

For the in-scheme topics the shipped extraction misses as "never matched" or "rolled up elsewhere", and for the
concepts the matcher did not give the paper: at top 1, 2, 3, 5 by BM25 of the definitions, by the cosine of the word
vectors (kg.extract.vectors), and by BM25's z-score + w x the cosine's z-score (over every concept, or re-ranking
BM25's best 10), how many of those topics the new candidates reach and what share of them are right by the expert
rule. Decision 0066.
"""
import sys
from collections import Counter
from pathlib import Path
import numpy as np
from scipy import sparse
from kg.extract import ingest, scheme
from kg.extract.expert import NEVER_MATCHED, ROLLED_UP, read_expert, score_expert
from kg.extract.matcher import PhraseExtractor
from kg.extract.training.expert import Judge
from kg.extract.definitions import keys, _saturation, K1, B
from kg.extract.cleanup import clean
from kg.extract import vectors as V

experts = read_expert(Path("/tmp/vectors-expert350.jsonl"))
wanted = {e.id for e in experts}
texts = {p.id: p for p in ingest.read([Path("/work/shared/gold/keywords-dev.jsonl")]).papers if p.id in wanted}
experts = [e for e in experts if e.id in texts]
loaded = scheme.load()
judge = Judge.of_scheme(loaded)
hierarchy = judge.hierarchy
ex = PhraseExtractor(loaded)
xs = ex([texts[e.id] for e in experts])
predicted = {x.paper_id: {l.concept for l in x.links if l.subject} for x in xs}
cands = {x.paper_id: {l.concept for l in x.links if not l.described} for x in xs}
ev = score_expert(experts, predicted, hierarchy, judge.umbrellas, {x.paper_id: {l.concept for l in x.links} for x in xs})
idx = ex.definitions
iris = idx.iris; col = idx.index
rows, cols, vals = [], [], []
lengths = []
for k, e in enumerate(experts):
    p = texts[e.id]
    t = clean(f"{p.title or ''}. {p.abstract}").text
    ws = keys(tok.text for tok in ex.nlp(t))
    lengths.append(len(ws))
    for w, n in Counter(ws).items():
        j = idx.terms.get(w)
        if j is not None:
            rows.append(k); cols.append(j); vals.append(n)
counts = sparse.csr_matrix((vals, (rows, cols)), shape=(len(experts), idx.matrix.shape[1]))
norms = K1 * (1 - B + B * np.array(lengths) / idx.mean_length)
sat = counts.copy(); sat.data = _saturation(counts.data, np.repeat(norms, np.diff(counts.indptr)))
bm25 = (sat @ idx.by_term).toarray()
cos = V.unit(np.asarray(counts @ idx.embedding, dtype=np.float32)) @ idx.concept_vectors.T
def z(m): return (m - m.mean(axis=1, keepdims=True)) / (m.std(axis=1, keepdims=True) + 1e-9)
sims = {"bm25": bm25, "cos": cos, **{f"bm25z+{w}cosz": z(bm25) + w * z(cos) for w in (0.5, 1, 1.5, 2, 3, 4)}}
# rerank within bm25 top 10 by the combination
below = {c: {c} for c in iris}
for c in iris:
    for a in loaded.ancestors(c):
        if a in below: below[a].add(c)
missed = [(k, t.cause, t.concepts) for k, p in enumerate(ev.papers) for t in p.topics if t.cause in (NEVER_MATCHED, ROLLED_UP)]
named_by = hierarchy.named_by()
from kg.extract.keywords import topic_key as _key
abouts = [frozenset().union(*(named_by.get(_key(t.label), frozenset()) for t in e.about)) for e in experts]
up = [hierarchy.closure(a) for a in abouts]
def right(k, c):
    a = abouts[k]
    return c in a or (c not in judge.umbrellas and (c in up[k] or bool(hierarchy.closure((c,)) & a)))
print(len(missed), "missed")
for name, m in list(sims.items()):
    m = m.copy()
    for k, e in enumerate(experts):
        m[k, [col[c] for c in cands[e.id] if c in col]] = -np.inf
    for shortlist in (None, 10):
        mm = m.copy()
        if shortlist:
            b = bm25.copy()
            for k, e in enumerate(experts):
                b[k, [col[c] for c in cands[e.id] if c in col]] = -np.inf
            top = np.argsort(-b, axis=1, kind="stable")[:, :shortlist]
            mask = np.full(mm.shape, -np.inf); np.put_along_axis(mask, top, 0.0, axis=1)
            mm = mm + mask
        order = np.argsort(-mm, axis=1, kind="stable")
        out = []
        for topk in (1, 2, 3, 5):
            reached = 0; right_n = 0; new = 0
            chosen = [{iris[j] for j in order[k, :topk]} for k in range(len(experts))]
            for k, c, cs in missed:
                down = set().union(*(below.get(cc, {cc}) for cc in cs))
                reached += bool(chosen[k] & down)
            for k in range(len(experts)):
                new += len(chosen[k]); right_n += sum(right(k, c) for c in chosen[k])
            out.append(f"top{topk}: reached {reached} right {right_n/new:.2f}")
        print(name, "shortlist" if shortlist else "all", " | ".join(out))
