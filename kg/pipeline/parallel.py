"""Run an extractor over many papers: in chunks, optionally in worker processes, with a progress bar.

spaCy's own `nlp.pipe(n_process=2)` was measured 10x slower than one process here because the
parent rebuilds every Doc the workers send back. So the papers are split between processes
instead, and each worker ships back only its compact, picklable per-paper records.

An extractor is split into chunks only when it declares `per_paper = True` (its answer for a paper
depends on that paper alone); otherwise it may count corpus statistics over its input and runs in one call.
"""

from __future__ import annotations

import signal
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, overload

from kg.core import progress as progress_
from kg.core.errors import UsageError, WorkerError
from kg.extract import Extraction, Extractor
from kg.extract.ingest import Paper

if TYPE_CHECKING:
    from concurrent.futures import Future

CHUNK = 250  # papers a task: small enough for a smooth progress bar, big enough to amortise pickling
AUTO_MAX = 4  # processes `jobs="auto"` counts at most: the writer and its workers
AUTO_CHUNKS = 4  # chunks of papers up to which `jobs="auto"` extracts in this process: starting workers costs more

_EXTRACTOR: Any = None  # a worker's extractor, unpickled once when it starts (_init)
_CLAIMS: Any = None  # a worker's view of which chunks a process has claimed (one byte a chunk), and its lock
_LOCK: Any = None


def processes(jobs: int | str) -> int:
    """The processes `jobs` asks for: a number (at least 1) as it is, "auto" the CPUs this process may use, at most
    AUTO_MAX (decision 0060)."""
    if jobs == "auto":
        return max(1, min(AUTO_MAX, _cpus()))
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UsageError(f"--jobs must be at least 1 or auto (got {jobs!r})")
    return jobs


def workers(jobs: int | str, papers: int | None = None) -> int:
    """The extraction workers to start beside the process that writes the graph (0: extract in that process).

    `--jobs N`: N workers, none for 1. "auto": one fewer than `processes` gives, so that the writer has a CPU of its own
    (on 2 CPUs one worker extracts while the parent writes: their work is about even), and none when there are `papers`
    to extract in AUTO_CHUNKS chunks or fewer."""
    wanted = processes(jobs)
    if jobs == "auto":
        return 0 if papers is not None and papers <= AUTO_CHUNKS * CHUNK else wanted - 1
    return wanted if wanted > 1 else 0


def _cpus() -> int:
    """The CPUs this process may run on (its affinity, which containers and taskset narrow), else the machine's."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def extract(
    extractor: Extractor,
    papers: Sequence[Paper],
    *,
    jobs: int = 1,
    progress: bool | None = None,
) -> list[Extraction]:
    """Every paper's Extraction, in input order, the same for any number of jobs (`progress`: a bar on stderr, None: when kg.core.progress is on)."""
    results: list[Extraction] = []
    if not getattr(extractor, "per_paper", False):
        # An extractor that may count corpus statistics over its whole input must see it in one call.
        with _bar(len(papers), progress) as advance:
            results = extractor(papers)
            advance(len(papers))
        return results
    ranges = [(i, min(i + CHUNK, len(papers))) for i in range(0, len(papers), CHUNK)]
    with _bar(len(papers), progress) as advance:
        if jobs <= 1 or len(ranges) < 2:
            for a, b in ranges:
                results.extend(extractor(papers[a:b]))
                advance(b - a)
        else:
            for (a, b), chunk in zip(ranges, _in_workers(extractor, papers, ranges, jobs)):
                results.extend(chunk)
                advance(b - a)
    return results


