"""Query results as engine-neutral rows, and their serializations (SPARQL 1.1 results formats, RDF, tables).

Local (pyoxigraph), rdflib and remote (SPARQL JSON) results all become the same `Results`, so
every output format is written by one piece of code whatever engine answered.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator

from kg.graph.terms import Term
from kg.graph.vocabulary import XSD, compact, compacted

RESULT_FORMATS = ("table", "csv", "tsv", "json", "xml")  # SELECT and ASK
GRAPH_FORMATS = ("ttl", "nt")  # CONSTRUCT and DESCRIBE
MEDIA_TYPES: dict[str, str] = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "table": "text/plain; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "ttl": "text/turtle; charset=utf-8",
    "nt": "application/n-triples",
}
@dataclass(frozen=True)
class Results:
    """The answer to one query: rows for SELECT, a boolean for ASK, RDF bytes for CONSTRUCT/DESCRIBE."""

    kind: str  # "select", "ask" or "graph"
    variables: tuple[str, ...] = ()
    rows: tuple[tuple[Term | None, ...], ...] = ()
    boolean: bool | None = None
    triples: tuple = ()  # pyoxigraph.Triple, for kind == "graph"
    truncated: bool = False  # the row cap stopped reading more rows
    name: str = field(default="", compare=False)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Rows as dicts of Python values (None for unbound)."""
        for row in self.rows:
            yield {v: (t.python() if t is not None else None) for v, t in zip(self.variables, row)}

    def __len__(self) -> int:
        return len(self.rows) if self.kind == "select" else len(self.triples)

    def __bool__(self) -> bool:
        return bool(self.boolean) if self.kind == "ask" else len(self) > 0

    def __repr__(self) -> str:
        """A short summary and the first rows, not every row (a result can hold millions)."""
        if self.kind != "select":
            return self.summary()
        lines = self.head(5).table(width=40).decode("utf-8").splitlines()[:-1]  # without its "(5 rows)" footer
        more = [f"… {len(self.rows) - 5:,} more rows"] if len(self.rows) > 5 else []
        return "\n".join([self.summary(), *lines, *more])

    def summary(self) -> str:
        """One line: the query, the kind and the size."""
        name = f" {self.name}" if self.name else ""
        if self.kind == "ask":
            return f"<kg Results{name}: ASK {'yes' if self.boolean else 'no'}>"
        if self.kind == "graph":
            return f"<kg Results{name}: {len(self.triples):,} triples{', truncated' if self.truncated else ''}>"
        n = len(self.rows)
        return f"<kg Results{name}: {n:,} row{'s' if n != 1 else ''} × {len(self.variables)} ({', '.join(self.variables)}){', truncated' if self.truncated else ''}>"

    def head(self, n: int = 5) -> Results:
        """The first n rows (or triples)."""
        return Results(self.kind, self.variables, self.rows[:n], self.boolean, self.triples[:n], self.truncated, self.name)

    def _repr_html_(self) -> str:
        """Jupyter: the summary and the first 20 rows as a table."""
        first = self.head(20)
        body = _graph_html(first) if self.kind == "graph" else _html(first)
        more = f"<p>… {len(self) - 20:,} more</p>" if len(self) > 20 else ""
        from xml.sax.saxutils import escape

        return f"<p>{escape(self.summary())}</p>{body.decode('utf-8')}{more}"

    def table(self, width: int = 60) -> bytes:
        """The rows as an aligned text table, cells cut to `width` characters."""
        return _table(self, width)

    def column(self, name: str) -> list[Any]:
        """The Python values of one variable, row by row."""
        i = self.variables.index(name)
        return [None if (t := row[i]) is None else t.python() for row in self.rows]

    def to_dataframe(self):  # -> pandas.DataFrame
        """The rows as a pandas DataFrame (needs pandas installed)."""
        from kg.core.errors import UsageError

        try:
            import pandas as pd
        except ImportError:
            raise UsageError("to_dataframe() needs pandas: pip install pandas") from None
        if self.kind == "ask":
            return pd.DataFrame({"boolean": [self.boolean]})
        if self.kind == "graph":
            return pd.DataFrame([(t.subject.value, t.predicate.value, t.object.value) for t in self.triples],
                                columns=["subject", "predicate", "object"])
        return pd.DataFrame(list(self), columns=list(self.variables))

    def serialize(self, fmt: str) -> bytes:
        """The results in one of RESULT_FORMATS / GRAPH_FORMATS (or 'html' for a table fragment)."""
        from kg.core.errors import UsageError

        if self.kind == "graph":
            if fmt == "html":
                return _graph_html(self)
            if fmt not in GRAPH_FORMATS:
                raise UsageError(f"format {fmt!r} does not fit a CONSTRUCT/DESCRIBE query (use one of: {', '.join(GRAPH_FORMATS)})")
            return _rdf(self.triples, fmt)
        writer = _WRITERS.get(fmt)
        if writer is None:
            raise UsageError(f"format {fmt!r} does not fit a SELECT/ASK query (use one of: {', '.join(RESULT_FORMATS)})")
        return writer(self)


