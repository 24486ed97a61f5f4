"""``python -m rag_lab estimate``: the LLM calls and tokens an indexing run would make, before making any.

For each method, ``Retriever.planned_llm_calls(documents)`` lists the (job, input text) calls its
``build`` would send to the reasoner. Each is rendered with the real prompt (prompts.py) and
its prompt tokens counted exactly with the cl100k_base tokenizer (other models' tokenizers
differ by some percent). Completion tokens cannot be known without asking, so each job adds
its documented per-call allowance (``JobPrompt.completion_allowance``). With ``--price-in`` and
``--price-out`` (per 1k tokens) a cost is shown too. Nothing is sent anywhere.
"""
from __future__ import annotations

import os
from pathlib import Path

def add_arguments(parser):
    parser.add_argument("--data", required=True, help="dataset name or folder in the generic form")
    parser.add_argument("--methods", required=True, help="comma-separated registered method names")
    parser.add_argument("--llm", default=None, help="reasoner spec the run would use (default: $RAG_LAB_LLM, "
                                                     "else offline); only named in the output, never called")
    parser.add_argument("--price-in", type=float, default=None, help="price per 1k prompt tokens")
    parser.add_argument("--price-out", type=float, default=None, help="price per 1k completion tokens")
    parser.add_argument("--limit-docs", type=int, default=None, help="use only the first N documents")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this CSV")


def run(args) -> int:
    from ..reasoning.estimate import estimate_calls
    import pandas as pd

    from ..caching.atomic import atomic_path
    from ..datasets import load_dataset
    from ..methods import get_retriever
    from ..reasoning import OFFLINE
    from ..reasoning.backends import parse_spec
    from ..reasoning.prompts import PROMPTS

    spec = args.llm or os.environ.get("RAG_LAB_LLM") or OFFLINE
    llm_name = OFFLINE if spec == OFFLINE else parse_spec(spec).name   # validates the spec, needs no key
    for flag, price in (("--price-in", args.price_in), ("--price-out", args.price_out)):
        if price is not None and price < 0:
            raise ValueError(f"{flag} must be a non-negative price per 1k tokens, got {price}")
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not names:
        raise ValueError(f"--methods must name at least one method, got {args.methods!r}")
    dataset = load_dataset(args.data)
    documents = dataset.documents[:args.limit_docs] if args.limit_docs else dataset.documents

    rows = []
    for name in names:
        planned = get_retriever(name).planned_llm_calls(documents)
        method_rows = estimate_calls(planned, args.price_in, args.price_out)
        if not method_rows:
            method_rows = [{"job": "(none)", "calls": 0, "prompt_tokens": 0, "est_completion_tokens": 0,
                            "est_cost": 0.0 if args.price_in is not None or args.price_out is not None else None}]
        rows += [{"method": name, **r} for r in method_rows]
    table = pd.DataFrame(rows, columns=["method", "job", "calls", "prompt_tokens", "est_completion_tokens",
                                        "est_cost"])
    if table["est_cost"].isna().all():
        table = table.drop(columns="est_cost")

    print(f"dataset: {dataset.name} ({len(documents)} documents); reasoner: {llm_name}; no call was made")
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.float_format", "{:.4f}".format):
        print(table.to_string(index=False))
    totals = table.groupby("method", sort=False)[["calls", "prompt_tokens", "est_completion_tokens"]].sum()
    for method, t in totals.iterrows():
        line = f"total {method}: {t.calls} calls, {t.prompt_tokens} prompt + ~{t.est_completion_tokens} completion tokens"
        if "est_cost" in table:
            line += f", ~{table.loc[table.method == method, 'est_cost'].sum():.4f} in the price unit"
        print(line)
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
