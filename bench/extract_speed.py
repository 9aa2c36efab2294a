"""Extraction speed against the bare blank("en") tokenizer, on real abstracts.

Usage: python bench/extract_speed.py [CORPUS.jsonl] [N] [--scheme FILE.ttl ...]
Prints abstracts/s for the tokenizer alone and for the whole extractor (clean-up, matching,
acronyms, cues, salience, methods), one process.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


def main(argv: list[str]) -> None:
    """Run the benchmark and print the two rates."""
    import spacy

    schemes = [argv[i + 1] for i, a in enumerate(argv) if a == "--scheme"]
    args = [a for i, a in enumerate(argv) if a != "--scheme" and (i == 0 or argv[i - 1] != "--scheme")]
    corpus = Path(args[0]) if args else DEFAULT_CORPUS
    n = int(args[1]) if len(args) > 1 else 5000
    papers = ingest.read([corpus], skip_bad=True).papers[:n]
    loaded = scheme.load(schemes or None)
    bare = full = float("inf")
    for _ in range(2):  # alternate, each run cold (fresh vocabulary), keep the best: the machine is shared
        nlp = spacy.blank("en")
        t = time.perf_counter()
        for _ in nlp.pipe(p.abstract for p in papers):
            pass
        bare = min(bare, time.perf_counter() - t)
        extractor = PhraseExtractor(loaded)
        t = time.perf_counter()
        out = extractor(papers)
        full = min(full, time.perf_counter() - t)
    subjects = sum(l.subject for e in out for l in e.links)
    print(f"{len(papers)} abstracts, {len(extractor.scheme.concepts)} concepts")
    print(f"tokenizer alone: {len(papers) / bare:,.0f} abstracts/s")
    print(f"extraction:      {len(papers) / full:,.0f} abstracts/s ({full / bare:.1f}x the tokenizer), {subjects} subject links")


if __name__ == "__main__":
    main(sys.argv[1:])
