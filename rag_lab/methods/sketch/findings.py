"""The paragraph notebook 01 ends with: what this run's comparisons of SKETCH with each baseline say,
and the caveats each one carries, computed from the run.

``comparisons`` pairs SKETCH with every baseline question by question on each column (difference of
means, its 95% interval, p and ``statistics.verdict``); ``paragraph`` reads that table:

- a difference is called ahead or behind only when its p is below 0.05 (its interval then excludes
  zero); "too few questions to tell" when no p below 0.05 is possible at this n;
- the span-overlap ``ctx_recall@k`` (gold passages found, whatever the chunk's length) is read first;
- ragas' non-LLM context precision and recall match retrieved against gold text by string similarity,
  so they reward contexts about as long as the gold sentences: a lead there over a method with long
  chunks (chunk sizes from the run) is named as such, and set beside the same pair on the span metric;
- the reasoner (offline: dependency-rule triples, extractive answers) and a missing judge (no
  faithfulness or answer relevancy, where the paper reports its largest leads) are said, as is n.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from ...evaluation.statistics import UNDECIDABLE, format_ci, paired_difference
from ...evaluation.uncertainty import Units, per_question, unit_labels

COLUMNS = ["baseline", "column", "diff", "ci_low", "ci_high", "n", "p", "verdict"]
SIDE = {"supported": "ahead", "contradicted": "behind", "inconclusive": "not told apart",
        UNDECIDABLE: "too few questions to tell"}
STRING_COLUMNS = ("context_precision", "context_recall")
LONG_FACTOR = 2.0     # a method's chunks are "long" when their mean size is at least this many times SKETCH's
# the span-based context metrics (metrics.py), under the names notebook 10's leaderboards use
SPAN_METRICS = ("ctx_recall", "ctx_precision", "ctx_mrr", "ctx_ndcg")
STRING_MATCH = "string-match"   # label of ragas' non-LLM context metrics wherever they are shown


def comparisons(results: pd.DataFrame, columns: Mapping[str, str], method: str = "sketch",
                units: Units | None = None) -> pd.DataFrame:
    """``method`` minus every other method of ``results`` (evaluate's tidy table) on each column
    (``columns``: label -> metric@k), paired by question: ``COLUMNS``, one row per baseline and column
    both were scored on. ``units`` (question id -> its document): clustered by document, as notebook 10."""
    rows = []
    for label, metric in columns.items():
        table = per_question(results, metric)
        if method not in table.columns:
            continue
        labels = unit_labels(list(table.index), units)
        for base in [m for m in table.columns if m != method]:
            d = paired_difference(table[method].to_numpy(), table[base].to_numpy(), units=labels)
            if d.n:
                rows.append({"baseline": base, "column": label, "diff": d.diff, "ci_low": d.ci_low,
                             "ci_high": d.ci_high, "n": d.n, "p": d.p, "verdict": d.verdict()})
    return pd.DataFrame(rows, columns=COLUMNS)


def _said(row) -> str:
    return f"{row['baseline']} {format_ci(row['diff'], row['ci_low'], row['ci_high'])}"


def _grouped(rows: pd.DataFrame) -> str:
    """``ahead of a (d [lo, hi]); not told apart from b (...)`` over the rows of one column."""
    parts = []
    for v, words in (("supported", "ahead of"), ("contradicted", "behind"), ("inconclusive", "not told apart from"),
                     (UNDECIDABLE, "not decidable at this n (too few questions) against")):
        chosen = rows[rows["verdict"] == v]
        if len(chosen):
            parts.append(f"{words} " + ", ".join(_said(r) for _, r in chosen.iterrows()))
    return "; ".join(parts)


def _name(column: str) -> str:
    return column.replace("_", " ")


def span_columns(k: int, available: Sequence[str]) -> dict[str, str]:
    """The span metrics at ``k`` present in a summary's columns, label = metric@k (notebook 10's names)."""
    return {f"{m}@{k}": f"{m}@{k}" for m in SPAN_METRICS if f"{m}@{k}" in set(available)}


def string_match_columns(answer_k: int, judged: bool) -> dict[str, str]:
    """ragas' non-LLM context precision and recall at ``answer_k``, labelled as string matching; none when a
    judge scored the paper's context columns (then they are LLM-judged, not string matching)."""
    if judged:
        return {}
    return {f"{STRING_MATCH} {m.replace('_', ' ')}": f"nonllm_{m}@{answer_k}" for m in STRING_COLUMNS}


