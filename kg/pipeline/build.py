"""The `build` verb: ingest → extract → triples, and writing the result to disk."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Collection, Iterable, Iterator, Sequence

from kg import extract
from kg.core import progress as progress_
from kg.core.defaults import BUILD_JOBS
from kg.core.defaults import SAMPLE_NAME as SAMPLE_NAME  # re-exported: kg.pipeline.build.SAMPLE_NAME
from kg.core.errors import InputError, KgError
from kg.extract import ingest
from kg.extract import scheme as scheme_
from kg.graph.handle import Derive, GraphFile
from kg.graph.resources import data_path
from kg.graph.vocabulary import DEFAULT_BASE, Namespaces
from kg.pipeline import parallel, triples
from kg.pipeline.plan import Options


@dataclass(frozen=True)
class Built:
    """A built knowledge graph: the papers, what was extracted from them, and the scheme used."""

    papers: tuple[ingest.Paper, ...]
    extractions: Sequence[extract.Extraction]  # a tuple, or with jobs > 1 parallel.Streamed: read while being made
    scheme: scheme_.Scheme
    problems: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    ns: Namespaces = Namespaces()
    notes: tuple[str, ...] = ()  # advice about the inputs: fields not read, papers without a venue or year

    def triples(self, annotated: bool = False) -> Iterator:
        """Every triple of the graph, in the fixed order that makes builds byte-identical (`annotated`: each annotation
        as one kg.graph.annotations.Annotated)."""
        return triples.triples(self.papers, self.extractions, self.scheme, ns=self.ns, inputs=self.inputs, annotated=annotated)

    def summary(self, top: int = 10) -> dict:
        """Counts for people: papers, concepts used, subject links, mentions, and the top concepts."""
        subjects = Counter(l.concept for e in self.extractions for l in e.links if l.subject)
        return {
            "papers": len(self.papers),
            "concepts": len(subjects),
            "links": sum(subjects.values()),
            "mentions": sum(len(l.mentions) for e in self.extractions for l in e.links),
            "top": [(self.scheme.concepts[c].label, n) for c, n in sorted(subjects.items(), key=lambda x: (-x[1], x[0]))[:top]],
        }


def sample_inputs() -> tuple[Path, ...]:
    """The bundled ICML 2024 sample: two lists of abstracts in the seed text format."""
    return tuple(sorted(data_path("sample").glob("*.txt")))


def build(
    inputs: Iterable[str | Path] | None = None,
    *,
    schemes: Sequence[str | Path] = (),
    default_scheme: bool = True,
    threshold: float | None = None,
    model: str | Path | None = None,
    base: str = DEFAULT_BASE,
    skip_bad: bool = False,
    jobs: int | str = BUILD_JOBS,
    progress: bool | None = None,
    ids: Collection[str] | None = None,
    venue: str | None = None,
    year: int | None = None,
    keep_duplicates: bool = False,
) -> Built:
    """Read inputs (the bundled sample when None), extract concept links, and return the graph.

    `jobs` worker processes share the extraction (same output for any number; "auto": kg.pipeline.parallel.workers); `progress` shows a
    bar on stderr (None: when kg.core.progress is on). With `ids`, only the papers with those ids are kept (kg.evaluate builds the
    papers an expert file lists out of a larger file). `venue` and `year` go to papers without one; records of the same
    paper under other ids (DOI, arXiv id, title and first author, abstract) are kept once unless `keep_duplicates`.
    """
    options = Options.of(schemes, model, default_scheme=default_scheme, threshold=threshold, base=base,
                         skip_bad=skip_bad, venue=venue, year=year, keep_duplicates=keep_duplicates)
    return build_with(inputs, options, jobs=jobs, progress=progress, ids=ids)


def build_with(inputs: Iterable[str | Path] | None, options: Options, *, jobs: int | str = BUILD_JOBS, progress: bool | None = None,
               ids: Collection[str] | None = None) -> Built:
    """`build` with its options as one `Options` (what `kg build` calls)."""
    parallel.processes(jobs)  # a bad --jobs fails before the inputs are read
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]  # one file, not the characters of its name
    paths = tuple(Path(p) for p in inputs) if inputs is not None else sample_inputs()
    scheme = options.scheme()
    skip_bad = options.skip_bad
    with progress_.step(f"reading {', '.join(str(p) for p in paths)}", show=progress):
        # before the (slow) extractor: bad input fails fast
        got = ingest.read(paths, skip_bad=skip_bad, venue=options.venue, year=options.year, keep_duplicates=options.keep_duplicates)
    if ids is not None:
        kept = tuple(p for p in got.papers if p.id in ids)
        if not kept:
            raise InputError(f"no papers to build: none of the {len(got.papers)} papers of {', '.join(p.name for p in paths)} has one of the {len(ids)} ids asked for")
        got = replace(got, papers=kept)
    workers = parallel.workers(jobs, len(got.papers))
    with progress_.step(f"loading the extractor for {len(got.papers)} papers", show=progress):
        run = extract.make_extractor(scheme, options.threshold, options.model)
    papers: tuple[ingest.Paper, ...]
    extractions: Sequence[extract.Extraction]
    problems: tuple[str, ...]
    if workers and not skip_bad and getattr(run, "per_paper", False) and len(got.papers) > parallel.CHUNK:
        # The workers extract while kg.pipeline.build.write makes the triples of the papers already extracted.
        papers, extractions, problems = got.papers, parallel.streamed(run, got.papers, partial(_named, run, got.papers), jobs=workers, progress=progress), ()
    else:  # one worker would only make this process wait
        papers, extractions, problems = _extract(run, got.papers, skip_bad, max(workers, 1), progress)
    return Built(papers, extractions, scheme, (*scheme.warnings, *got.problems, *problems), tuple(p.name for p in paths), options.ns, got.notes)


def _named(run: extract.Extractor, papers: Sequence[ingest.Paper], exc: Exception, start: int) -> Exception:
    """The error for a worker's failure on the chunk of papers from `start`: the record it fails on, found by retrying them one at a time."""
    if isinstance(exc, KgError):
        return exc
    for paper in papers[start:start + parallel.CHUNK]:
        try:
            run((paper,))
        except KgError as error:
            return error
        except Exception as error:
            return InputError(f"{paper.where}: extraction failed on this record ({type(error).__name__}: {error})")
    return exc  # every record extracts on its own: the failure was in the batch machinery (a bug), not the input


