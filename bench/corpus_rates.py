"""Write kg/patterns/concept-rates.tsv: the share of a reference corpus's abstracts that use each concept.

Usage: python bench/corpus_rates.py [CORPUS.jsonl] [OUT.tsv]
Salience scales a concept's evidence down when many papers mention it ("optimization", "neural
network", "generalization" say little about what a paper is about). A build of a few dozen papers
cannot tell which concepts are common, so these rates from a large corpus are its prior: the same
paper then gets the same subjects in a small build as in a large one. A mention counts when it is
not in passing (contrast or example list), as in the extractor. Titles are left out, as the corpus
abstracts are read. Run it again after changing the scheme; concepts missing from the table use
the default prior rate.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from kg import ingest, scheme
from kg.extract import PhraseExtractor, salience

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
DEFAULT_OUT = ROOT / "kg" / "patterns" / "concept-rates.tsv"


def main(argv: list[str]) -> None:
    """Count, for every concept, the corpus abstracts that mention it, and write the rates."""
    corpus = Path(argv[0]) if argv else DEFAULT_CORPUS
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    papers = [replace(p, title=None) for p in ingest.read([corpus], skip_bad=True).papers]
    extractions = PhraseExtractor(scheme.load())(papers)
    df = Counter(
        link.concept for e in extractions for link in e.links if any(m.weight > salience.PASSING_WEIGHT for m in link.mentions)
    )
    lines = [
        f"# Share of {len(papers)} abstracts of {corpus.name} that mention each concept (not in passing).",
        "# Written by bench/corpus_rates.py; the prior of salience.specificity. concept IRI<TAB>papers<TAB>rate",
        *(f"{iri}\t{n}\t{n / len(papers):.5f}" for iri, n in sorted(df.items())),
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{out}: {len(df)} concepts from {len(papers)} abstracts", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
