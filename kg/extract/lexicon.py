"""English words as spaCy's lemma lookup table knows them: the matcher's norms, and a list of words.

The list tells a hyphen that a line break split ("classi- fication") from one that joins two words ("filtering- based").
"""

from __future__ import annotations

from functools import lru_cache


def norm(text: str) -> str:
    """The NORM the matcher gives a word: lower case, and a plural 's' lemmatised."""
    lower = text.lower()
    return lemmas().get(lower, lower) if lower.endswith("s") and len(lower) > 3 else lower


@lru_cache(maxsize=1)
def lemmas() -> dict[str, str]:
    """spaCy's English lemma lookup table as a plain dict of word → lemma.

    Read as spacy.lookups.load_lookups reads it, without building its Table (which hashes every key):
    0.02 s instead of 0.1 s of every set-up. Without the data package, load_lookups raises spaCy's own error.
    """
    from spacy.lookups import load_lookups
    from spacy.util import load_language_data, registry

    if "en" not in registry.lookups:
        load_lookups("en", ["lemma_lookup"])
    return load_language_data(registry.lookups.get("en")["lemma_lookup"])


@lru_cache(maxsize=1)
def words() -> frozenset[str]:
    """Every word form and lemma of the table and spaCy's English stop words ("of", "to"), lower case (about 69,000)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    table = lemmas()
    return frozenset(table) | frozenset(table.values()) | frozenset(STOP_WORDS)