def _extract(
    run: extract.Extractor, papers: tuple[ingest.Paper, ...], skip_bad: bool, jobs: int = 1, progress: bool | None = None
) -> tuple[tuple[ingest.Paper, ...], tuple[extract.Extraction, ...], tuple[str, ...]]:
    """Run the extractor over all papers; if it fails, find and name the record it fails on.

    The batch is fast; only after a failure are papers retried one at a time, so that the
    message names `file:line` (and `skip_bad` can leave that paper out) instead of a traceback.
    """
    try:
        return papers, tuple(parallel.extract(run, papers, jobs=jobs, progress=progress)), ()
    except KgError:
        raise
    except Exception as exc:
        batch_error = exc
    kept: list[ingest.Paper] = []
    found: list[extract.Extraction] = []
    problems: list[str] = []
    for paper in papers:
        try:
            (one,) = run((paper,))
        except KgError:
            raise
        except Exception as exc:
            error = InputError(f"{paper.where}: extraction failed on this record ({type(exc).__name__}: {exc})")
            if not skip_bad:
                raise error from exc
            problems.append(f"skipped {error}")
            continue
        kept.append(paper)
        found.append(one)
    if not problems:
        # Every record extracts on its own: the failure was in the batch machinery (a bug), not the input.
        raise batch_error
    if not kept:
        raise InputError(f"no papers to build: extraction failed on all {len(problems)} records, the first: {problems[0].removeprefix('skipped ')}")
    return tuple(kept), tuple(found), tuple(problems)


def write(built: Built, path: str | Path, fmt: str | None = None, *, derived: Sequence[Derive] = (),
          placed: Sequence[Derive] = ()) -> Path:
    """Write the graph to `path` atomically (format from `fmt` or the suffix), and its query index beside it, in one
    transaction (kg.graph.handle.GraphFile.transaction; `derived`: what makes its page or store, then, in it too;
    `placed`: what starts once the file is in place, before the index's tables).

    Once its triples are written, nothing here holds the papers and extractions: a caller that lets `built` go in the
    first of `placed` (kg build) makes the index's tables, draws the page and loads the store without them in memory."""
    triples, ns = built.triples(annotated=True), built.ns
    del built
    with GraphFile(Path(path)).transaction(derived=derived, placed=placed) as writing:  # another writer of the same file waits
        return writing.write(triples, ns=ns, fmt=fmt, label=f"writing {path}")
