"""Corpus evidence for every skos:broader link: of the papers whose title names X, how many mention Y.

Usage: python bench/broader_evidence.py [CORPUS.jsonl] [OUT.tsv]
The scheme's rule is that X skos:broader Y means every paper about X is about Y. A paper whose
title names X is about X; if the link holds, its title or abstract should name Y, or a concept
under Y that is not X or under X ("Q-learning" papers write "reinforcement learning" or "policy").
For each link the table gives the papers whose title names X, how many of them name Y itself,
how many name Y's family, and the family share. tests/test_scheme_review.py reads the table:
a link is backed when enough titled papers exist and most of them name Y's family; every other
link must be listed in ontology/broader-reviewed.tsv with a reader's verdict. Run it again after
changing the scheme (it extracts the whole corpus: about a minute per 10,000 abstracts).
A low share does not refute a link: abstracts seldom name the obvious parent ("Gaussian process"
papers rarely write "kernel methods"), so the table can back links but not condemn them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kg.extract import PhraseExtractor, ingest, scheme

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "ml-abstracts.jsonl"
DEFAULT_OUT = ROOT / "ontology" / "broader-evidence.tsv"
KGC = "https://w3id.org/kg/concept/"


def descendants(s: scheme.Scheme) -> dict[str, set[str]]:
    """Every concept's narrower concepts, all the way down (itself included)."""
    children: dict[str, set[str]] = {}
    for c in s.concepts.values():
        for parent in c.broader:
            children.setdefault(parent, set()).add(c.iri)
    out: dict[str, set[str]] = {}

    def down(iri: str) -> set[str]:
        if iri not in out:
            out[iri] = {iri}
            for child in children.get(iri, ()):
                out[iri] |= down(child)
        return out[iri]

    for iri in s.concepts:
        down(iri)
    return out


def mentions(corpus: Path, s: scheme.Scheme) -> list[tuple[set[str], set[str]]]:
    """(concepts the title names, concepts title or abstract name) for every titled corpus paper."""
    papers = [p for p in ingest.read([corpus], skip_bad=True).papers if p.title]
    extractor = PhraseExtractor(s)
    # Title and abstract as one text: an ambiguous label in the title is read in the sense the abstract supports.
    joined = extractor([ingest.Paper(p.id, f"{p.title}\n\n{p.abstract}") for p in papers])
    out = []
    for p, e in zip(papers, joined):
        named = {link.concept for link in e.links if any(m.start < len(p.title or "") for m in link.mentions)}
        out.append((named, {link.concept for link in e.links}))
    return out


def evidence(s: scheme.Scheme, found: list[tuple[set[str], set[str]]]) -> list[tuple[str, str, int, int, int]]:
    """(X, Y, papers titled X, of those naming Y, of those naming Y's family) for every broader link."""
    below = descendants(s)
    rows = []
    for c in sorted(s.concepts.values(), key=lambda c: c.iri):
        titled = [text for title, text in found if c.iri in title]
        for parent in c.broader:
            family = below.get(parent, {parent}) - below[c.iri]
            rows.append((c.iri, parent, len(titled), sum(parent in t for t in titled), sum(bool(t & family) for t in titled)))
    return rows


def _slug(iri: str) -> str:
    return iri.removeprefix(KGC)


def main(argv: list[str]) -> None:
    corpus = Path(argv[0]) if argv else DEFAULT_CORPUS
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    s = scheme.load()
    rows = evidence(s, mentions(corpus, s))
    lines = [
        f"# For each skos:broader link X -> Y of scheme {', '.join(s.versions)}: of the titled papers of {corpus.name} whose title",
        "# names X, those whose title or abstract names Y, and those naming Y or a concept under Y outside X's own subtree.",
        "# Written by bench/broader_evidence.py; read by tests/test_scheme_review.py.",
        "# narrower<TAB>broader<TAB>titled<TAB>name_broader<TAB>name_family",
        *(f"{_slug(x)}\t{_slug(y)}\t{n}\t{k}\t{f}" for x, y, n, k, f in rows),
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    backed = sum(1 for _, _, n, _, f in rows if n >= 5 and f / n >= 0.5)
    print(f"{out}: {len(rows)} broader links, {sum(1 for r in rows if r[2] >= 5)} with 5+ titled papers, {backed} backed", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
