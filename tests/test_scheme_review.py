"""The scheme's rule kept: no repeated statements, no wrong roll-ups, no redundant or cyclic broader links,
every broader link backed by corpus evidence or a reader's verdict, and ambiguous labels read in context."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


from kg import scheme as scheme_

ROOT = Path(__file__).parent.parent
CONCEPTS = ROOT / "ontology" / "concepts"


def test_scheme_files_state_nothing_twice() -> None:
    """Issue 18 item 7: a label written twice was a duplicate triple in every built graph."""
    import pyoxigraph as ox

    triples = [t for path in sorted(CONCEPTS.glob("*.ttl")) for t in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]
    repeated = [t for t, n in Counter(triples).items() if n > 1]
    assert len(triples) > 15000
    assert repeated == []
    assert len(scheme_.load().triples) == len(set(scheme_.load().triples))
