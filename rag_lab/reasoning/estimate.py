"""What an indexing run would send to an LLM, counted before anything is sent.

``estimate_calls`` renders each planned (job, input text) call with the real prompt
(prompts.py), counts its prompt tokens with the cl100k_base tokenizer (other models' tokenizers
differ by some percent) and adds each job's documented completion allowance
(``JobPrompt.completion_allowance``), since completions cannot be known without asking.
"""
from __future__ import annotations

from collections import defaultdict

SKIPPED_WHEN_EMPTY = ("entities", "triples", "query_entities", "themes")  # the reasoner makes no call



def estimate_calls(planned, price_in: float | None = None, price_out: float | None = None) -> list[dict]:
    """Rows (job, calls, prompt_tokens, est_completion_tokens, est_cost) for (job, input text) pairs."""
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
            cost = prompt_tokens[job] / 1000 * (price_in or 0.0) + completion / 1000 * (price_out or 0.0)
        rows.append({"job": job, "calls": calls[job], "prompt_tokens": prompt_tokens[job],
                     "est_completion_tokens": completion, "est_cost": cost})
    return rows