def string_match_named(frame: pd.DataFrame, metrics: Mapping[str, str], judged: bool
                       ) -> tuple[pd.DataFrame, dict[str, str]]:
    """``frame`` (and its label -> metric@k map) with the paper's context columns and their F1 renamed
    ``string-match …`` when no judge scored them (then they are ragas' string matching)."""
    if judged:
        return frame, dict(metrics)
    names = {c: f"{STRING_MATCH} {c}" for c in (*STRING_COLUMNS, "f1")}
    return frame.rename(columns=names), {names.get(c, c): m for c, m in metrics.items()}


def verdict_table(pairs: pd.DataFrame, method: str = "sketch") -> pd.DataFrame:
    """``comparisons``' rows as a reader's table: one row per baseline, per column ``diff [low, high]``
    and the verdict word, with each column's n in its header."""
    if pairs.empty:
        return pd.DataFrame()
    out = {}
    for col in dict.fromkeys(pairs["column"]):
        rows = pairs[pairs["column"] == col].set_index("baseline")
        ns = sorted({int(v) for v in rows["n"]})
        head = f"{col} (n = {ns[0] if len(ns) == 1 else f'{ns[0]}-{ns[-1]}'})"
        out[head] = {b: f"{format_ci(r['diff'], r['ci_low'], r['ci_high'])} {SIDE[r['verdict']]}" for b, r in rows.iterrows()}
    return pd.DataFrame(out).rename_axis(f"{method} minus")


def lead_sentences(pairs: pd.DataFrame, span: Mapping[str, str], strings: Mapping[str, str],
                   chunk_tokens: Mapping[str, float], method: str = "sketch") -> list[str]:
    """What ``verdict_table`` shows, in words: the span metrics first (where the comparison is decided),
    then the string-match columns as what they are, with this run's chunk sizes."""
    out = []
    for cols, head in ((span, "Span metrics (a hit counts when its characters overlap a gold passage; notebook "
                              "10's names)"),
                       (strings, f"{STRING_MATCH.capitalize()} columns (ragas' non-LLM context precision and recall: "
                                 "each retrieved chunk's text set against the gold passages' text by string "
                                 "similarity, so chunks about as long as the gold sentences score higher and long "
                                 "chunks lower; mean chunk size here, word pieces: "
                                 + ", ".join(f"{m} {t:.0f}" for m, t in chunk_tokens.items()) + ")")):
        rows = pairs[pairs["column"].isin(list(cols))]
        if rows.empty:
            continue
        said = " ".join(f"On {c} {method} is {_grouped(rows[rows['column'] == c])}." for c in cols
                        if (rows["column"] == c).any())
        decided = rows[rows["verdict"].isin(["supported", "contradicted"])]
        out.append(f"{head}. {said} {len(decided)} of {len(rows)} differences are decided at 95%.")
    return out


def long_chunk_methods(chunk_tokens: Mapping[str, float], method: str = "sketch") -> list[str]:
    """Methods whose mean chunk size is at least ``LONG_FACTOR`` times ``method``'s."""
    own = chunk_tokens.get(method, math.nan)
    return [m for m, t in chunk_tokens.items() if m != method and not math.isnan(own) and t >= LONG_FACTOR * own]