def _json(r: Results) -> bytes:
    if r.kind == "ask":
        return json.dumps({"head": {}, "boolean": bool(r.boolean)}).encode()
    bindings = []
    for row in r.rows:
        b: dict[str, dict[str, str]] = {}
        for var, t in zip(r.variables, row):
            if t is None:
                continue
            d = {"type": t.kind, "value": t.value}
            if t.lang:
                d["xml:lang"] = t.lang
            elif t.kind == "literal" and t.datatype and t.datatype != XSD + "string":
                d["datatype"] = t.datatype
            b[var] = d
        bindings.append(b)
    return json.dumps({"head": {"vars": list(r.variables)}, "results": {"bindings": bindings}},
                      ensure_ascii=False).encode("utf-8")


# Characters XML 1.0 cannot carry at all, not even as references (most C0 controls, U+FFFE/U+FFFF, lone surrogates):
# the complement of its Char production, spelled out (the negated class of its ranges took 10 ms of every start to compile).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(value: str) -> str:
    """XML character data for a term's text; a carriage return kept as a reference (a parser would turn it into \\n)."""
    from xml.sax.saxutils import escape

    bad = _NOT_XML.search(value)
    if bad:
        from kg.core.errors import QueryError

        raise QueryError(f"the results hold U+{ord(bad.group()):04X} ({value[:30]!r}…), which XML 1.0 cannot carry; "
                         "ask for JSON, CSV or TSV instead")
    return escape(value, {"\r": "&#13;"})


def _xml(r: Results) -> bytes:
    from xml.sax.saxutils import quoteattr

    out = ['<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head>']
    out += [f"<variable name={quoteattr(v)}/>" for v in r.variables]
    out.append("</head>")
    if r.kind == "ask":
        out.append(f"<boolean>{'true' if r.boolean else 'false'}</boolean>")
    else:
        out.append("<results>")
        for row in r.rows:
            out.append("<result>")
            for var, t in zip(r.variables, row):
                if t is None:
                    continue
                if t.kind == "uri":
                    inner = f"<uri>{_x(t.value)}</uri>"
                elif t.kind == "bnode":
                    inner = f"<bnode>{_x(t.value)}</bnode>"
                elif t.lang:
                    inner = f"<literal xml:lang={quoteattr(t.lang)}>{_x(t.value)}</literal>"
                elif t.datatype and t.datatype != XSD + "string":
                    inner = f"<literal datatype={quoteattr(t.datatype)}>{_x(t.value)}</literal>"
                else:
                    inner = f"<literal>{_x(t.value)}</literal>"
                out.append(f"<binding name={quoteattr(var)}>{inner}</binding>")
            out.append("</result>")
        out.append("</results>")
    out.append("</sparql>\n")
    return "\n".join(out).encode("utf-8")


def _csv(r: Results) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    if r.kind == "ask":
        w.writerows([["boolean"], ["true" if r.boolean else "false"]])
    else:
        w.writerow(r.variables)
        w.writerows([("" if t is None else (f"_:{t.value}" if t.kind == "bnode" else t.value)) for t in row] for row in r.rows)
    return buf.getvalue().encode("utf-8")