class Streamed(Sequence[Extraction]):
    """The papers' Extractions, in input order, taken from the worker processes as they are read.

    `kg build --jobs N` hands this to the writer instead of waiting for every paper: the parent makes,
    writes and indexes the triples of the first papers while the workers extract the next ones (with
    everything after extraction in the parent, waiting left one core idle for half the build).
    `failed(exc, index)` turns a worker's failure at the chunk starting at `index` into the error to raise.
    """

    def __init__(self, chunks: Iterator[list], total: int, failed: Callable[[Exception, int], Exception],
                 advance: Callable[[int], None] = lambda n: None, done: Callable[[], None] = lambda: None) -> None:
        self._chunks, self._total, self._failed, self._advance, self._done = chunks, total, failed, advance, done
        self._got: list[Extraction] = []

    def _more(self) -> bool:
        try:
            chunk = next(self._chunks)
        except StopIteration:
            self._done()
            return False
        except Exception as exc:
            self._done()
            raise self._failed(exc, len(self._got)) from exc
        self._got.extend(chunk)
        self._advance(len(chunk))
        return True

    def __len__(self) -> int:
        return self._total

    def __iter__(self) -> Iterator[Extraction]:
        i = 0
        while i < len(self._got) or self._more():
            while i < len(self._got):
                yield self._got[i]
                i += 1

    @overload
    def __getitem__(self, index: int) -> Extraction: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Extraction]: ...
    def __getitem__(self, index: int | slice) -> Extraction | Sequence[Extraction]:
        if isinstance(index, slice) or index < 0:
            while self._more():
                pass
        else:
            while len(self._got) <= index and self._more():
                pass
        return self._got[index]


def streamed(extractor: Extractor, papers: Sequence[Paper], failed: Callable[[Exception, int], Exception], *,
             jobs: int, progress: bool | None = None) -> Streamed:
    """Start `jobs` worker processes on a per-paper extractor; their results come as the Streamed sequence is read."""
    ranges = [(i, min(i + CHUNK, len(papers))) for i in range(0, len(papers), CHUNK)]
    shown = ExitStack()  # the progress step stays open while the Streamed sequence is read, closed when it is done
    tick = shown.enter_context(_bar(len(papers), progress))
    chunks = _in_workers(extractor, papers, ranges, jobs)
    return Streamed(chunks, len(papers), failed, tick, shown.close)


def _in_workers(extractor: Extractor, papers: Sequence[Paper], ranges: list[tuple[int, int]], jobs: int) -> Iterator[list]:
    """Results of each range, in order, computed by `jobs` worker processes, started now (not at the first read).

    Spawned, not forked (decision 0060): a forked worker held a copy of everything the parent held (517 MB each at
    100,000 papers, the summed peak 2,510 MB); a spawned one holds the extractor (pickled once, here) and its chunk.
    The workers leave once every chunk is done, not when the parent has read the last one: the parent writes more
    slowly than two workers extract.

    A process pool of concurrent.futures, not multiprocessing.Pool: when a worker is killed (SIGKILL, as the
    out-of-memory killer does) multiprocessing.Pool starts another and waits for ever for the lost chunk (a
    `--jobs 2` build hung at 0 % CPU); this pool is then broken, and the build ends with a WorkerError.

    This process extracts too whenever it would wait for the next chunk (`_results`): the chunks no worker has claimed
    yet, from the one it needs on (decision 0064). A chunk is claimed in shared memory under a lock, by a worker when it
    starts it and by this process when it takes it; a worker given a chunk claimed here returns None at once. (Not by
    cancelling the chunk's future: a pool broken by a killed worker then failed in its own thread, and the build hung.)
    """
    import multiprocessing
    import pickle
    import tempfile
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # The extractor (7 MB pickled) goes by a file: as an argument it would be written into each worker's start-up pipe,
    # and a worker killed before reading it left that write (and the build) waiting for ever.
    with tempfile.NamedTemporaryFile(prefix="kg-extractor-", suffix=".pickle", delete=False) as held:
        pickle.dump(extractor, held, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        context = multiprocessing.get_context("spawn")
        claims, lock = context.RawArray("b", len(ranges)), context.Lock()
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init, initargs=(held.name, claims, lock))
        try:
            with _no_main_script():
                # every chunk handed out now: the workers start at once
                futures = [pool.submit(_work, i, papers[a:b]) for i, (a, b) in enumerate(ranges)]
        except BrokenProcessPool:  # a worker killed while the chunks were handed out (in its start-up, say)
            _stop(pool)
            raise _killed(ranges, 0) from None  # the writer has read nothing yet
        pool.shutdown(wait=False)  # each worker ends when no chunk is left
    except BaseException:
        Path(held.name).unlink(missing_ok=True)
        raise

    def here(i: int) -> list | None:
        """Chunk i extracted in this process, if no worker has claimed it (None then; a lock held longer than a
        second, by a worker killed while holding it, counts as claimed)."""
        if not lock.acquire(timeout=1.0):
            return None
        try:
            free, claims[i] = not claims[i], 1
        finally:
            lock.release()
        return extractor(papers[slice(*ranges[i])]) if free else None

    return _results(pool, futures, ranges, Path(held.name), here)


