"""One entry point for every job that calls a reasoner over many inputs, with bounded concurrency.

Why: an index build calls the reasoner once per chunk or document (SKETCH's triples, UnWeaver's
entities, SSG's themes, RAPTOR's summaries) and an evaluation once per question (answers, query
entities). One call after another, a remote model spends its whole time waiting on the network:
17,000 triple extractions at 1.5 s are seven hours. ``run_batch`` keeps ``concurrency`` calls in
flight on a thread pool (the calls wait on I/O, so threads suffice) and:

- returns the results in input order, so an index is the same at any concurrency;
- takes ``concurrency`` from the reasoner (``Reasoner.concurrency``: 1 for the offline reasoner and
  a local GGUF, which then run in the calling thread exactly as a plain loop; for a remote LLM
  ``$RAG_LAB_LLM_CONCURRENCY``, default 8);
- records an input whose call fails, goes on with the others, and retries the failed ones once
  the rest are done (``retries`` rounds). What still fails is raised as ``BatchError`` naming
  the inputs: an index is never half built; the calls that succeeded are in the reply cache, so a
  rerun pays only for the rest. Once an input has failed, no new one is started while the failed
  and the running ones together reach ``max_failures``, and none after ``max_failures`` failures:
  a bad key costs ten calls at any concurrency, not ten thousand;
- shows one progress bar: completions, and the reasoner's calls, tokens, fallbacks, cache hits
  and failed inputs so far (an input counts once, however often it was tried; ``rag_lab.core.progress``);
- on Ctrl-C (or any error in the calling thread) cancels the calls in flight
  (``reasoner.cancel_calls``: their sockets are shut, so nobody waits for the server) and the queued
  ones, then re-raises;
- with ``with_costs``, pairs each result with the cost of its own calls (``base.costs_of``),
  which ``usage_since`` cannot give while other threads add to the same counters;
- raises ``AllFellBack`` when every call of a job in the batch fell back (an LLM reasoner's
  ``outcomes``): a server that answers nothing usable (bad JSON everywhere) fails the run, with the
  count and the first problem on one line, instead of building an index of fallbacks.

Rate limits (a shared pause after HTTP 429, a tokens-per-minute ceiling, jittered back-off) are
the reasoner's (``rate_limit.py``); the LLM reply cache is safe to write from many threads.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Sequence, TypeVar

from ..core.progress import _building_reasoner, progress_bar
from ..core.redact import scrub
from .base import costs_of

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")
MAX_FAILURES = 10
# The main thread waits on the pool in slices this long: an untimed wait can sleep through a Ctrl-C whose
# signal the OS delivered to a worker thread (Python runs the handler only when the main thread wakes).
INTERRUPT_CHECK_SECONDS = 0.1


class BatchError(RuntimeError):
    """Inputs of a batch that still failed after their retries; ``failures`` maps input index -> error."""

    def __init__(self, desc: str, failures: dict[int, BaseException], total: int, stopped_early: bool):
        self.failures = failures
        first = sorted(failures)[:3]
        shown = "; ".join(f"input {i}: {type(failures[i]).__name__}: {failures[i]}" for i in first)
        more = f" (and {len(failures) - len(first)} more)" if len(failures) > len(first) else ""
        stop = " and the batch stopped early" if stopped_early else ""
        super().__init__(f"{desc}: {len(failures)} of {total} inputs failed{stop}: {shown}{more}")


class AllFellBack(RuntimeError):
    """Every call of a job in a batch fell back: the model gave no usable reply at all."""


def _outcomes(reasoner: Any) -> dict[str, tuple[int, int]] | None:
    outcomes = getattr(reasoner, "outcomes", None)
    if not isinstance(outcomes, dict):
        return None
    with getattr(reasoner, "_lock", None) or contextlib.nullcontext():
        return {job: tuple(n) for job, n in outcomes.items()}


def check_not_all_fell_back(reasoner: Any, before: dict | None, desc: str) -> None:
    """Raise ``AllFellBack`` naming the job, the count and the first problem when a job answered no call
    since ``before`` (an ``outcomes`` snapshot) and fell back at least once."""
    after = _outcomes(reasoner)
    if before is None or after is None:
        return
    for job, (answered, fell_back) in after.items():
        was = before.get(job, (0, 0))
        if fell_back > was[1] and answered == was[0]:
            first = getattr(reasoner, "first_fallback", {}).get(job, "unknown")
            raise AllFellBack(scrub(
                f"{desc}: every one of the {fell_back - was[1]} {job} calls to {getattr(reasoner, 'name', 'the model')} "
                f"fell back (no usable reply); nothing built from them is kept, and the valid replies of other "
                f"jobs are cached. First problem: {first}. Check the model with python -m rag_lab doctor "
                f"--llm SPEC").replace("\n", " "))


def batch_concurrency(reasoner: Any = None, concurrency: int | None = None) -> int:
    """``concurrency`` if given, else the reasoner's (else the building method's reasoner's), else 1."""
    if concurrency is not None:
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
        return concurrency
    if reasoner is None and _building_reasoner.get() is not None:
        reasoner = _building_reasoner.get()()
    value = getattr(reasoner, "concurrency", 1)
    return value if isinstance(value, int) and value >= 1 else 1


