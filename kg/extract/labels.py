"""Scheme labels (and definitions) as token texts: spaCy's English tokenizer once, then a cache on disk.

Tokenizing the ~25,000 label variants of the bundled scheme into Docs took about 1 s of every
build's and update's set-up. A label's tokens depend only on its text and spaCy's tokenizer rules,
so they are kept in `$KG_CACHE_DIR` (default `$XDG_CACHE_HOME/kg`, else `~/.cache/kg`), one file per
spaCy version; labels not in it (another scheme) are tokenized and added. Only token texts are kept,
with the norm a tokenizer exception sets on a token ("n't" → "not"): the NORM of every other token
is computed from make_nlp's rule when the matchers are made, so changing that rule needs no new cache.
A cache that cannot be read or written is ignored: it only saves time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from kg.core.errors import KgError
from kg.graph.atomic import atomic_write

FORMAT = 2
MAX_ENTRIES = 200_000  # beyond this the cache is rewritten with only the labels of the current scheme
SEP = "\x1f"  # between the tokens of a label in the cache file (one string a label decodes fast)


@dataclass(frozen=True)
class LabelTokens:
    """The token texts of each label, and the norms tokenizer exceptions set on some of them."""

    tokens: dict[str, tuple[str, ...]]
    norms: dict[tuple[str, int], str]  # (label, token index) -> the exception's norm ("n't" -> "not")


def cache_dir() -> Path:
    """Where kg keeps caches: $KG_CACHE_DIR, else $XDG_CACHE_HOME/kg, else ~/.cache/kg."""
    own = os.environ.get("KG_CACHE_DIR")
    if own:
        return Path(own)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kg"


def label_tokens(texts: Iterable[str]) -> LabelTokens:
    """Each text's tokens as spaCy's English tokenizer splits it: from the cache, else tokenized now."""
    import spacy

    wanted = list(dict.fromkeys(texts))
    path = cache_dir() / f"label-tokens-spacy-{spacy.__version__}.json"
    cached = _read(path)
    missing = [t for t in wanted if t not in cached.tokens]
    if missing:
        made = _tokenize(missing)
        cached = LabelTokens({**cached.tokens, **made.tokens}, {**cached.norms, **made.norms})
        if len(cached.tokens) > MAX_ENTRIES:
            cached = _only(cached, wanted)
        _write(path, cached)
    return _only(cached, wanted)


def _only(found: LabelTokens, texts: list[str]) -> LabelTokens:
    keep = set(texts)
    return LabelTokens({t: found.tokens[t] for t in texts}, {k: n for k, n in found.norms.items() if k[0] in keep})


def _tokenize(texts: list[str]) -> LabelTokens:
    """Tokenize with a blank English pipeline whose lexemes carry no norm, so only exceptions' norms show."""
    import spacy
    from spacy.attrs import NORM

    nlp = spacy.blank("en")
    # No attribute getters: new lexemes are cheap and keep NORM 0; the lexemes the tokenizer
    # exceptions made already get NORM 0 too. A non-zero NORM is then a token's own (an exception's).
    nlp.vocab.lex_attr_getters = {}
    for lexeme in nlp.vocab:
        lexeme.norm = 0
    strings = nlp.vocab.strings
    tokens: dict[str, tuple[str, ...]] = {}
    norms: dict[tuple[str, int], str] = {}
    for text, doc in zip(texts, nlp.tokenizer.pipe(texts)):
        tokens[text] = tuple(token.text for token in doc)
        for i, n in enumerate(doc.to_array([NORM]).tolist() if len(doc) else []):
            if n:
                norms[text, i] = strings[n]
    return LabelTokens(tokens, norms)


def _read(path: Path) -> LabelTokens:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return LabelTokens({}, {})
        tokens = {text: tuple(joined.split(SEP)) if joined else () for text, joined in data["tokens"].items()}
        norms = {(text, int(i)): str(norm) for text, i, norm in data["norms"]}
        if not all(isinstance(t, str) for t in tokens) or any(k[0] not in tokens for k in norms):
            return LabelTokens({}, {})
        return LabelTokens(tokens, norms)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return LabelTokens({}, {})


def _write(path: Path, found: LabelTokens) -> None:
    # A label whose tokens hold the separator itself is left out (tokenized again next time).
    tokens = {text: SEP.join(toks) for text, toks in found.tokens.items() if not any(SEP in t for t in toks)}
    data = {"format": FORMAT, "tokens": tokens, "norms": [[t, i, n] for (t, i), n in found.norms.items() if t in tokens]}
    try:
        with atomic_write(path) as stream:
            stream.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (KgError, OSError):
        pass  # a read-only home or a full disk: the next run tokenizes again
