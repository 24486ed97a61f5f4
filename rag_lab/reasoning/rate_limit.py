"""Keeping many LLM calls in flight inside a provider's limits.

Why: with a batch of calls running at once (``batch.py``), a rate limit hit by one thread is hit
by all of them, and a fixed back-off makes every thread retry at the same instant. So:

- ``RateLimiter.pause(seconds)``: after an HTTP 429 every thread of the reasoner waits, for the
  server's ``Retry-After`` when it sends one (else the back-off below), not only the thread that
  saw it;
- ``RateLimiter.acquire(tokens)``: an optional tokens-per-minute ceiling, a token bucket that holds
  at most one minute's worth and refills continuously. A request takes its estimated tokens
  before it is sent; ``settle`` corrects the bucket with the tokens the reply reported. A request
  larger than the whole minute goes once the bucket is full and leaves it in debt;
- ``backoff_delay``: exponential back-off with "equal jitter" (half the delay fixed, half random),
  so threads that failed together retry apart.

The ceiling holds per process: Dask workers each keep their own (see docs/llm.md).
"""
from __future__ import annotations

import random
import threading
import time
from typing import Callable


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """``min(cap, base * 2**attempt)`` scaled by a random factor in [0.5, 1]."""
    ceiling = min(cap, base * 2 ** attempt)
    return ceiling * (rng or random).uniform(0.5, 1.0)


class RateLimiter:
    """A shared pause after a 429 and an optional tokens-per-minute ceiling (module docstring).
    ``clock``/``sleep`` are injectable for tests."""

    def __init__(self, tokens_per_minute: float | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if tokens_per_minute is not None and not tokens_per_minute > 0:
            raise ValueError(f"tokens_per_minute must be a positive number or None, got {tokens_per_minute!r}")
        self.tokens_per_minute = tokens_per_minute
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._available = float(tokens_per_minute or 0.0)
        self._stamp = clock()
        self._not_before = float("-inf")

    def __repr__(self) -> str:
        return f"RateLimiter(tokens_per_minute={self.tokens_per_minute!r})"

    def _refill(self, now: float) -> None:
        if self.tokens_per_minute:
            rate = self.tokens_per_minute / 60.0
            self._available = min(self.tokens_per_minute, self._available + (now - self._stamp) * rate)
        self._stamp = now

    def acquire(self, tokens: int = 0) -> float:
        """Wait until a request of ``tokens`` may be sent (no pause in force, and under a ceiling the
        bucket holds them, or is full for a request larger than a minute's worth); take them.
        Returns the seconds waited."""
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                self._refill(now)
                wait = self._not_before - now
                if wait <= 0:
                    if not self.tokens_per_minute:
                        return waited
                    need = min(float(tokens), self.tokens_per_minute)
                    if self._available >= need:
                        self._available -= tokens
                        return waited
                    wait = (need - self._available) / (self.tokens_per_minute / 60.0)
            self._sleep(wait)
            waited += wait

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the bucket once a request's real token count is known (0 for a refused request)."""
        if self.tokens_per_minute:
            with self._lock:
                self._available = min(self.tokens_per_minute, self._available + estimated - actual)

    def pause(self, seconds: float) -> None:
        """No request from now until ``seconds`` from now (keeps a later deadline already set)."""
        with self._lock:
            self._not_before = max(self._not_before, self._clock() + max(0.0, seconds))
