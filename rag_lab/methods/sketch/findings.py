"""The paragraph notebook 01 ends with: what this run's comparisons of SKETCH with each baseline say,
and the caveats each one carries, computed from the run.

``comparisons`` pairs SKETCH with every baseline question by question on each column (difference of
means, its 95% interval, p), all of them one declared family decided by ``uncertainty.decide`` and
recorded in the run's ledger; ``paragraph`` reads that table:

- a difference is called ahead or behind only when its Holm p within the declared family is below 0.05;
  otherwise inconclusive, or "cannot be decided" with the reason ``decide`` gives;
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

from ...evaluation.decisions import copula, dataset_of, family_said, relation, side, verdict_said
from ...evaluation.ledger import recorded
from ...evaluation.statistics import CONTRADICTED, INCONCLUSIVE, SUPPORTED, UNDECIDABLE, format_ci
from ...evaluation.uncertainty import TEST_COLUMNS, Units, decide, paired_on, per_question

COLUMNS = ["method", "baseline", "column", "metric", *TEST_COLUMNS]
STRING_COLUMNS = ("context_precision", "context_recall")
LONG_FACTOR = 2.0     # a method's chunks are "long" when their mean size is at least this many times SKETCH's
# the span-based context metrics (metrics.py), under the names notebook 10's leaderboards use
SPAN_METRICS = ("ctx_recall", "ctx_precision", "ctx_mrr", "ctx_ndcg")
STRING_MATCH = "string-match"   # label of ragas' non-LLM context metrics wherever they are shown


def family_name(metrics: Sequence[str], method: str = "sketch") -> str:
    """The declared family of ``comparisons``: the method minus each baseline on these metric@k columns
    (those compared; sorted, so the same columns name the same family whatever order they come in)."""
    return f"{method} minus each baseline on {', '.join(sorted(set(metrics)))}"


def comparisons(results: pd.DataFrame, columns: Mapping[str, str], method: str = "sketch",
                units: Units | None = None) -> pd.DataFrame:
    """``method`` minus every other method of ``results`` (evaluate's tidy table) on each column
    (``columns``: label -> metric@k), paired by question: ``COLUMNS``, one row per baseline and column
    both were scored on, all of them one declared family (``family_name`` of the columns compared: Holm
    across the rows).
    ``units`` (question id -> its document): clustered by document, as notebook 10. The table is
    recorded in the run's ledger."""
    rows = []
    for label, metric in columns.items():
        table = per_question(results, metric)
        if method not in table.columns:
            continue
        for base in [m for m in table.columns if m != method]:
            d = paired_on(table, method, base, units=units)
            if d.n:
                rows.append({"method": method, "baseline": base, "column": label, "metric": metric, **d.as_dict()})
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    out = decide(pd.DataFrame(rows), family_name([r["metric"] for r in rows], method))
    return recorded(out[[*COLUMNS, *[c for c in out.columns if c not in COLUMNS]]], dataset_of(results, "unnamed"))


def _said(row) -> str:
    reason = verdict_said(row)[len(row["verdict"]):]          # " (why)" for "cannot be decided"
    return f"{row['baseline']} {format_ci(row['diff'], row['ci_low'], row['ci_high'])}{reason}"


def _grouped(rows: pd.DataFrame) -> str:
    """``is ahead of a d [lo, hi]; inconclusive against b ...`` over the rows of one column: the predicate
    after the method's name ("is" before a side, never before "cannot be decided")."""
    parts = []
    for v in (SUPPORTED, CONTRADICTED, INCONCLUSIVE, UNDECIDABLE):
        chosen = rows[rows["verdict"] == v]
        if len(chosen):
            parts.append(f"{copula(v) if not parts else ''}{relation(v)} "
                         + ", ".join(_said(r) for _, r in chosen.iterrows()))
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
    (the comparison's own interval, unadjusted for the family: said in the index's name) and the
    verdict word (Holm within the family), with each column's n in its header."""
    if pairs.empty:
        return pd.DataFrame()
    out = {}
    for col in dict.fromkeys(pairs["column"]):
        rows = pairs[pairs["column"] == col].set_index("baseline")
        ns = sorted({int(v) for v in rows["n"]})
        head = f"{col} (n = {ns[0] if len(ns) == 1 else f'{ns[0]}-{ns[-1]}'})"
        out[head] = {b: f"{format_ci(r['diff'], r['ci_low'], r['ci_high'])} {side(r['verdict'])}" for b, r in rows.iterrows()}
    return pd.DataFrame(out).rename_axis(f"{method} minus (intervals unadjusted; verdicts Holm within the family)")


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
        said = " ".join(f"On {c} {method} {_grouped(rows[rows['column'] == c])}." for c in cols
                        if (rows["column"] == c).any())
        decided = rows[rows["verdict"].isin([SUPPORTED, CONTRADICTED])]
        out.append(f"{head}. {said} {len(decided)} of {len(rows)} differences are decided at 95%.")
    if len(pairs):
        said = family_said(pairs)
        out.append(said[:1].upper() + said[1:] + ".")
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
           "a difference counts as ahead or behind only when its p, Holm-adjusted within the declared family "
           f"\"{table['family'].iloc[0]}\" ({int(table['family_size'].iloc[0])} comparisons), is below 0.05; the "
           "intervals are each comparison's own, unadjusted for the family."]
    span_rows = table[table["column"] == span]
    if len(span_rows):
        out.append(f"On {span} (gold passages found among the top hits, whatever a chunk's length) {method} "
                   + _grouped(span_rows) + ".")
    long = long_chunk_methods(chunk_tokens, method)
    lead_unmatched = []
    for col in [c for c in string_columns if c in set(table["column"])]:
        rows = table[table["column"] == col]
        out.append(f"On {_name(col)} {method} " + _grouped(rows) + ".")
        for _, r in rows[rows["verdict"] == SUPPORTED].iterrows():
            s = span_rows[span_rows["baseline"] == r["baseline"]]
            if r["baseline"] in long and (s.empty or s["verdict"].iloc[0] != SUPPORTED):
                lead_unmatched.append((col, r["baseline"], side(s["verdict"].iloc[0]) if len(s) else "not scored"))
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
    decided = span_rows[span_rows["verdict"].isin([SUPPORTED, CONTRADICTED])]   # "cannot be decided" is not
    if len(span_rows):
        ahead = int((span_rows["verdict"] == SUPPORTED).sum())
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
