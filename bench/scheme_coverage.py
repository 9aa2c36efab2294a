"""How much of a corpus the concept scheme can name, and the frequent phrases it cannot.

Usage: python bench/scheme_coverage.py [CORPUS.jsonl] [--field title|first] [--top N]
Prints the fraction of titles (or abstracts' first sentences) that contain at least one scheme label,
then the N most frequent word n-grams (1-4 words, by number of documents) that no label covers.
Titles approximate what a paper is about in its authors' words, so the uncovered n-grams are the
candidates to review by hand for new concepts and altLabels (most are generic: "lower bound").
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from kg.extract import scheme
from kg.extract.matcher import make_matchers, make_nlp

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
# Words that never start or end a candidate: function words and ones too vague to be a concept's edge.
EDGE_STOP = set(
    "a an the of for and in on with to via by from using under as at is are its their our we this that which into"
    " over between towards toward based new novel efficient fast simple improved deep learning model models method"
    " methods approach approaches framework network networks neural data analysis problem problems algorithm"
    " algorithms study can be not non than through beyond without when how what do does high large scale small"
    " general generalized multi".split()
)
WORD = re.compile(r"[a-z][a-z0-9\-']*")


def texts(corpus: Path, field: str) -> list[str]:
    """Titles, or the first sentence of each abstract, of a JSONL corpus."""
    out = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if field == "title":
                out.append(record.get("title") or "")
            else:
                out.append(re.split(r"(?<=\.)\s", record.get("abstract") or "")[0])
    return out


def coverage(docs: list[str]) -> tuple[int, Counter]:
    """(documents with a scheme label, document counts of uncovered n-grams by their folded words)."""
    nlp = make_nlp()
    folded, exact = make_matchers(nlp, scheme.load())
    hit, candidates = 0, Counter()
    for doc in nlp.pipe(docs, batch_size=500):
        matches = [*folded(doc), *exact(doc)]
        hit += bool(matches)
        covered = {i for _, s, e in matches for i in range(s, e)}
        seen = set()
        for n in (1, 2, 3, 4):
            for i in range(len(doc) - n + 1):
                if any(j in covered for j in range(i, i + n)):
                    continue
                words = [t.norm_ for t in doc[i : i + n]]
                if not all(WORD.fullmatch(w) for w in words) or words[0] in EDGE_STOP or words[-1] in EDGE_STOP:
                    continue
                if n == 1 and len(words[0]) < 5:
                    continue
                seen.add(" ".join(words))
        candidates.update(seen)
    return hit, candidates


def main(argv: list[str]) -> None:
    """Print the covered fraction and the top uncovered n-grams."""
    field = argv[argv.index("--field") + 1] if "--field" in argv else "title"
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 100
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or not argv[i - 1].startswith("--"))]
    docs = texts(Path(args[0]) if args else DEFAULT_CORPUS, field)
    hit, candidates = coverage(docs)
    print(f"{hit}/{len(docs)} = {hit / max(len(docs), 1):.4f} of {field}s contain a scheme label")
    for phrase, count in candidates.most_common(top):
        print(f"{count}\t{phrase}")


if __name__ == "__main__":
    main(sys.argv[1:])
