"""``python -m rag_lab estimate``: the LLM calls and tokens an indexing run would make, before making any.

For each method, ``planned_llm_calls(retriever, documents)`` lists the (job, input text) calls its
``build`` would send to the reasoner. Each is rendered with the real prompt (prompts.py) and
its prompt tokens counted exactly with the cl100k_base tokenizer (other models' tokenizers
differ by some percent). Completion tokens cannot be known without asking, so each job adds
its documented per-call allowance (``JobPrompt.completion_allowance``). With ``--price-in`` and
``--price-out`` (per 1M tokens, as providers quote them: gpt-4o-mini is 0.15 and 0.60 USD) a cost is
shown too. Nothing is sent anywhere, unless ``--measure-latency`` asks for a few timed calls.

Planning is local work, and not always small: each method splits the corpus as its build would, and a
method whose splitter or clustering embeds text (SKETCH's semantic pieces, RAPTOR's clusters) embeds the
whole corpus with the local encoder to do it. The command says so before it starts and prints the
seconds each method's planning took.

Wall time: with the backend's latency per call, stated (``--latency``) or measured
(``--measure-latency N``: the first N planned calls of each job, uncached, one at a time), each
job's calls become ``ceil(calls / concurrency)`` latencies (``reasoning.estimate.wall_seconds``),
at the concurrency the run would use (``--concurrency``, default ``$RAG_LAB_LLM_CONCURRENCY`` or 8
for a remote model, 1 offline and for gguf) and under ``--tpm`` if given.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

def add_arguments(parser):
    parser.add_argument("--data", required=True, help="dataset name or folder in the generic form")
    parser.add_argument("--methods", required=True, help="comma-separated registered method names")
    parser.add_argument("--llm", default=None, help="reasoner spec the run would use (default: $RAG_LAB_LLM, "
                                                     "else offline); only named in the output, never called")
    parser.add_argument("--price-in", type=float, default=None,
                        help="price per 1M prompt tokens, as providers quote it (gpt-4o-mini: 0.15)")
    parser.add_argument("--price-out", type=float, default=None,
                        help="price per 1M completion tokens (gpt-4o-mini: 0.60)")
    parser.add_argument("--strict", action="store_true",
                        help="refuse a generic-form folder whose JSONL lines hold fields the format does not know")
    parser.add_argument("--limit-docs", type=int, default=None, help="use only the first N documents")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="calls in flight at once (default: what the run would use, $RAG_LAB_LLM_CONCURRENCY "
                             "or 8 for a remote model, 1 offline and for gguf)")
    parser.add_argument("--latency", type=float, default=None, metavar="SECONDS",
                        help="the backend's stated seconds per call: adds the wall time of each job")
    parser.add_argument("--measure-latency", type=int, default=None, metavar="N",
                        help="time the first N planned calls of each job through the reasoner (they ARE sent, "
                             "uncached) and use their median as the latency")
    parser.add_argument("--tpm", type=float, default=None, help="tokens-per-minute ceiling (default $RAG_LAB_LLM_TPM)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this CSV")


def run_concurrency(spec: str, given: int | None) -> int:
    """The concurrency a run with ``spec`` would use (``given`` overrides it where the backend allows)."""
    from ..reasoning import OFFLINE
    from ..reasoning.backends import LlamaCppBackend, OpenAIChatBackend, parse_spec
    from ..reasoning.llm import resolve_concurrency

    if spec == OFFLINE:
        if given not in (None, 1):
            print(f"note: the offline reasoner runs one job at a time; --concurrency {given} does not apply")
        return 1
    return resolve_concurrency(given, LlamaCppBackend if parse_spec(spec).kind == "gguf" else OpenAIChatBackend)


def run(args) -> int:
    from ..reasoning.estimate import estimate_calls, measure_latency, wall_seconds
    from ..reasoning.llm import TPM_ENV, env_number
    import pandas as pd

    from ..caching.atomic import atomic_path
    from ..datasets import load_dataset
    from ..methods import get_retriever
    from ..evaluation.retrievers import planned_llm_calls
    from ..reasoning import OFFLINE
    from ..reasoning.backends import parse_spec
    from ..reasoning.prompts import PROMPTS

    spec = args.llm or os.environ.get("RAG_LAB_LLM") or OFFLINE
    llm_name = OFFLINE if spec == OFFLINE else parse_spec(spec).name   # validates the spec, needs no key
    for flag, price in (("--price-in", args.price_in), ("--price-out", args.price_out)):
        if price is not None and price < 0:
            raise ValueError(f"{flag} must be a non-negative price per 1M tokens, got {price}")
    for flag, value in (("--latency", args.latency), ("--tpm", args.tpm)):
        if value is not None and not value > 0:
            raise ValueError(f"{flag} must be a positive number, got {value}")
    if args.measure_latency is not None and args.measure_latency < 1:
        raise ValueError(f"--measure-latency must be a positive number of calls, got {args.measure_latency}")
    if args.latency is not None and args.measure_latency is not None:
        raise ValueError("give --latency or --measure-latency, not both")
    concurrency = run_concurrency(spec, args.concurrency)
    tpm = args.tpm if args.tpm is not None else env_number(TPM_ENV, float)
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not names:
        raise ValueError(f"--methods must name at least one method, got {args.methods!r}")
    dataset = load_dataset(args.data, strict=args.strict)
    documents = dataset.documents[:args.limit_docs] if args.limit_docs else dataset.documents

    rows, plans, planning = [], {}, {}
    print(f"planning the calls locally: each method splits the {len(documents)} documents as its build would "
          "(a semantic splitter or clustering embeds them with the local encoder; minutes on a large corpus)",
          flush=True)
    for name in names:
        t0 = time.perf_counter()
        planned = plans[name] = planned_llm_calls(get_retriever(name), documents)
        planning[name] = time.perf_counter() - t0
        method_rows = estimate_calls(planned, args.price_in, args.price_out)
        if not method_rows:
            method_rows = [{"job": "(none)", "calls": 0, "prompt_tokens": 0, "est_completion_tokens": 0,
                            "est_cost": 0.0 if args.price_in is not None or args.price_out is not None else None}]
        rows += [{"method": name, **r} for r in method_rows]
    table = pd.DataFrame(rows, columns=["method", "job", "calls", "prompt_tokens", "est_completion_tokens",
                                        "est_cost"])
    if table["est_cost"].isna().all():
        table = table.drop(columns="est_cost")
    latency, source, sent = {}, None, 0
    if args.latency is not None:
        latency, source = {job: args.latency for job in table.job}, f"stated {args.latency:g} s a call"
    elif args.measure_latency:
        from ..reasoning import get_reasoner
        latency = measure_latency(get_reasoner(spec, cache=False), [c for n in names for c in plans[n]],
                                  args.measure_latency)
        sent = sum(min(args.measure_latency, int(c)) for c in table.groupby("job")["calls"].sum())
        source = "measured: " + ", ".join(f"{j} {s:.2f} s" for j, s in latency.items())
    if latency:
        table["est_wall_seconds"] = [
            wall_seconds(int(r.calls), concurrency, latency.get(r.job, 0.0),
                         int(r.prompt_tokens + r.est_completion_tokens), tpm) for r in table.itertuples()]

    made = f"{sent} timed call(s) were made" if sent else "no call was made"
    print(f"dataset: {dataset.name} ({len(documents)} documents); reasoner: {llm_name}; {made}")
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.float_format", "{:.4f}".format):
        print(table.to_string(index=False))
    totals = table.groupby("method", sort=False)[["calls", "prompt_tokens", "est_completion_tokens"]].sum()
    for method, t in totals.iterrows():
        line = f"total {method}: {t.calls} calls, {t.prompt_tokens} prompt + ~{t.est_completion_tokens} completion tokens"
        if "est_cost" in table:
            line += f", ~{table.loc[table.method == method, 'est_cost'].sum():.4f} at the prices given (per 1M tokens)"
        if "est_wall_seconds" in table:   # a method's jobs run one batch after another
            line += f", ~{_duration(table.loc[table.method == method, 'est_wall_seconds'].sum())} wall time"
        print(line)
    if latency:
        ceiling = f", at most {tpm:g} tokens a minute" if tpm else ""
        print(f"wall time: {concurrency} call(s) at once{ceiling}; latency {source}")
    else:
        print(f"wall time: give --latency SECONDS (the backend's stated latency) or --measure-latency N; "
              f"the run would keep {concurrency} call(s) in flight")
    print("planned locally in " + ", ".join(f"{n} {_duration(s) if s >= 1 else f'{s:.2f} s'}"
                                            for n, s in planning.items()))
    allowances = ", ".join(f"{j} {p.completion_allowance}" for j, p in PROMPTS.items())
    print(f"completion tokens are an allowance per call ({allowances}); prompt tokens are counted with cl100k_base")
    if llm_name == OFFLINE:
        print("note: the offline reasoner does these jobs locally with no tokens billed; the counts are what an "
              "LLM reasoner would be sent")
    if args.out:
        with atomic_path(args.out) as tmp:
            table.to_csv(tmp, index=False)
        print(f"wrote {len(table)} rows to {args.out}")
    return 0


def _duration(seconds: float) -> str:
    """``42 s``, ``12.5 min`` or ``7.1 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"
