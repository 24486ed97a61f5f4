"""Keeping many LLM calls in flight inside a provider's limits: one limiter per process per backend.

Why: with a batch of calls running at once (``batch.py``), a rate limit hit by one thread is hit
by all of them, and a fixed back-off makes every thread retry at the same instant. A provider's
limits hold for everything this process sends it, so the limiter is not a reasoner's own:
``shared_limiter(identity, ...)`` hands every reasoner (and every Dask task) in the process that
talks to the same backend (``backend.identity(model)``) the same ``RateLimiter``, which keeps:

- a ceiling on requests in flight (``concurrency``): a request holds a slot while it is sent
  (``request``), so two methods or two Dask tasks building at once still send at most the setting;
- ``pause(seconds)``: after an HTTP 429 every thread waits, for the server's ``Retry-After`` when
  it sends one (else the back-off below), not only the thread that saw it. When it ends, the
  threads resume spread over a fifth of its length (each draws its own offset, ``RESUME_SPREAD``),
  so they do not all hit the server again in the same millisecond;
- an optional tokens-per-minute ceiling: a token bucket that holds at most one minute's worth and
  refills continuously. A request takes its estimated tokens before it is sent; ``settle`` corrects
  the bucket with the tokens the reply reported (0 for a request that got no reply). A request
  larger than the whole minute goes once the bucket is full and leaves it in debt.

``backoff_delay``: exponential back-off with "equal jitter" (half the delay fixed, half random), so
threads that failed together retry apart. Waits can be cut short (``abort``: a ``threading.Event``
set when the user interrupts a batch), and raise ``CallCancelled`` then.

Our own code, not pyrate-limiter (checked against 4.5.1): its token bucket cannot give tokens back (its
``Limiter`` refuses a negative weight: a refused call would keep its estimate), cannot charge a reply that
used more than estimated (a charge that does not fit is refused, never left as debt), refuses for ever a
request larger than the minute, and waits with a ``time.sleep`` Ctrl-C cannot cut short; calls in flight
and the pause after a 429 are not rates. The retry loop (llm.py) stays ours too: tenacity expressed the same
bounds (Retry-After cap, a 429 pausing every thread, Ctrl-C cutting a wait, refused options not counted as
retries) in more lines than the loop it replaced.

The settings of the reasoner made last for a backend are the ones in force (a change is logged);
a Dask build gives each worker process its share of them (``rag_lab.evaluation.cluster``).
"""
from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from typing import Callable, Iterator

from ..core.environment import env_number

log = logging.getLogger(__name__)
CONCURRENCY_ENV = "RAG_LAB_LLM_CONCURRENCY"   # calls in flight at once (default: the backend's)
RESUME_SPREAD = 0.2   # threads resume over this fraction of a pause after it ends


class CallCancelled(RuntimeError):
    """A call or a wait for one was cancelled (the user interrupted the batch)."""


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """``min(cap, base * 2**attempt)`` scaled by a random factor in [0.5, 1]."""
    ceiling = min(cap, base * 2 ** attempt)
    return ceiling * (rng or random).uniform(0.5, 1.0)


def _positive_or_none(name: str, value, kind=float):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
                              or (kind is int and not isinstance(value, int))):
        raise ValueError(f"{name} must be a positive {'integer' if kind is int else 'number'} or None, got {value!r}")
    return value


