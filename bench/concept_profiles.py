"""Write kg/extract/patterns/concept-profiles.tsv and stem-idf.tsv: what the papers about each concept read like.

Usage: python bench/concept_profiles.py [CORPUS.jsonl] [OUT_FOLDER]
A paper of the reference corpus is about a concept when its title names the concept or its abstract names it
at least twice (labels as written, kg.extract.matcher), and then about every concept above it too. A concept's
profile is the centroid of the unit TF-IDF vectors of its papers' titles and abstracts (word stems of
kg.extract.forms), cut to its WORDS heaviest stems and scaled to unit length; concepts with fewer than MIN_PAPERS
papers get none. Inverse document frequencies are kept for stems of at least MIN_DF abstracts ("*" is the weight
of the rest). Run it again after changing the scheme (kg.extract.profiles reads the files).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme
from kg.extract.features import LABEL
from kg.extract.forms import words_of

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
DEFAULT_OUT = ROOT / "kg" / "extract" / "patterns"
WORDS = 60
MIN_PAPERS = 3
MIN_DF = 3
CHUNK = 500


def main(argv: list[str]) -> None:
    corpus = Path(argv[0]) if argv else DEFAULT_CORPUS
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    papers = ingest.read([corpus], skip_bad=True).papers
    loaded = scheme.load()
    extractor = PhraseExtractor(loaded)
    above = {c: {c, *loaded.ancestors(c)} for c in loaded.concepts}
    counts: list[Counter[str]] = []
    df: Counter[str] = Counter()
    about: dict[str, list[int]] = {}
    for start in range(0, len(papers), CHUNK):
        chunk = papers[start : start + CHUNK]
        docs = extractor.nlp.pipe(f"{p.title or ''}\n\n{p.abstract}" for p in chunk)
        for r, doc in zip(extractor.read(chunk), docs):
            words = Counter(w[2] for w in words_of(doc))
            counts.append(words)
            df.update(words.keys())
            named = Counter(n[0] for n in r.notes if n[9] == LABEL)
            for concept in r.title_concepts | {c for c, k in named.items() if k >= 2}:
                for c in above.get(concept, ()):
                    about.setdefault(c, []).append(len(counts) - 1)
    n = len(counts)
    unseen = math.log(n / (1 + MIN_DF))
    idf = {w: math.log(n / (1 + d)) for w, d in df.items() if d >= MIN_DF}

    def vector(words: Counter[str]) -> dict[str, float]:
        weights = {w: (1 + math.log(k)) * idf.get(w, unseen) for w, k in words.items()}
        norm = math.sqrt(sum(x * x for x in weights.values())) or 1.0
        return {w: x / norm for w, x in weights.items()}

    profiles = []
    for concept in sorted(about):
        ids = about[concept]
        if len(ids) < MIN_PAPERS:
            continue
        centroid: Counter[str] = Counter()
        for i in ids:
            centroid.update(vector(counts[i]))
        top = sorted(centroid.items(), key=lambda wx: (-wx[1], wx[0]))[:WORDS]
        norm = math.sqrt(sum(x * x for _, x in top)) or 1.0
        profiles.append(f"{concept}\t" + " ".join(f"{w}:{x / norm:.4f}" for w, x in top))
    head = f"# Written by bench/concept_profiles.py from {n} abstracts of {corpus.name}; read by kg.extract.profiles."
    (out / "stem-idf.tsv").write_text(
        f"{head}\n# stem<TAB>inverse document frequency (* for a stem of fewer than {MIN_DF} abstracts)\n*\t{unseen:.3f}\n"
        + "".join(f"{w}\t{x:.3f}\n" for w, x in sorted(idf.items())), encoding="utf-8")
    (out / "concept-profiles.tsv").write_text(
        f"{head}\n# concept IRI<TAB>stem:weight … (its {WORDS} heaviest, unit length)\n" + "\n".join(profiles) + "\n", encoding="utf-8")
    print(f"{out}: profiles of {len(profiles)} of {len(loaded.concepts)} concepts from {n} abstracts, {len(idf)} stems", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
