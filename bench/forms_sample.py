"""The subjects that only a label in another form gives (kg.extract.forms), with their evidence, for reading.

Usage: python bench/forms_sample.py [CORPUS.jsonl] [N] [--seed S] [--show K]
Extracts N random papers of the corpus (default 4,000, seed 0) and prints how many candidates and subjects a
form alone gives, then K of those subjects at random (default 40): the paper's id, the concept and the phrases
(abstract, or title) that named it, to judge by reading the paper.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


def main(argv: list[str]) -> None:
    options = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or not argv[i - 1].startswith("--"))]
    corpus = Path(args[0]) if args else DEFAULT_CORPUS
    n = int(args[1]) if len(args) > 1 else 4000
    papers = list(ingest.read([corpus], skip_bad=True).papers)
    random.Random(int(options.get("--seed", 0))).shuffle(papers)
    papers = papers[:n]
    extractor = PhraseExtractor(scheme.load())
    read = extractor.read(papers)
    extractions = extractor(papers)
    labels = {iri: c.label for iri, c in extractor.scheme.concepts.items()}
    candidates, subjects = 0, []
    for r, e in zip(read, extractions):
        candidates += len(r.shaped)
        for link in e.links:
            if link.subject and link.concept in r.shaped:
                said = [m.exact for m in link.mentions] or [f"title: {m.exact}" for m in link.title_mentions]
                subjects.append(f"{e.paper_id}\t{labels[link.concept]}\t{' | '.join(said)}")
    total = sum(link.subject for e in extractions for link in e.links)
    print(f"{len(papers)} papers: {candidates} candidates only a form gives, {len(subjects)} of them subjects (of {total} subjects)")
    for line in random.Random(1).sample(subjects, min(int(options.get("--show", 40)), len(subjects))):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
