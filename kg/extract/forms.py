"""Scheme labels whose words a writer puts in another syntactic form than the label's (decision 0065).

The matcher finds "graph transformer" and "safe reinforcement learning" as written; these are found here:
- **inversion**, the head before a preposition and the modifier after it: "Transformers on Graphs" (graph
  transformer), "quantization of deep neural networks" (neural network quantization), "theory of deep learning";
- **coordination**, a modifier shared out over one head: "Safe and Autonomous Reinforcement Learning" (safe RL),
  "offline and online RL" (offline RL), "single- and multi-agent reinforcement learning";
- **a stacked modifier**, a word before a label the matcher found that, with that label's head, is another label:
  "Robust Offline Reinforcement Learning" holds robust RL beside offline RL.
The head and the modifier must sit in one phrase: nothing but a determiner between the preposition and the
modifier's words, no stop word (verbs such as "is", "has", "can") inside them, and the modifier ending its phrase (a
stop word, a punctuation mark or the end comes next). The label's words are compared as the matcher's NORM has them
(lower case, a plural 's' lemmatised; an acronym's plural "LLMs" singular too), run together so that hyphens and
spaces do not matter; only labels the matcher compares folded, and that name one concept, are found. The words of
the forms are data (kg/extract/patterns/forms.tsv).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

from kg.core.errors import SchemeError
from kg.extract.lexicon import norm
from kg.extract.scheme import Concept, Scheme
from kg.graph.resources import data_path

MAX_WORDS = 4  # words of an inverted form's modifier (after the preposition) and head (before it)
SEP = "\x1f"  # between a key and a concept in Forms.heads
MAX_ITEMS = 4  # modifiers shared out over one head ("supervised, semi-supervised and unsupervised learning")
_FORMS = ("inversion", "determiner", "coordination")


@dataclass(frozen=True)
class Scan:
    """Where in one doc the forms may be, from its hashes alone (`Forms.scan`): the prepositions between the last
    word of a label and its first, and the conjunctions (token indices)."""

    inverted: tuple[int, ...]
    conjunctions: frozenset[int]


@dataclass(frozen=True)
class Forms:
    """A scheme's labels as the forms compare them, and the forms' words."""

    labels: dict[str, str]  # a label's normalised words run together → its concept
    heads: frozenset[str]  # "key\x1fconcept": the last words of a label of the concept (as `labels` keys them) name
    # a concept above it ("RL" of "offline RL"); plain strings, which the cyclic collector does not track
    ends: frozenset[tuple[int, int]]  # the hashed NORMs of the first and last words of those labels (a quick test)
    words: dict[str, frozenset[str]]  # form → its words (kg/extract/patterns/forms.tsv)
    hashes: dict[str, frozenset[int]]  # form → its words' hashed lower case
    comma: int  # the hashed ","
    stackable: frozenset[str]  # the concepts of `heads`

    @classmethod
    def of(cls, scheme: Scheme, folded: Callable[[Concept, str], bool]) -> Forms:
        """The forms for a scheme's labels that the matcher compares folded (`folded`: whether it does)."""
        from spacy.strings import get_string_id

        owners: dict[str, set[str]] = {}
        ends: set[tuple[int, int]] = set()
        named: dict[str, set[str]] = {}
        for c in scheme.concepts.values():
            for label in c.labels:
                named.setdefault("".join(map(norm, label.replace("-", " ").split())), set()).add(c.iri)
        for concept, label in ((c.iri, label) for c in scheme.concepts.values() for label in c.labels if folded(c, label)):
            words = label.replace("-", " ").split()
            if len(words) < 2:
                continue
            owners.setdefault("".join(map(norm, words)), set()).add(concept)
            first, last = norm(words[0]), norm(words[-1])
            # as a text's tokens have them: "LLMs" (an acronym's plural), "single-" (a modifier shared by coordination),
            # "supervised" (the end of the first word "semi-supervised", nearest the conjunction)
            for f in (first, first + "s", first + "-", norm(label.split()[0].split("-")[-1])):
                ends.update((get_string_id(f), get_string_id(l)) for l in (last, last + "s"))
        form_words = read_words()
        heads = set()
        for c in scheme.concepts.values():
            above = scheme.ancestors(c.iri)
            for label in c.labels:
                words = [norm(w) for w in label.replace("-", " ").split()]
                heads.update(
                    f"{key}{SEP}{c.iri}" for key in ("".join(words[k:]) for k in range(1, len(words))) if not named.get(key, set()).isdisjoint(above)
                )
        return cls(
            {key: next(iter(cs)) for key, cs in owners.items() if len(cs) == 1},
            frozenset(heads),
            frozenset(ends),
            form_words,
            {form: frozenset(map(get_string_id, ws)) for form, ws in form_words.items()},
            get_string_id(","),
            frozenset(h.partition(SEP)[2] for h in heads),
        )

    @cached_property
    def _arrays(self):  # -> tuple of numpy arrays: the prepositions, determiners, conjunctions, sorted pair keys
        import numpy as np

        words = [np.array(sorted(self.hashes[f]), dtype=np.uint64) for f in ("inversion", "determiner", "coordination")]
        ends = np.array(sorted(self.ends), dtype=np.uint64).reshape(-1, 2)
        return (*words, np.unique(_pair(ends[:, 0], ends[:, 1])))

    def scan(self, arrays: Sequence) -> list[Scan]:
        """Where the forms may be in each of several docs (their `columns`), by numpy over all of them at once: a
        preposition after a label's last word and before its first (a determiner between), and the conjunctions."""
        import numpy as np

        if not arrays:
            return []
        preps, determiners, conj, ends = self._arrays
        lengths = [len(a) for a in arrays]
        starts = np.cumsum([0, *lengths])
        both = np.concatenate([a.reshape(-1, 3) for a in arrays])
        lower, norms, n = both[:, 0], both[:, 2], len(both)
        doc_of = np.repeat(np.arange(len(arrays)), lengths)
        p = np.flatnonzero(np.isin(lower, preps))
        p = p[(p > 0) & (p + 2 < n)]
        p = p[(doc_of[p - 1] == doc_of[p]) & (doc_of[p + 1] == doc_of[p])]
        m = p + 1 + (np.isin(lower[p + 1], determiners) & (doc_of[p + 2] == doc_of[p]))
        keys = _pair(norms[m], norms[p - 1])
        at = np.minimum(np.searchsorted(ends, keys), len(ends) - 1)
        p = p[ends[at] == keys]
        c = np.flatnonzero(np.isin(lower, conj))
        pb, cb = np.searchsorted(p, starts).tolist(), np.searchsorted(c, starts).tolist()
        return [
            Scan(tuple((p[pb[d] : pb[d + 1]] - starts[d]).tolist()), frozenset((c[cb[d] : cb[d + 1]] - starts[d]).tolist()))
            for d in range(len(arrays))
        ]

    def find(self, doc, spans: Sequence[tuple[str, int, int]], array=None, scan: Scan | None = None) -> list[tuple[str, int, int]]:
        """(concept, start char, end char) of every label a doc writes in one of the forms; `spans`: the matcher's
        mentions (concept, start, end) in the doc's text, the heads the coordinated and stacked forms share; `array`:
        the doc's LOWER, IDX and NORM columns (`columns`), when the caller has them already.

        Most of a doc is passed over by comparing hashes in numpy (the preposition, the label's first and last
        words, the conjunction) before a token is looked at: the forms cost about 1 % of extraction."""
        import numpy as np

        if len(doc) < 3:
            return []
        if array is None:
            array = columns(doc)
        if scan is None:
            scan = self.scan([array])[0]
        found: list[tuple[str, int, int]] = []
        for i in scan.inverted:
            found += self._inverted(doc, i)
        # Only mentions whose concept can be stacked on, or that start just after a conjunction, are looked at.
        stackable, after = self.stackable, scan.conjunctions
        if not after:
            spans = [span for span in spans if span[0] in stackable]
        if not spans:
            return sorted(set(found), key=lambda f: (f[1], f[2], f[0]))
        bounds = np.searchsorted(array[:, 1], [a for _, a, _ in spans] + [b for _, _, b in spans]).tolist()
        near = {c + 1 for c in after} | {c + 2 for c in after}
        norm_of, lower_of, ends, comma = array[:, 2].item, array[:, 0].item, self.ends, self.comma
        for (concept, _, b), s, e in zip(spans, bounds, bounds[len(spans) :]):
            if s == 0 or e <= s or (s not in near and concept not in stackable):
                continue
            last = norm_of(e - 1)
            stacked = concept in stackable and (norm_of(s - 1), last) in ends
            # the modifier nearest the conjunction ("offline [and] online RL", "safe [and] autonomous RL") must be
            # a label's first word with the head's last (or the end of a hyphenated one: "semi-supervised")
            coordinated = any(
                c in after and (norm_of(c - 1 - (lower_of(c - 1) == comma)), last) in ends
                for c in (s - 1, s - 2) if c >= 2 or (c == 1 and lower_of(0) != comma)
            )
            if stacked or coordinated:
                found += self._shared(doc, concept, s, e, b, stacked)
        return sorted(set(found), key=lambda f: (f[1], f[2], f[0]))

    def _inverted(self, doc, i: int) -> list[tuple[str, int, int]]:
        """The label a head before the preposition at token i and a modifier after it name ("theory of deep learning")."""
        start = i + 1
        if start < len(doc) and doc[start].lower_ in self.words["determiner"]:
            start += 1
        end = start
        while end < len(doc) and _word(doc[end]) and end - start < 2 * MAX_WORDS:
            end += 1
        if end == start or doc[end - 1].text == "-" or not _ends_phrase(doc, end):  # "state-" of "state-of-the-art"
            return []
        head_start = i
        while head_start > 0 and i - head_start < 2 * MAX_WORDS - 1 and _word(doc[head_start - 1]):
            head_start -= 1
        if sum(map(_starts_word, [doc] * (end - start), range(start, end))) > MAX_WORDS:
            return []
        modifier = _key(doc, start, end)  # the whole phrase: "analysis of a neural network" is no network analysis
        for h in [h for h in range(head_start, i) if _starts_word(doc, h)][-MAX_WORDS:]:  # the longest head first
            concept = self.labels.get(modifier + _key(doc, h, i))
            if concept is not None:
                return [(concept, doc[h].idx, doc[end - 1].idx + len(doc[end - 1]))]
        return []

    def _shared(self, doc, concept: str, s: int, e: int, end: int, stacked: bool) -> list[tuple[str, int, int]]:
        """Labels that a mention's head (tokens s..e, ending at char `end`) makes with a modifier coordinated with the
        mention's own ("offline and online RL") or, where `stacked`, stacked before it ("robust offline RL")."""
        out = []
        last, conj = doc[e - 1].norm, self.words["coordination"]
        for k in range(s, e):
            if k > s and not _starts_word(doc, k):
                continue
            head = _key(doc, k, e) if stacked else ""
            within = k > s  # the shared modifier is the mention's own first words ("online" of "online RL")
            if stacked and within and _starts_word(doc, s - 1) and _word(doc[s - 1]) and self._above(head, concept):
                # stacked: "robust" before "offline RL", whose head "RL" names a concept above offline RL
                other = self.labels.get(_key(doc, s - 1, s) + head)
                if other is not None and other != concept:
                    out.append((other, doc[s - 1].idx, end))
            p = s if within else _word_start(doc, s)  # where the modifier coordinated with the others starts
            if p < 2 or (not within and not _word(doc[s - 1])) or doc[p - 1].lower_ not in conj:
                continue
            hyphenated = doc[k - 1].text == "-" and within  # "single- and multi-agent": the modifiers end in a hyphen
            j = p - 2 if doc[p - 2].text != "," else p - 3
            for _ in range(MAX_ITEMS):
                if j < 0 or not _word(doc[j]) or doc[j].text.endswith("-") != hyphenated:
                    break
                first = _word_start(doc, j + 1)  # "semi-supervised" is one modifier
                other = None
                if (doc[first].norm, last) in self.ends:
                    head = head or _key(doc, k, e)
                    other = self.labels.get(_key(doc, first, j + 1) + head)
                if other is not None and other != concept:
                    out.append((other, doc[first].idx, end))
                if first < 2 or doc[first - 1].text != ",":
                    break
                j = first - 2
        return out

    def _above(self, key: str, concept: str) -> bool:
        """Words (a key) that name a concept above `concept`: "RL" of "offline RL"."""
        return f"{key}{SEP}{concept}" in self.heads


