"""Write kg/extract/patterns/concept-roles.tsv: how a reference corpus uses each concept's mentions.

Usage: python bench/concept_roles.py [CORPUS.jsonl] [OUT.tsv]
One paper names a concept a few times, too few to tell a topic from a tool; the literature names it thousands of
times. Of every mention of a concept in the corpus abstracts (titles left out, as bench/corpus_rates.py reads them,
and its held-out sample left out too), the table counts those in passing (after "unlike", "such as", …), those
after a TOOL cue ("using X", "based on X", "than X") and those before a PART cue ("X-based", "X objective"): ReLU,
SGD and softmax are mostly used; a topic is mostly named for itself. Read by kg.extract.salience.corpus_roles.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme
from kg.graph.resources import data_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from title_proxy import sample

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
DEFAULT_OUT = data_path("patterns") / "concept-roles.tsv"


def main(argv: list[str]) -> None:
    corpus = Path(argv[0]) if argv else DEFAULT_CORPUS
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    held_out = {p.id for p in sample(corpus, 3000)}
    papers = [replace(p, title=None) for p in ingest.read([corpus], skip_bad=True).papers if p.id not in held_out]
    extractor = PhraseExtractor(scheme.load())
    counts: dict[str, Counter[str]] = {}
    for r in extractor.read(papers):
        for note in r.notes:
            c = counts.setdefault(note[0], Counter())
            c.update(mentions=1, passing=int(note[6]), used=int(note[9]), part=int(note[10]), focus=int(note[5]))
    lines = [
        f"# Of {len(papers)} abstracts of {corpus.name} (bench/title_proxy.py's sample left out): each concept's mentions, and of",
        "# those, the ones in passing, after a TOOL cue and before a PART cue. Written by bench/concept_roles.py; read by salience.",
        "# concept IRI<TAB>mentions<TAB>passing<TAB>used<TAB>part<TAB>focus",
        *(f"{iri}\t{c['mentions']}\t{c['passing']}\t{c['used']}\t{c['part']}\t{c['focus']}" for iri, c in sorted(counts.items())),
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{out}: {len(counts)} concepts mentioned by {len(papers)} abstracts", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