def paragraph(table: pd.DataFrame, *, span: str, n_questions: int, reasoner: str, judged: bool,
              chunk_tokens: Mapping[str, float], method: str = "sketch",
              string_columns: Sequence[str] = STRING_COLUMNS, extra: Sequence[str] = ()) -> str:
    """The findings paragraph from ``comparisons``' table. ``span``: the column without a length bias
    (ctx_recall@k); ``chunk_tokens``: each method's mean chunk size in word pieces; ``extra``:
    sentences the notebook computed elsewhere (the encoder cut of semantic chunks) put after the
    comparisons."""
    if table.empty:
        return f"Findings: {method} was compared with no baseline in this run, so there is nothing to report."
    ns = sorted({int(v) for v in table["n"]})
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]} to {ns[-1]}"      # every pair's n, not the largest alone
    sizes = ", ".join(f"{m} {t:.0f}" for m, t in chunk_tokens.items())
    out = [f"Findings ({n_questions} questions, {n} scored per pair; reasoner: {reasoner}; judge: "
           f"{'yes' if judged else 'none'}): {method} minus each baseline, paired by question, with 95% intervals; "
           "a difference counts as ahead or behind only when its p is below 0.05 (its interval excludes zero)."]
    span_rows = table[table["column"] == span]
    if len(span_rows):
        out.append(f"On {span} (gold passages found among the top hits, whatever a chunk's length) {method} is "
                   + _grouped(span_rows) + ".")
    long = long_chunk_methods(chunk_tokens, method)
    lead_unmatched = []
    for col in [c for c in string_columns if c in set(table["column"])]:
        rows = table[table["column"] == col]
        out.append(f"On {_name(col)} {method} is " + _grouped(rows) + ".")
        for _, r in rows[rows["verdict"] == "supported"].iterrows():
            s = span_rows[span_rows["baseline"] == r["baseline"]]
            if r["baseline"] in long and (s.empty or s["verdict"].iloc[0] != "supported"):
                lead_unmatched.append((col, r["baseline"], SIDE[s["verdict"].iloc[0]] if len(s) else "not scored"))
    if any(c in set(table["column"]) for c in string_columns):
        text = (f"Caveat: {' and '.join(_name(c) for c in string_columns)} are ragas' non-LLM string matching of "
                "retrieved against gold passages, which favours contexts about as long as the gold sentences and "
                f"penalises long chunks (mean chunk size here, word pieces: {sizes})")
        if lead_unmatched:
            text += ("; so " + "; ".join(f"the lead on {_name(c)} over {b}, whose chunks are long, is not a lead on "
                                         f"{span} (there: {side})" for c, b, side in lead_unmatched)
                     + " — it measures chunk length more than retrieval")
        out.append(text + ".")
    out.extend(s for s in extra if s)
    model = ("the offline reasoner (classical NLP, no LLM) extracted the triples and query entities and wrote "
             "extractive answers, so answer metrics measure which sentences were copied, not generation"
             if reasoner == "offline" else f"{reasoner} extracted the triples and wrote the answers")
    judge = ("; with no judge, faithfulness and answer relevancy — where the paper reports SKETCH's largest leads — "
             "were not measured" if not judged else "")
    out.append(f"Not the paper's setting: {model}{judge}.")
    decided = span_rows[span_rows["verdict"].isin(["supported", "contradicted"])]   # "cannot be decided" is not
    if len(span_rows):
        ahead = int((span_rows["verdict"] == "supported").sum())
        out.append(f"In sum, on {span} the {n} questions tell {method} apart from {len(decided)} of "
                   f"{len(span_rows)} baselines ({ahead} ahead, {len(decided) - ahead} behind).")
    return " ".join(out)


def chunk_sizes(methods: Mapping[str, object], embedder) -> dict[str, float]:
    """Each method's mean chunk size in word pieces (its ``chunks``: what it can hand over)."""
    out = {}
    for name, r in methods.items():
        chunks = getattr(r, "chunks", None) or []
        if chunks:
            out[name] = sum(embedder.count_tokens(c.text) for c in chunks) / len(chunks)
    return out