def _tsv(r: Results) -> bytes:
    if r.kind == "ask":
        return f"?boolean\n{'true' if r.boolean else 'false'}\n".encode()
    lines = ["\t".join(f"?{v}" for v in r.variables)]
    lines += ["\t".join("" if t is None else t.n3() for t in row) for row in r.rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _values_tsv(r: Results) -> bytes:
    """Tab-separated plain values (IRIs, literal text), a header of variable names: for cut, awk, spreadsheets."""
    if r.kind == "ask":
        return f"boolean\n{'true' if r.boolean else 'false'}\n".encode()
    def clean(t: Term | None) -> str:
        return "" if t is None else t.value.replace("\t", " ").replace("\n", " ")

    lines = ["\t".join(r.variables)] + ["\t".join(clean(t) for t in row) for row in r.rows]
    return ("\n".join(lines) + "\n").encode()


def _texts(column: tuple[Term | None, ...], width: int) -> tuple[list[str], int]:
    """One column's cells as a table shows them, and the length of the longest: nothing for unbound, IRIs shortened
    (`compact`), other terms' values, each cut to `width` characters (the last one an ellipsis).

    Column by column, with no Python call a cell where the column allows it: a column whose first cells repeat
    their terms (a concept, a year) makes each distinct term's text once; a column of IRIs is shortened in one
    comprehension; a column of literals is their values. Each way gives the same texts; the first cells only choose
    the quickest."""
    if 2 * len(set(column[:_SAMPLE])) <= min(len(column), _SAMPLE):
        distinct = set(column)
        shown, longest = _cut(map(_text, distinct), width)
        return list(map(dict(zip(distinct, shown)).__getitem__, column)), longest
    try:
        kinds = set(map(_KIND, column))
    except TypeError:  # an unbound cell (None)
        return _cut(map(_text, column), width)
    if kinds == {"uri"}:
        return _cut(compacted(list(map(_VALUE, column))), width)
    if "uri" not in kinds:
        return _cut(map(_VALUE, column), width)
    return _cut(map(_text, column), width)


_SAMPLE = 200  # cells `_texts` looks at to choose
_KIND: Callable[[Any], str] = itemgetter(0)  # a Term's kind, at C speed
_VALUE: Callable[[Any], str] = itemgetter(1)  # its value


def _text(t: Term | None) -> str:
    return "" if t is None else compact(t.value) if t.kind == "uri" else t.value


def _cut(texts: Iterable[str], width: int) -> tuple[list[str], int]:
    """The texts cut to `width` (`_texts`), and the length of the longest."""
    texts = list(texts)
    longest = max(map(len, texts), default=0)
    if longest <= width:
        return texts, longest
    return [text if len(text) <= width else text[: width - 1] + "…" for text in texts], width


def _columns(r: Results, width: int) -> list[tuple[list[str], int]]:
    """The cells as a table shows them (`_texts`), column by column, each with the length of its longest."""
    return [_texts(column, width) for column in zip(*r.rows)] if r.rows else [([], 0) for _ in r.variables]


def _cells(r: Results, width: int) -> list[tuple[str, ...]]:
    """The cells as a table shows them (`_texts`), row by row."""
    return list(zip(*(texts for texts, _ in _columns(r, width)))) if r.variables else [()] * len(r.rows)


def _table(r: Results, width: int = 60) -> bytes:
    """An aligned text table: a header, a rule, a line a row (cells padded to their column's width, two spaces
    between, trailing white space taken off the line), and a count. Built column by column with C-level maps and
    joins, not a Python call a cell (a 61,000-row listing is 430,000 cells)."""
    if r.kind == "ask":
        return b"yes\n" if r.boolean else b"no\n"
    head = list(r.variables)
    shown = _columns(r, width)
    columns = [texts for texts, _ in shown]
    widths = [max(len(h), longest) for h, (_, longest) in zip(head, shown)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    # The last column is not padded: its padding is trailing white space, which rstrip takes off with the cell's own.
    # Each line's padded cells are made as the line is joined, and let go after it (no column of padded copies).
    padded = [*(map(str.ljust, texts, repeat(w)) for texts, w in zip(columns[:-1], widths)), *columns[-1:]]
    n = len(r.rows)
    body = map(str.rstrip, map("  ".join, zip(*padded))) if head else [""] * n
    out = [line(head), line(["-" * w for w in widths]), *body]
    out += [f"({n} row{'s' if n != 1 else ''}{', truncated by the row cap' if r.truncated else ''})", ""]
    return "\n".join(out).encode("utf-8")


def _html(r: Results) -> bytes:
    return html_table(r)


def html_table(r: Results, link: Any = None) -> bytes:
    """The rows as an HTML table; `link(iri)` may give a page for an IRI cell (kg serve links papers and concepts)."""
    from xml.sax.saxutils import escape, quoteattr

    if r.kind == "ask":
        return f"<p>{'yes' if r.boolean else 'no'}</p>".encode()
    head = "".join(f"<th>{escape(v)}</th>" for v in r.variables)

    def cell(t: Term | None, text: str) -> str:
        href = link(t.value) if link is not None and t is not None and t.kind == "uri" else None
        return f"<td><a href={quoteattr(href)}>{escape(text)}</a></td>" if href else f"<td>{escape(text)}</td>"

    rows = "".join("<tr>" + "".join(cell(t, c) for t, c in zip(raw, row)) + "</tr>" for raw, row in zip(r.rows, _cells(r, 200)))
    note = "<p>Truncated by the row cap.</p>" if r.truncated else ""
    return f"<p>{len(r.rows)} rows</p>{note}<table><tr>{head}</tr>{rows}</table>".encode()


def _graph_html(r: Results) -> bytes:
    """A CONSTRUCT/DESCRIBE result as a table of triples (subject, predicate, object), IRIs shortened."""
    from xml.sax.saxutils import escape

    def cell(term: Any) -> str:
        kind = type(term).__name__
        text = compact(term.value) if kind == "NamedNode" else f"_:{term.value}" if kind == "BlankNode" else term.value
        return escape(text if len(text) <= 200 else text[:199] + "…")

    rows = "".join(f"<tr><td>{cell(t.subject)}</td><td>{cell(t.predicate)}</td><td>{cell(t.object)}</td></tr>" for t in r.triples)
    note = "<p>Truncated by the row cap.</p>" if r.truncated else ""
    n = len(r.triples)
    return (f"<p>{n} triple{'s' if n != 1 else ''}</p>{note}<table><tr><th>subject</th><th>predicate</th><th>object</th></tr>"
            f"{rows}</table>").encode()


_WRITERS = {"json": _json, "xml": _xml, "csv": _csv, "tsv": _tsv, "table": _table, "html": _html, "values-tsv": _values_tsv}


def _rdf(triples: tuple, fmt: str) -> bytes:
    import pyoxigraph as ox

    from kg.graph.vocabulary import Namespaces

    out = io.BytesIO()
    if fmt == "ttl":
        ox.serialize(list(triples), out, format=ox.RdfFormat.TURTLE, prefixes=Namespaces().prefixes())
    else:
        ox.serialize(list(triples), out, format=ox.RdfFormat.N_TRIPLES)
    return out.getvalue()


def from_oxigraph(answer: Any, max_rows: int | None = None, name: str = "query") -> Results:
    """Results from a pyoxigraph answer (a local store's; a remote endpoint's JSON is read by kg.sparql.results_json)."""
    import pyoxigraph as ox

    if isinstance(answer, ox.QueryBoolean):
        return Results("ask", boolean=bool(answer), name=name)
    if isinstance(answer, ox.QueryTriples):
        triples: list[Any] = []
        for t in answer:
            if max_rows is not None and len(triples) >= max_rows:
                return Results("graph", triples=tuple(triples), truncated=True, name=name)
            triples.append(t)
        return Results("graph", triples=tuple(triples), name=name)
    variables = tuple(v.value for v in answer.variables)
    rows: list[tuple[Term | None, ...]] = []
    # Each distinct term converted once: answers repeat concepts, labels and counts row after row
    # (co-occurrence at 100k papers: 312k terms, 0.64 s to convert one by one).
    seen: dict[Any, Term] = {}

    def conv(term: Any) -> Term:
        out = seen.get(term)
        if out is None:
            out = seen[term] = Term.from_oxigraph(term)
        return out

    for solution in answer:
        if max_rows is not None and len(rows) >= max_rows:
            return Results("select", variables, tuple(rows), truncated=True, name=name)
        rows.append(tuple(None if (t := solution[i]) is None else conv(t) for i in range(len(variables))))
    return Results("select", variables, tuple(rows), name=name)
