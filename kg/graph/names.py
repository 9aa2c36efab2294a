"""The one resolver of the names a user gives a concept or a paper, for every command.

A concept is named by a label (prefLabel or altLabel, any case), its slug (`reinforcement-learning`), its
prefixed name (`kgc:reinforcement-learning`), its IRI or `<IRI>`; a paper by its identifier as given (any case:
paper IRIs lower-case ids), its slug, `paper:…`, its IRI, `<IRI>` or its exact label. Those are the names kg
prints. The resolver asks the graph through `Names`: the query engines answer with the internal queries
(queries/_*.rq and their .sql), an in-memory graph (`kg render`) from its Facts; the rules are the same.
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from typing import Callable, Iterable, Iterator, Protocol

from kg.core.errors import UsageError
from kg.graph.facts import Facts
from kg.graph.vocabulary import KGC, Namespaces, slug

IRI = re.compile(r"^[a-z][a-z0-9+.-]*:[^\s<>\"{}|\\^`]+$", re.I)


def topic_key(name: str) -> str:
    """The comparison form of a topic, keyword or label: lower case, hyphens as spaces, no final plural 's'."""
    key = " ".join(str(name).lower().replace("-", " ").split())
    return key[:-1] if key.endswith("s") and not key.endswith("ss") else key


class Names(Protocol):
    """What the resolver asks of a graph."""

    def is_concept(self, iri: str) -> bool: ...

    def concepts_labelled(self, text: str) -> list[tuple[str, bool]]:
        """(concept, is its prefLabel) for the labels equal to `text` case-insensitively."""
        ...

    def concept_labels(self) -> list[tuple[str, bool]]:
        """(label, is a prefLabel) of every concept: only on the way to an error, for hints."""
        ...

    def is_paper(self, iri: str) -> bool: ...

    def papers_keyed(self, text: str) -> list[str]:
        """The papers whose dcterms:identifier or rdfs:label is `text`."""
        ...


def expanded(text: str) -> str:
    """A name as kg prints it (`kgc:reinforcement-learning`, `paper:586b7ea2e117174c`, `<IRI>`) as the IRI it stands for."""
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        return text[1:-1]
    prefix, _, local = text.partition(":")
    namespace = Namespaces().prefixes().get(prefix)
    return namespace + local if namespace is not None and local and not local.startswith("//") else text


def concept(text: str, names: Names, where: str) -> str:
    """The IRI of the concept `text` names; a UsageError starting with `where` (the option or query) if none or several."""
    text = expanded(text)
    for iri in _iris(text, KGC):
        if names.is_concept(iri):
            return iri
    rows = names.concepts_labelled(text)
    pref = sorted({c for c, is_pref in rows if is_pref})
    found = pref or sorted({c for c, _ in rows})
    if len(found) == 1:
        return found[0]
    if found:
        named = [iri[len(KGC):] if iri.startswith(KGC) else f"<{iri}>" for iri in found]
        raise UsageError(f"{where}: {text!r} names several concepts: {', '.join(named)}; pass one of these instead")
    if _other_case(text, KGC, names.is_concept):  # the slug in another case or spelling ("Reinforcement-Learning")
        return KGC + slug(text)
    if IRI.match(text) and "/" in text:
        raise UsageError(f"{where}: <{text}> is not a concept of this graph")
    raise UsageError(f"{where}: no concept labelled {text!r} in the graph" + _hint(text, names.concept_labels()))


def paper(text: str, names: Names, where: str) -> str:
    """The IRI of the paper `text` names; a UsageError starting with `where` if none or several."""
    text = expanded(text)
    # Targeted lookups (an IRI, else identifier or exact label), never a scan of every paper:
    # a string comparison with every paper IRI took 13 s at 100k papers.
    folder = Namespaces().prefixes()["paper"]
    for iri in _iris(text, folder):
        if names.is_paper(iri):
            return iri
    found = sorted(set(names.papers_keyed(text)))
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(f"{where}: {text!r} names several papers ({', '.join(found[:5])}); pass the identifier or IRI")
    if _other_case(text, folder, names.is_paper):  # an id in another case than the paper's own (its IRI is lower case)
        return folder + slug(text)
    raise UsageError(f"{where}: no paper with identifier, IRI or title {text!r}; find one with 'kg query search --param words=…'")


def _other_case(text: str, namespace: str, known: Callable[[str], bool]) -> bool:
    iri = namespace + slug(text)
    return iri != namespace + text and not IRI.match(text) and IRI.match(iri) is not None and known(iri)


def _iris(text: str, namespace: str) -> list[str]:
    """The IRIs a name may be before it is read as a label: itself, or the slug kg prints after `kgc:` or `paper:`."""
    return [iri for iri in (text, namespace + text) if IRI.match(iri)]


def _hint(text: str, labels: Iterable[tuple[str, bool]]) -> str:
    every = [(label.casefold(), pref) for label, pref in labels]
    known = sorted({label for label, _ in every})
    key = text.casefold()
    # First the labels that hold the words as written ("diffusion": diffusion model): prefLabels, then those that
    # start with the words, the shortest first; then near spellings.
    holding = sorted({(not pref, not label.startswith(key), len(label), label) for label, pref in every if re.search(rf"\b{re.escape(key)}", label)})
    hints = list(dict.fromkeys([*(h[3] for h in holding[:3]), *get_close_matches(key, known, n=3)]))[:3]
    return f" (did you mean: {', '.join(hints)}?)" if hints else "; see 'kg query concept-tree'"


class FactsNames:
    """The names of an in-memory graph (kg.graph.facts), for `kg render`: the internal queries' rules (queries/_concept-*.rq).

    A concept is a resource typed skos:Concept (not the scheme, which has a prefLabel too); a label matches
    when its lower case (SPARQL's LCASE) equals the name's; a prefLabel in any language counts as one.
    """

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._types = facts.types

    def is_concept(self, iri: str) -> bool:
        return _CONCEPT in self._types.get(iri, ())

    def _labels(self) -> Iterator[tuple[str, str, bool]]:
        """(concept, label, is a prefLabel) for every label of every skos:Concept."""
        for c, labels in self.facts.labels.items():
            if self.is_concept(c):
                prefs = self.facts.pref_labels.get(c, frozenset())
                yield from ((c, label, label in prefs) for label in labels)

    def concepts_labelled(self, text: str) -> list[tuple[str, bool]]:
        key = text.lower()
        return [(c, is_pref) for c, label, is_pref in self._labels() if label.lower() == key]

    def concept_labels(self) -> list[tuple[str, bool]]:
        return [(label, is_pref) for _, label, is_pref in self._labels()]

    def is_paper(self, iri: str) -> bool:
        return _PAPER in self._types.get(iri, ())

    def papers_keyed(self, text: str) -> list[str]:
        found = [self.facts.identifiers[text]] if text in self.facts.identifiers else []
        labelled = [p for p in self.facts.papers if text in self.facts.values.get(p, {}).get(_LABEL, ())]
        return [p for p in found + labelled if self.is_paper(p)]


_CONCEPT = "http://www.w3.org/2004/02/skos/core#Concept"
_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_PAPER = "http://purl.org/spar/fabio/ResearchPaper"
