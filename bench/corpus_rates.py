"""Write kg/extract/patterns/concept-rates.tsv: how common each concept is in a reference corpus, and how topical.

Usage: python bench/corpus_rates.py [CORPUS.jsonl] [OUT.tsv]
Salience scales a concept's evidence down when many papers mention it ("optimization", "neural
network", "generalization" say little about what a paper is about). A build of a few dozen papers
cannot tell which concepts are common, so these rates from a large corpus are its prior: the same
paper then gets the same subjects in a small build as in a large one. A mention counts when it is
not in passing (contrast or example list), as in the extractor. Titles are left out, as the corpus
abstracts are read. Run it again after changing the scheme; concepts missing from the table use
the default prior rate.

The table also counts, of the abstracts that mention a concept, those whose title names it too:
the concept's keyphraseness (Mihalcea & Csomai 2007). "machine learning" or "loss function" are
mentioned by many abstracts and named by few titles; "generative adversarial network" is named by
most titles of the papers that use it. The papers that bench/title_proxy.py samples are left out,
so that the proxy stays a held-out check.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, salience, scheme
from kg.graph.resources import data_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from title_proxy import sample

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
DEFAULT_OUT = data_path("patterns") / "concept-rates.tsv"  # the file the extractor reads (kg.extract.matcher)


def main(argv: list[str]) -> None:
    """Count, for every concept, the corpus abstracts that mention it, and write the rates."""
    corpus = Path(argv[0]) if argv else DEFAULT_CORPUS
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    held_out = {p.id for p in sample(corpus, 3000)}
    read = [p for p in ingest.read([corpus], skip_bad=True).papers if p.id not in held_out]
    papers = [replace(p, title=None) for p in read]
    extractor = PhraseExtractor(scheme.load())
    extractions = extractor(papers)
    titled = [p for p in read if p.title]
    # A title is read before its abstract, as one text, so that an ambiguous label in the title is read in the
    # sense the abstract supports (kg:senseTerm); the concepts with a mention inside the title are its own.
    joined = extractor([ingest.Paper(p.id, f"{p.title}\n\n{p.abstract}") for p in titled])
    title_concepts = {
        p.id: {link.concept for link in e.links if any(m.start < len(p.title or "") for m in link.mentions)} for p, e in zip(titled, joined)
    }
    df: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for paper, e in zip(read, extractions):
        for link in e.links:
            if any(m.weight > salience.PASSING_WEIGHT for m in link.mentions):
                df[link.concept] += 1
                named[link.concept] += link.concept in title_concepts.get(paper.id, ())
    lines = [
        f"# Of {len(papers)} abstracts of {corpus.name} (bench/title_proxy.py's sample left out): those that mention each concept",
        "# (not in passing), and of those, the ones whose title names it. Written by bench/corpus_rates.py; read by salience.",
        "# concept IRI<TAB>papers<TAB>rate<TAB>titled",
        # Every concept of the scheme has a row, unused ones with 0: the extractor then needs no build statistics.
        *(f"{iri}\t{df[iri]}\t{df[iri] / len(papers):.5f}\t{named[iri]}" for iri in sorted(set(extractor.scheme.concepts) | set(df))),
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{out}: {len(df)} of {len(extractor.scheme.concepts)} concepts used by {len(papers)} abstracts", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
