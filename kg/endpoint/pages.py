"""The HTML pages of `kg serve`: the query box, result pages with paging and downloads, links from IRIs to named queries."""

from __future__ import annotations

import html
import urllib.parse
from typing import Any

from kg.core.defaults import SERVE_PAGE_ROWS


def query_form(text: str) -> str:
    """The query box, holding `text`, with the prefixes it may use without declaring them."""
    from kg.sparql.catalog import standard_prefixes

    e = html.escape
    formats = "".join(f"<option>{f}</option>" for f in ("html", "json", "xml", "csv", "tsv", "ttl", "nt"))
    declared = ", ".join(f"<abbr title='{e(iri)}'>{e(p)}:</abbr>" for p, iri in sorted(standard_prefixes().items()))
    return (f"<form action='/sparql' method='post'><textarea name='query' rows='10' cols='90'>{e(text)}</textarea><br>"
            f"<label>format <select name='format'>{formats}</select></label> <button>run query</button></form>"
            f"<p class='prefixes'>Declared for you (no PREFIX needed): {declared}</p>")




def offset_of(args: dict) -> int:
    """The first row an HTML page shows (offset=…), 0 when absent or not a whole number."""
    try:
        return max(0, int((args.get("offset") or ["0"])[-1]))
    except ValueError:
        return 0


def one_page(results: Any, job: dict) -> tuple[Any, str]:
    """The rows of this HTML page and the line that says which rows they are, with links to the pages around."""
    from dataclasses import replace

    total, start = len(results.rows), min(job.get("offset") or 0, max(len(results.rows) - 1, 0))
    if total <= SERVE_PAGE_ROWS:
        return results, ""
    base = self_url(job)
    nav = [f"rows {start + 1:,}–{min(start + SERVE_PAGE_ROWS, total):,} of {total:,}"]
    if start > 0:
        nav.append(f"<a href='{html.escape(base + 'offset=' + str(max(0, start - SERVE_PAGE_ROWS)) + '&format=html')}'>previous</a>")
    if start + SERVE_PAGE_ROWS < total:
        nav.append(f"<a href='{html.escape(base + 'offset=' + str(start + SERVE_PAGE_ROWS) + '&format=html')}'>next</a>")
    return replace(results, rows=results.rows[start : start + SERVE_PAGE_ROWS]), f"<p class='pages'>{' · '.join(nav)}</p>"


def self_url(job: dict) -> str:
    """The GET URL of the job's query (its text, or the named query and parameters), ending in '?' or '&'."""
    if job.get("typed") is not None:
        return "/sparql?" + urllib.parse.urlencode({"query": job["typed"]}) + "&"
    query = urllib.parse.urlencode(job.get("params") or {})
    return f"/queries/{urllib.parse.quote(job['query'].name)}?" + (query + "&" if query else "")


def iri_page(iri: str) -> str | None:
    """Where a clicked IRI leads: a paper to its concepts with scores, a concept to its papers (named queries as pages)."""
    kind = iri.rstrip("/").rsplit("/", 2)[-2] if iri.count("/") >= 3 else ""
    if kind == "paper":
        return "/queries/concepts-of-paper?" + urllib.parse.urlencode({"paper": iri, "format": "html"})
    if kind == "concept":
        return "/queries/papers-by-concept?" + urllib.parse.urlencode({"concept": iri, "format": "html"})
    return None


def result_page(job: dict, body: str, kind: str = "") -> str:
    """A result (or error) as a page: the query box keeps the query as typed, with links to the same result as files."""
    e = html.escape
    base = self_url(job)
    form = query_form(job["typed"]) if job.get("typed") is not None else ""
    formats = ("ttl", "nt") if kind == "graph" else ("csv", "tsv", "json", "xml") if kind else ()
    links = " · ".join(f"<a href='{e(base + 'format=' + f)}'>{f}</a>" for f in formats)
    downloads = f"<p class='downloads'>Download: {links}</p>" if links else ""
    return page("Results", f"<p><a href='/'>back</a></p>{form}{downloads}{body}")


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
            "table{border-collapse:collapse}li{margin:.5em 0}.error{color:#b91c1c;font-weight:600}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>{body}</body></html>")
