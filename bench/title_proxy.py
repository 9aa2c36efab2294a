"""A rough check that salience generalises: do subjects found from abstracts alone agree with the titles?

Usage: python bench/title_proxy.py [CORPUS.jsonl] [N] [--threshold T]
Extraction runs without titles; a concept the title names (and the abstract mentions) should be
a subject (title recall), and subjects should often be named in the title (title precision, a
lower bound: titles are short). Prints both with the number of subjects per paper.
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


def sample(corpus: Path, n: int) -> list[ingest.Paper]:
    """The n titled papers the proxy reads (a fixed shuffle): bench/corpus_rates.py leaves them out."""
    papers = [p for p in ingest.read([corpus], skip_bad=True).papers if p.title]
    random.Random(0).shuffle(papers)
    return papers[:n]


def main(argv: list[str]) -> None:
    """Print title recall, title precision and subjects per paper for a sample of the corpus."""
    threshold = float(argv[argv.index("--threshold") + 1]) if "--threshold" in argv else None
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or not argv[i - 1].startswith("--"))]
    corpus = Path(args[0]) if args else DEFAULT_CORPUS
    n = int(args[1]) if len(args) > 1 else 3000
    papers = sample(corpus, n)
    extractor = PhraseExtractor(scheme.load(), threshold)
    untitled = extractor([replace(p, title=None) for p in papers])
    titles = extractor([ingest.Paper(p.id, p.title or "") for p in papers])
    named = hit = subjects = in_title = 0
    for ex, t in zip(untitled, titles):
        title_concepts = {l.concept for l in t.links}
        found = {l.concept for l in ex.links}
        subj = {l.concept for l in ex.links if l.subject}
        named += len(title_concepts & found)
        hit += len(title_concepts & subj)
        subjects += len(subj)
        in_title += len(subj & title_concepts)
    print(f"{len(papers)} papers, threshold {threshold}: {subjects / len(papers):.2f} subjects a paper")
    print(f"title recall    {hit / max(named, 1):.3f}  (title concepts the abstract mentions that became subjects)")
    print(f"title precision {in_title / max(subjects, 1):.3f}  (subjects the title names; a lower bound)")


if __name__ == "__main__":
    main(sys.argv[1:])
