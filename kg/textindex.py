"""A trigram index of every paper's title and abstract, kept in the persisted store, to narrow `search`.

`queries/search.rq` tests CONTAINS on each paper's lowercased "title abstract", so on disk it read
every abstract out of RocksDB (about 5 s at 100k papers). The store folder also holds `text.sqlite`:
an SQLite FTS5 table (trigram tokenizer, contentless, no positions) of exactly the string search.rq
builds, lowercased by the query engine itself (pyoxigraph's LCASE follows a newer Unicode than
Python's str.lower: 55 characters differ). A phrase's trigrams, all required, give a superset of the
papers that contain it; `kg.query.run_store` binds those papers in a VALUES block and the query still
checks CONTAINS on each, so the rows are the full scan's rows.

The index cannot narrow (and the query scans as before) for phrases shorter than three characters
after lowercasing, a missing or unreadable index, a graph whose papers are not all IRIs, or more
candidates than `MAX_SHARE` of the indexed papers, where reading them one by one costs as much as the scan.

Measured (2 cores, other jobs running), 100k papers: the index is 70 MB beside a 1.75 GB store and
adds about 28 s to the store build (4 s to read the texts, 24 s for SQLite to tokenize 120 MB of
text); at 21k, 17 MB and 3.6 s. `search` in the persisted store, indexed against the full scan:
"human feedback" 155 candidates, 67 rows, 0.11 s (4.7 s); "graph neural" 672 candidates 0.24 s
(5.5 s); "xyzzy" 0.001 s (5.3 s); "reinforcement learning" 6.3k candidates 2.6 s (5.6 s);
"optimization" 18k candidates 3.6 s (7.0 s); "learning" (50k candidates, over the cap) scans, 9 s.
Above 1,000 VALUES rows pyoxigraph switches to a hash join that reads every abstract without the
filter (about 1.5 s at 100k), so 1k-20k candidates cost 1.6-3 s; restricting stays cheaper than
the scan up to about half the papers, hence a cap of a quarter. At 21k: 0.005-0.05 s for rare phrases
(scan 0.9-1.7 s), "reinforcement learning" 0.48 s (1.1 s).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Sequence

from .resources import internal_query

MAX_SHARE = 0.25  # of the indexed papers: beyond it the scan is as fast (see above)

_SCHEMA = (
    # one row per text (a paper with two titles has two), so the ids are the FTS rowids
    "CREATE TABLE paper(id INTEGER PRIMARY KEY, iri TEXT NOT NULL)",
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value)",
    # contentless and without positions (61 MB at 100k papers): an AND of single trigrams needs no more
    "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize='trigram case_sensitive 1', detail='none', content='')",
    "INSERT INTO fts(fts, rank) VALUES('automerge', 0)",  # one merge at the end instead of many on the way
)


def read_texts(store) -> list[tuple[str, str]] | None:
    """(paper IRI, lowercased "title abstract") for every paper text search.rq tests; None if a paper is no IRI."""
    import pyoxigraph as ox

    out = []
    for solution in store.query(internal_query("search-texts")):
        paper, text = solution[0], solution[1]
        if not isinstance(paper, ox.NamedNode):
            return None  # a blank node cannot be named in a VALUES block
        if text is not None:  # unbound when CONCAT fails (an IRI or typed abstract): search.rq skips it too
            out.append((paper.value, text.value))
    return out


def write(path: Path, texts: Sequence[tuple[str, str]]) -> None:
    """Write the index of `texts` (from `read_texts`) as a new SQLite file at `path`."""
    from .atomic import scratch_sqlite

    with scratch_sqlite(path) as db:
        for statement in _SCHEMA:
            db.execute(statement)
        db.executemany("INSERT INTO paper(id, iri) VALUES (?, ?)", ((i, iri) for i, (iri, _) in enumerate(texts)))
        db.executemany("INSERT INTO fts(rowid, body) VALUES (?, ?)", ((i, _nul_free(text)) for i, (_, text) in enumerate(texts)))
        db.execute("INSERT INTO fts(fts) VALUES('optimize')")
        db.execute("INSERT INTO meta VALUES ('papers', ?)", (len({iri for iri, _ in texts}),))


def _nul_free(text: str) -> str:
    """The text with NUL as U+FFFD: FTS5 stops tokenizing a text at a NUL and rejects one in a query.

    The same replacement on both sides keeps every phrase of the text a phrase of the indexed text."""
    return text.replace("\x00", "\ufffd")


def candidates(store, path: Path, words: str) -> list[str] | None:
    """Sorted IRIs of the papers whose text may contain `words`, or None when the index cannot narrow."""
    import pyoxigraph as ox

    from .sparql import with_values

    lowered = next(iter(store.query(with_values(internal_query("lowercase"), {"words": str(ox.Literal(words))}))))[0]
    phrase = _nul_free(lowered.value)
    grams = sorted({phrase[i : i + 3] for i in range(len(phrase) - 2)})
    if not grams:
        return None
    match = " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return None
    try:
        (papers,) = db.execute("SELECT value FROM meta WHERE key = 'papers'").fetchone()
        cap = int(papers * MAX_SHARE)
        found = db.execute(
            "SELECT paper.iri FROM fts JOIN paper ON paper.id = fts.rowid WHERE fts MATCH ? LIMIT ?", (match, cap + 1)
        ).fetchall()
        if len(found) > cap:
            return None
        # A corrupt file could hold anything: only valid IRIs go into the query, as N-Triples terms.
        return sorted({str(ox.NamedNode(iri)) for (iri,) in found})
    except (sqlite3.Error, TypeError, ValueError):
        return None
    finally:
        db.close()


def restrict(text: str, iris: Sequence[str]) -> str | None:
    """search.rq with `?paper` limited to `iris` (N-Triples IRIs), or None if its WHERE clause is not as shipped.

    The VALUES block goes first in the group that reads `?paper dcterms:abstract`: there pyoxigraph
    looks up each candidate's abstract (0.12 s for 155 candidates at 100k papers). First in the
    WHERE clause it read every abstract and joined afterwards (1.0 s; 500 s for 50k candidates).
    """
    from .sparql import tokens, where_brace

    at = where_brace(text)
    following = [(tok, offset) for _, tok, offset in tokens(text) if offset >= at][:3]
    if [tok for tok, _ in following] != ["{", "?paper", "dcterms:abstract"]:
        return None
    at = following[0][1] + 1
    return f"{text[:at]} VALUES ?paper {{ {' '.join(iris)} }}\n {text[at:]}"