@contextmanager
def _no_main_script() -> Iterator[None]:
    """While workers are spawned, no main script for them to run again: a spawned process imports the script that
    started its parent (as on macOS and Windows), and a script calling `kg.build` outside `if __name__ == "__main__":`
    would build again in each worker and fail there. The workers need nothing of it: the extractor is kg's."""
    import sys
    import types

    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _results(pool: Any, futures: list[Future], ranges: list[tuple[int, int]], held: Path,
             here: Callable[[int], list | None]) -> Iterator[list]:
    """The results in order; the pool's workers stopped on leaving, also when the reader stops early or is interrupted;
    `held`: the extractor's file, removed then.

    While the chunk needed next is not done, this process extracts the first chunk from it on that no worker has claimed
    (`here(i)`, None when one has), instead of waiting: on 2 CPUs the writer waited for its one worker for about a third
    of the extraction (decision 0064). The first, not the last: the writer writes it soon after, so when the workers
    are done little is left for it to write alone. A failure here is raised when the chunk's turn comes, as a worker's is."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    done = 0
    taken: dict[int, Future] = {}  # chunk -> its result, extracted here
    ahead = 0  # the chunks before it are taken here or claimed by a worker
    try:
        for i, future in enumerate(futures):
            ahead = max(ahead, i)  # from the chunk needed now: no worker may have started it yet
            while i not in taken and not future.done() and ahead < len(ranges):
                mine: Future = Future()
                try:
                    got = here(ahead)
                except Exception as exc:
                    mine.set_exception(exc)
                else:
                    if got is not None:  # (None: a worker has it)
                        mine.set_result(got)
                if mine.done():
                    taken[ahead] = mine
                ahead += 1
            # a chunk taken here (which its worker leaves, returning None), else the worker's
            yield taken.pop(i).result() if i in taken else future.result()
            done += 1
    except BrokenProcessPool:
        raise _killed(ranges, done) from None
    finally:
        if done < len(ranges):  # stopped early (an error, Ctrl-C, a reader that left): the workers go now
            _stop(pool)
        else:
            pool.shutdown(wait=True)
        held.unlink(missing_ok=True)


def _killed(ranges: list[tuple[int, int]], done: int) -> WorkerError:
    """The one-line error of a pool broken by a killed worker, naming the first chunk not extracted."""
    a, b = ranges[done]
    return WorkerError(f"an extraction worker process was killed (by a signal; the out-of-memory killer does this) "
                       f"before papers {a + 1}-{b} of {ranges[-1][1]} were extracted; nothing was written: "
                       f"run again with fewer --jobs, or with more memory")


def _stop(pool: Any) -> None:
    """End a pool's workers now, and the pool (its chunks not started are cancelled)."""
    for process in dict(getattr(pool, "_processes", None) or {}).values():  # (Python 3.14: pool.terminate_workers)
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _init(held: str, claims: Any, lock: Any) -> None:
    import pickle

    global _EXTRACTOR, _CLAIMS, _LOCK
    _CLAIMS, _LOCK = claims, lock
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    with open(held, "rb") as stream:
        _EXTRACTOR = pickle.load(stream)


def _work(i: int, papers: Sequence[Paper]) -> list | None:
    """Chunk i's extractions, or None when the writing process has claimed it (and extracts it itself)."""
    with _LOCK:
        free, _CLAIMS[i] = not _CLAIMS[i], 1
    return _EXTRACTOR(papers) if free else None


@contextmanager
def _bar(total: int, show: bool | None) -> Iterator[Callable[[int], None]]:
    """A bar of papers extracted on stderr when asked (None: when kg.core.progress is on); else a no-op."""
    with progress_.step("extract", total=total, unit="papers", show=show) as tick:
        yield tick
