"""What an indexing run would send to an LLM, counted before anything is sent.

``estimate_calls`` renders each planned (job, input text) call with the real prompt
(prompts.py), counts its prompt tokens with the cl100k_base tokenizer (other models' tokenizers
differ by some percent) and adds each job's documented completion allowance
(``JobPrompt.completion_allowance``), since completions cannot be known without asking.

``wall_seconds`` turns calls into wall time: a batch (``batch.run_batch``) keeps ``concurrency``
calls in flight, so n calls of equal latency take ``ceil(n / concurrency)`` latencies, and under
a tokens-per-minute ceiling never less than the time the ceiling needs for the tokens beyond its
first, full minute. ``measure_latency`` times a few real calls of each job (nothing cached).
"""
from __future__ import annotations

import math
import statistics
import time
from collections import defaultdict

SKIPPED_WHEN_EMPTY = ("entities", "triples", "query_entities", "themes")  # the reasoner makes no call
clock = time.perf_counter     # what ``measure_latency`` reads (a test puts a fake clock here)
PRICE_TOKENS = 1_000_000      # prices are per 1M tokens, the unit every provider quotes


def estimate_calls(planned, price_in: float | None = None, price_out: float | None = None) -> list[dict]:
    """Rows (job, calls, prompt_tokens, est_completion_tokens, est_cost) for (job, input text) pairs;
    ``price_in`` / ``price_out``: prices per 1M prompt / completion tokens."""
    from .prompts import PROMPTS, planned_inputs
    from .tokens import count_message_tokens

    calls: dict[str, int] = defaultdict(int)
    prompt_tokens: dict[str, int] = defaultdict(int)
    for i, pair in enumerate(planned):
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], str)):
            raise ValueError(f"planned_llm_calls item {i} must be a (job, input text) pair, got {pair!r}")
        job, text = pair
        inputs = planned_inputs(job, text)          # raises on an unknown job
        if job in SKIPPED_WHEN_EMPTY and not text.strip():
            continue
        calls[job] += 1
        prompt_tokens[job] += count_message_tokens(PROMPTS[job].messages(**inputs))
    rows = []
    for job in PROMPTS:
        if not calls[job]:
            continue
        completion = calls[job] * PROMPTS[job].completion_allowance
        cost = None
        if price_in is not None or price_out is not None:
            cost = (prompt_tokens[job] * (price_in or 0.0) + completion * (price_out or 0.0)) / PRICE_TOKENS
        rows.append({"job": job, "calls": calls[job], "prompt_tokens": prompt_tokens[job],
                     "est_completion_tokens": completion, "est_cost": cost})
    return rows


def wall_seconds(calls: int, concurrency: int, latency: float, tokens: int = 0,
                 tokens_per_minute: float | None = None) -> float:
    """Seconds for ``calls`` calls of ``latency`` seconds each, ``concurrency`` at a time (module docstring)."""
    if calls < 0 or concurrency < 1 or latency < 0 or tokens < 0:
        raise ValueError(f"wall_seconds: need calls >= 0, concurrency >= 1, latency >= 0, tokens >= 0; got "
                         f"{calls}, {concurrency}, {latency}, {tokens}")
    seconds = math.ceil(calls / concurrency) * latency
    if tokens_per_minute:
        seconds = max(seconds, max(0, tokens - tokens_per_minute) / tokens_per_minute * 60.0)
    return seconds


def measure_latency(reasoner, planned, per_job: int = 3) -> dict[str, float]:
    """Median seconds of the first ``per_job`` planned calls of each job, sent through ``reasoner``
    one at a time (give it no cache, or every call after the first run is a cache hit)."""
    from .prompts import planned_inputs

    if per_job < 1:
        raise ValueError(f"measure_latency: per_job must be at least 1, got {per_job}")
    samples: dict[str, list[float]] = defaultdict(list)
    for job, text in planned:
        if len(samples[job]) >= per_job or (job in SKIPPED_WHEN_EMPTY and not text.strip()):
            continue
        inputs = planned_inputs(job, text)
        t0 = clock()
        getattr(reasoner, job)(**inputs)
        samples[job].append(clock() - t0)
    return {job: statistics.median(times) for job, times in samples.items()}