class RateLimiter:
    """Requests in flight, a shared pause after a 429 and an optional tokens-per-minute ceiling
    (module docstring). ``clock``/``sleep``/``rng`` are injectable for tests (``use_clock`` for a limiter
    already shared); without an injected ``sleep`` a wait is cut short by its ``abort`` event."""

    def __init__(self, tokens_per_minute: float | None = None, concurrency: int | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] | None = None,
                 rng: random.Random | None = None):
        self.tokens_per_minute = _positive_or_none("tokens_per_minute", tokens_per_minute)
        self.concurrency = _positive_or_none("concurrency", concurrency, int)
        self._clock, self._sleep = clock, sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._slot_freed = threading.Condition(self._lock)
        self._available = float(tokens_per_minute or 0.0)
        self._stamp = clock()
        self._not_before = float("-inf")
        self._spread = 0.0
        self.in_flight = 0

    def __repr__(self) -> str:
        return f"RateLimiter(tokens_per_minute={self.tokens_per_minute!r}, concurrency={self.concurrency!r})"

    def configure(self, tokens_per_minute: float | None, concurrency: int | None) -> None:
        """Put new settings in force (a slot already held is kept; the bucket never grows past the new minute)."""
        _positive_or_none("tokens_per_minute", tokens_per_minute)
        _positive_or_none("concurrency", concurrency, int)
        with self._lock:
            self._refill(self._clock())
            if tokens_per_minute != self.tokens_per_minute:
                self._available = (float(tokens_per_minute) if not self.tokens_per_minute
                                   else min(self._available, float(tokens_per_minute or 0.0)))
            self.tokens_per_minute, self.concurrency = tokens_per_minute, concurrency
            self._slot_freed.notify_all()

    @property
    def available(self) -> float:
        """Tokens in the bucket now (0 without a ceiling)."""
        with self._lock:
            self._refill(self._clock())
            return self._available if self.tokens_per_minute else 0.0

    def _refill(self, now: float) -> None:
        if self.tokens_per_minute:
            rate = self.tokens_per_minute / 60.0
            self._available = min(self.tokens_per_minute, self._available + (now - self._stamp) * rate)
        self._stamp = now

    def use_clock(self, clock: Callable[[], float], sleep: Callable[[float], None] | None) -> None:
        """Read time from ``clock`` and wait with ``sleep`` from now on (a test's fake clock)."""
        with self._lock:
            self._clock, self._sleep, self._stamp = clock, sleep, clock()

    def _wait(self, seconds: float, abort: threading.Event | None) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif abort is None:
            time.sleep(seconds)
        elif abort.wait(seconds):
            raise CallCancelled("cancelled while waiting for the rate limit")
        if abort is not None and abort.is_set():
            raise CallCancelled("cancelled while waiting for the rate limit")

    def acquire(self, tokens: int = 0, abort: threading.Event | None = None) -> float:
        """Wait until a request of ``tokens`` may be sent (no pause in force, counting this thread's own
        offset after it; under a ceiling the bucket holds them, or is full for a request larger than a
        minute's worth); take them. Returns the seconds waited. Does not take a slot (``request`` does)."""
        waited, resume = 0.0, None
        while True:
            with self._lock:
                now = self._clock()
                self._refill(now)
                if self._not_before > now and (resume is None or resume < self._not_before):
                    resume = self._not_before + self._rng.uniform(0.0, self._spread)   # this thread's own end
                wait = resume - now if resume is not None else 0.0
                if wait <= 0:
                    if not self.tokens_per_minute:
                        return waited
                    need = min(float(tokens), self.tokens_per_minute)
                    if self._available >= need:
                        self._available -= tokens
                        return waited
                    wait = (need - self._available) / (self.tokens_per_minute / 60.0)
            self._wait(wait, abort)
            waited += wait

    def take_slot(self, abort: threading.Event | None = None) -> None:
        """Wait for one of the ``concurrency`` slots (none to wait for without a ceiling) and hold it."""
        with self._slot_freed:
            while self.concurrency is not None and self.in_flight >= self.concurrency:
                if abort is not None and abort.is_set():
                    raise CallCancelled("cancelled while waiting for a free slot")
                self._slot_freed.wait(0.1 if abort is not None else None)
            self.in_flight += 1

    def release_slot(self) -> None:
        with self._slot_freed:
            self.in_flight -= 1
            self._slot_freed.notify()

    @contextlib.contextmanager
    def request(self, tokens: int = 0, abort: threading.Event | None = None) -> Iterator[None]:
        """Hold a slot while the block sends one request of ``tokens`` (slot first, then the pause and the
        bucket, so no request leaves while a pause is in force)."""
        self.take_slot(abort)
        try:
            self.acquire(tokens, abort)
            yield
        finally:
            self.release_slot()

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the bucket once a request's real token count is known (0 for a request with no reply)."""
        if self.tokens_per_minute:
            with self._lock:
                self._available = min(self.tokens_per_minute, self._available + estimated - actual)

    def pause(self, seconds: float) -> None:
        """No request from now until ``seconds`` from now (keeps a later deadline already set); threads
        then resume spread over ``RESUME_SPREAD`` of the pause."""
        seconds = max(0.0, seconds)
        with self._lock:
            end = self._clock() + seconds
            if end > self._not_before:
                self._not_before, self._spread = end, RESUME_SPREAD * seconds


_SHARED: dict[str, RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(identity: str, tokens_per_minute: float | None = None,
                   concurrency: int | None = None) -> RateLimiter:
    """This process's limiter for the backend ``identity``, with these settings in force (module docstring)."""
    with _SHARED_LOCK:
        limiter = _SHARED.get(identity)
        if limiter is None:
            limiter = _SHARED[identity] = RateLimiter(tokens_per_minute, concurrency)
        elif (limiter.tokens_per_minute, limiter.concurrency) != (tokens_per_minute, concurrency):
            log.info("%s: this process now keeps %s call(s) in flight and %s tokens a minute (was %s and %s)",
                     identity, concurrency, tokens_per_minute or "no ceiling on", limiter.concurrency,
                     limiter.tokens_per_minute or "no ceiling on")
            limiter.configure(tokens_per_minute, concurrency)
        return limiter


def resolve_concurrency(concurrency: int | None, backend) -> int:
    """Jobs in flight at once: ``concurrency``, else ``$RAG_LAB_LLM_CONCURRENCY``, else the backend's
    default; never above a backend's ``max_concurrency`` (gguf: 1)."""
    if concurrency is not None and (not isinstance(concurrency, int) or isinstance(concurrency, bool)
                                    or concurrency < 1):
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    chosen = concurrency or env_number(CONCURRENCY_ENV, int) or getattr(backend, "default_concurrency", 1)
    ceiling = getattr(backend, "max_concurrency", None)
    if ceiling is not None and chosen > ceiling:
        log.info("%r runs at most %d job(s) at once; ignoring a concurrency of %d", backend, ceiling, chosen)
        chosen = ceiling
    return int(chosen)