def columns(doc):  # -> numpy.ndarray
    """A doc's LOWER, IDX and NORM, a row a token: what `Forms.find` reads (and the definitions the first two)."""
    from spacy.attrs import IDX, LOWER, NORM

    return doc.to_array([LOWER, IDX, NORM]).reshape(-1, 3)


def _pair(first, last):  # -> numpy.ndarray
    """One key of two hashes (numpy uint64 arrays), for a test of membership by numpy."""
    import numpy as np

    return (first * np.uint64(0x9E3779B97F4A7C15)) ^ last


def _word(token) -> bool:
    """A token that can be part of a noun phrase: a word or number that is no stop word, or a hyphen inside a word."""
    if token.text == "-":
        return not token.whitespace_ and token.i > 0 and not token.doc[token.i - 1].whitespace_
    return not token.is_stop and any(ch.isalnum() for ch in token.text)


def _starts_word(doc, i: int) -> bool:
    """Token i starts a word (not the part after a hyphen of "multi-agent")."""
    return doc[i].text != "-" and not (i > 0 and doc[i - 1].text == "-" and not doc[i - 1].whitespace_)


def _word_start(doc, end: int) -> int:
    """The first token of the word that ends before token `end` ("semi" of "semi-supervised")."""
    i = end - 1
    while i >= 2 and doc[i - 1].text == "-" and not doc[i - 1].whitespace_ and not doc[i - 2].whitespace_:
        i -= 2
    return i


