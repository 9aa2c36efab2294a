"""Do the subjects of a paper depend on the size of the build? They should not.

Usage: python bench/build_size.py [CORPUS.jsonl] [N] [--no-prior]
Extracts N corpus abstracts in one build and again in builds of 40 papers, and prints how far
the subject sets agree (Jaccard over (paper, concept) pairs). --no-prior ignores the corpus
rates of kg/extract/patterns/concept-rates.tsv, to see what the prior is for.
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
SMALL = 40


def main(argv: list[str]) -> None:
    """Print the agreement of subjects between one large build and many small ones."""
    args = [a for a in argv if not a.startswith("--")]
    corpus = Path(args[0]) if args else DEFAULT_CORPUS
    n = int(args[1]) if len(args) > 1 else 2000
    papers = [replace(p, title=None) for p in ingest.read([corpus], skip_bad=True).papers]
    random.Random(1).shuffle(papers)
    papers = papers[:n]
    extractor = PhraseExtractor(scheme.load())
    if "--no-prior" in argv:
        extractor.priors = {}
    big = {(e.paper_id, l.concept) for e in extractor(papers) for l in e.links if l.subject}
    small = {(e.paper_id, l.concept) for i in range(0, n, SMALL) for e in extractor(papers[i : i + SMALL]) for l in e.links if l.subject}
    both = len(big & small)
    print(f"{n} papers: {len(big)} subject links in one build, {len(small)} in builds of {SMALL}; Jaccard {both / len(big | small):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