def run_batch(call: Callable[[T], R], items: Sequence[T], desc: str, *, reasoner: Any = None,
              concurrency: int | None = None, retries: int = 1, max_failures: int = MAX_FAILURES,
              with_costs: bool = False, progress: bool | None = None) -> list:
    """``[call(item) for item in items]`` with at most ``concurrency`` calls at once (module docstring).

    ``reasoner``: the reasoner ``call`` uses (its concurrency and usage drive the pool and the bar;
    default: that of the method being built). ``with_costs``: ``(result, Cost)`` pairs. ``progress``:
    None follows ``RAG_LAB_QUIET``, False hides the bar."""
    items = list(items)
    if retries < 0 or max_failures < 1:
        raise ValueError(f"run_batch: need retries >= 0 and max_failures >= 1, got {retries}, {max_failures}")
    if reasoner is None and _building_reasoner.get() is not None:
        reasoner = _building_reasoner.get()()
    workers = min(batch_concurrency(reasoner, concurrency), max(1, len(items)))
    one = (lambda item: costs_of(call, item)) if with_costs else call
    results: list = [None] * len(items)
    failures: dict[int, BaseException] = {}
    stopped = False
    before = _outcomes(reasoner)
    with progress_bar(len(items), desc, reasoner=reasoner, enabled=progress) as bar:
        todo = list(range(len(items)))
        for round_ in range(retries + 1):
            if round_:
                log.warning("%s: retrying %d failed input(s) (round %d of %d)", desc, len(todo), round_, retries)
            failures, stopped = _run_round(one, items, todo, workers, results, bar, max_failures, round_ == 0,
                                           round_ == retries, reasoner)
            todo = sorted(failures)
            if not todo or stopped:
                break
    if failures:
        raise BatchError(desc, failures, len(items), stopped)
    check_not_all_fell_back(reasoner, before, desc)
    return results


def _run_round(one, items, todo, workers, results, bar, max_failures, first, last, reasoner) -> tuple[dict, bool]:
    """Run ``todo`` (indices); fill ``results``; return the failures and whether it stopped early. The bar
    counts an input as failed once (its first round) and takes it back when a retry succeeds."""
    failures: dict[int, BaseException] = {}

    def record(i: int, error: BaseException | None, value=None) -> None:
        if error is None:
            results[i] = value
            bar.advance(1, failed=0 if first else -1)
        else:
            failures[i] = error
            bar.advance(1 if last else 0, failed=1 if first else 0)

    if workers == 1:                                  # a plain loop in this thread, as before batches
        for i in todo:
            if len(failures) >= max_failures:
                return failures, True
            try:
                value = one(items[i])
            except Exception as e:  # noqa: BLE001 - recorded, retried, raised at the end
                record(i, e)
            else:
                record(i, None, value)
        return failures, False
    pending: dict[Future, int] = {}
    queue = iter(todo)
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rag_lab-batch") as pool:
            try:
                def top_up() -> None:
                    # once an input failed, failed + running never exceed max_failures
                    while len(pending) < workers and len(failures) + (len(pending) if failures else 0) < max_failures:
                        i = next(queue, None)
                        if i is None:
                            return
                        # in a copy of this context: near-tie labels and collectors (core/ties.py) reach the call
                        pending[pool.submit(contextvars.copy_context().run, one, items[i])] = i
                top_up()
                while pending:
                    done, _ = wait(list(pending), timeout=INTERRUPT_CHECK_SECONDS, return_when=FIRST_COMPLETED)
                    for future in done:
                        i = pending.pop(future)
                        error = future.exception()
                        record(i, error, None if error is not None else future.result())
                    top_up()
            except BaseException:                     # Ctrl-C or an error here: nothing goes on running
                for future in pending:
                    future.cancel()
                cancel = getattr(reasoner, "cancel_calls", None)
                if cancel is not None:
                    cancel()
                raise
    finally:
        resume = getattr(reasoner, "resume_calls", None)
        if resume is not None:
            resume()
    return failures, len(failures) >= max_failures and next(queue, None) is not None