def _ends_phrase(doc, i: int) -> bool:
    """Token i is past the end of a noun phrase: the end, a punctuation mark, a stop word."""
    return i >= len(doc) or doc[i].is_punct or doc[i].is_stop


def _key(doc, a: int, b: int) -> str:
    """Tokens a..b as the forms compare them: their NORMs run together, hyphens dropped, an acronym's plural singular."""
    parts = []
    for t in doc[a:b]:
        text = t.text
        if len(text) > 2 and text.endswith("s") and text[:-1].isupper():
            parts.append(text[:-1].lower())
        else:
            parts.append(t.norm_.replace("-", ""))
    return "".join(parts)


def read_words() -> dict[str, frozenset[str]]:
    """The words of each form, from kg/extract/patterns/forms.tsv."""
    path = data_path("patterns") / "forms.tsv"
    words: dict[str, frozenset[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        form, sep, listed = line.partition("\t")
        if not sep or form not in _FORMS:
            raise SchemeError(f"{path}:{number}: expected one of {', '.join(_FORMS)}, a tab and its words separated by spaces")
        words[form] = frozenset(listed.split())
    missing = [f for f in _FORMS if f not in words]
    if missing:
        raise SchemeError(f"{path}: no line for {', '.join(missing)}; add one (form, a tab, its words)")
    return words
