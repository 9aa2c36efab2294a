"""The salience and contribution cues of kg/extract/patterns/cues.jsonl ("we propose", "unlike", "such as", …) as spaCy matchers."""

from __future__ import annotations

import json

from kg.core.errors import SchemeError
from kg.graph.resources import data_path


class CueMatcher:
    """The salience and contribution cues of kg/extract/patterns/cues.jsonl (spaCy Matcher patterns).

    Patterns made only of LOWER tokens (a word or an IN list) are expanded into phrases for a
    PhraseMatcher, which is many times faster than the token Matcher; any other pattern runs on
    the Matcher.
    """

    def __init__(self, nlp, name: str = "cues.jsonl") -> None:
        from itertools import product

        from spacy.matcher import Matcher, PhraseMatcher

        self.strings = nlp.vocab.strings
        self.phrases = PhraseMatcher(nlp.vocab, attr="LOWER")
        self.matcher = Matcher(nlp.vocab)
        path = data_path("patterns") / name
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    label, pattern = entry["label"], entry["pattern"]
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise SchemeError(f"{path}:{number}: not a pattern line ({exc}); expected {{\"label\": …, \"pattern\": […]}}") from None
                words = [_lower_words(token) for token in pattern]
                if all(w is not None for w in words):
                    self.phrases.add(label, [nlp.make_doc(" ".join(p)) for p in product(*words)])  # type: ignore[arg-type]
                else:
                    self.matcher.add(label, [pattern])

    def __call__(self, doc) -> list[tuple[str, int, int]]:
        """(label, first token, end token) of every cue in a doc, in text order."""
        found = [*self.phrases(doc), *(self.matcher(doc) if len(self.matcher) else [])]
        return sorted((self.strings[m], s, e) for m, s, e in found)


def _lower_words(token: dict) -> list[str] | None:
    """The words a {"LOWER": w} or {"LOWER": {"IN": [...]}} token pattern accepts; None for anything else."""
    if set(token) != {"LOWER"}:
        return None
    value = token["LOWER"]
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict) and set(value) == {"IN"}:
        return [str(v) for v in value["IN"]]
    return None
