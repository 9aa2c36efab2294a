"""Write kg/extract/patterns/definition-df.tsv: in how many reference abstracts each compared word occurs.

Usage: python bench/definition_df.py [CORPUS.jsonl] [-o kg/extract/patterns/definition-df.tsv]

The words are those kg.extract.definitions compares (lower case, spaCy's lemma table, stop words and words under
three letters out), read from each paper's cleaned title and abstract with the matcher's tokenizer; words held by
fewer than two papers are left out (they count as held by none). kg.extract.definitions reads the table for the
IDF of the concepts' definition words (decision 0062).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from kg.extract.cleanup import clean
from kg.extract.definitions import keys
from kg.extract.matcher import make_nlp

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"


def main(argv: list[str]) -> None:
    out = Path(argv[argv.index("-o") + 1]) if "-o" in argv else ROOT / "kg" / "extract" / "patterns" / "definition-df.tsv"
    args = [a for i, a in enumerate(argv) if a != "-o" and (i == 0 or argv[i - 1] != "-o")]
    corpus = Path(args[0]) if args else CORPUS
    records = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    texts = [clean(f"{r.get('title') or ''}. {r.get('abstract') or ''}").text for r in records]
    nlp = make_nlp()
    df: Counter[str] = Counter()
    total = 0
    for doc in nlp.pipe(texts, batch_size=256):
        words = keys(t.text for t in doc)
        total += len(words)
        df.update(set(words))
    lines = [
        f"# Of the {len(texts)} titles and abstracts of {corpus.name}: the papers each compared word occurs in (at least 2).",
        "# Written by bench/definition_df.py; read by kg.extract.definitions (the IDF of the concepts' definition words).",
        f"# papers\t{len(texts)}",
        f"# mean words\t{total / max(1, len(texts)):.2f}",
        "# word<TAB>papers",
        *(f"{w}\t{n}" for w, n in sorted(df.items()) if n >= 2),
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(lines) - 5} words")


if __name__ == "__main__":
    main(sys.argv[1:])
