"""The SKETCH paper's reported numbers and what notebook 01 says beside them (``study.py`` calls these):
``verdict_table`` shows SKETCH minus each baseline, ``named_beside_paper`` adds the order the paper reported
for each pair, ``caveats`` says what the comparison can show beside the paper.

Paper-reported values are Tables 1-4 of Mahalingam et al., "SKETCH: Structured Knowledge Enhanced
Text Comprehension for Holistic Retrieval", transcribed by hand: RAGAS answer relevancy,
faithfulness, context precision and context recall judged by GPT-3.5-turbo-16k, and the F1 of
context precision and recall. (In the NarrativeQA discussion the paper's text gives RAPTOR an
answer relevancy of 0.47, its Table 4 0.10; we keep the table's value.)

Our numbers in the paper's columns are a few lines of pandas in notebook 01 (``study.paper_column_metrics``
names the metric of each column); F1 is the harmonic mean of the two means, as in the paper's tables.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import pandas as pd

from ...evaluation.decisions import side
from ...evaluation.findings import name_of
from ...evaluation.statistics import CONTRADICTED, SUPPORTED, UNDECIDABLE, format_ci


PAPER_COLUMNS = ["answer_relevancy", "faithfulness", "context_precision", "context_recall", "f1"]
METHOD_ORDER = ["naive", "semantic", "kg", "raptor", "sketch"]
PAPER_NAMES = {"naive": "Naive RAG", "semantic": "Semantic", "kg": "KG", "raptor": "RAPTOR", "sketch": "SKETCH"}

_ROWS = {  # table -> method -> (answer relevancy, faithfulness, context precision, context recall, F1)
    1: {"naive": (0.61, 1.00, 0.81, 0.88, 0.84), "semantic": (0.84, 0.86, 0.92, 0.83, 0.87),
        "kg": (0.94, 0.21, 0.77, 0.33, 0.46), "raptor": (0.75, 0.73, 0.38, 0.71, 0.50),
        "sketch": (0.94, 0.87, 0.99, 0.72, 0.83)},
    2: {"naive": (0.49, 0.83, 0.04, 0.22, 0.07), "raptor": (0.63, 0.48, 0.26, 0.14, 0.18),
        "semantic": (0.07, 0.80, 0.003, 0.07, 0.01), "kg": (0.27, 0.43, 0.23, 0.17, 0.20),
        "sketch": (0.73, 0.69, 0.31, 0.23, 0.26)},
    3: {"naive": (0.28, 0.61, 0.28, 0.43, 0.34), "raptor": (0.27, 0.62, 0.27, 0.44, 0.33),
        "semantic": (0.27, 0.62, 0.29, 0.43, 0.35), "kg": (0.49, 0.61, 0.71, 0.60, 0.65),
        "sketch": (0.56, 0.93, 0.67, 0.49, 0.57)},
    4: {"naive": (0.08, 0.09, 0.10, 0.05, 0.07), "raptor": (0.10, 0.46, 0.30, 0.16, 0.21),
        "semantic": (0.10, 0.51, 0.004, 0.14, 0.01), "kg": (0.47, 0.72, 0.58, 0.47, 0.52),
        "sketch": (0.50, 0.87, 0.51, 0.46, 0.48)},
}
TABLE_DATASETS = {1: "Italian Cuisine", 2: "QuALITY", 3: "QASPER", 4: "NarrativeQA"}
_DATASET_PREFIXES = {"italian_cuisine": 1, "quality": 2, "qasper": 3, "narrativeqa": 4}
# what each table was run on, as the paper describes it (§3.3, §4)
PAPER_DATA = {1: "own Italian Cuisine corpus (three files, about 6,000 tokens, 9 test questions made with RAGAS)",
              2: "QuALITY (its §3.3 says the training set, about 2,090 entries; its §4.2 calls it the validation set)",
              3: "QASPER validation set (281 entries)", 4: "NarrativeQA validation set (about 3,460 entries)"}
PAPER_MODELS = ("GPT-4 named the query entities and an LLM built the graph and wrote the answers; "
                "GPT-3.5-turbo-16k judged all four RAGAS metrics")


def paper_table(number: int) -> pd.DataFrame:
    """Table ``number`` (1-4) of the paper, rows = our method names in a fixed order."""
    if number not in _ROWS:
        raise ValueError(f"the SKETCH paper has Tables 1-4 of results, not {number!r}")
    rows = _ROWS[number]
    return pd.DataFrame([rows[m] for m in METHOD_ORDER], index=METHOD_ORDER, columns=PAPER_COLUMNS)


def table_number_for(dataset_name: str) -> int | None:
    """Which paper table reports the dataset (``qasper-dev`` -> 3); None for datasets the paper did not use."""
    for prefix, number in _DATASET_PREFIXES.items():
        if dataset_name == prefix or dataset_name.startswith(prefix + "-"):
            return number
    return None


def setting_note(dataset_name: str, n_documents: int, n_questions: int, reasoner: str, judge: str | None,
                 retrieval_table: bool = False) -> str:
    """One sentence saying how this run's setting differs from the paper's, for the data, the
    metric and the model, from the run's own parameters. ``retrieval_table``: for a table of our
    retrieval metrics, which the paper does not report at all."""
    number = table_number_for(dataset_name)
    ours = f"{dataset_name} ({n_documents} documents, {n_questions} questions)"
    if number is None:
        data = f"{ours} is none of the paper's datasets"
    elif number == 1:
        data = f"{ours} was written for rag_lab after the paper's {PAPER_DATA[1]}; it is not the same text"
    else:
        data = f"{ours} against the paper's {PAPER_DATA[number]}"
    metric = ("the paper reports no retrieval metrics; document and gold-passage metrics at k are ours" if retrieval_table
              else ragas_metric_note(judge))
    if reasoner == "offline":
        model = ("the offline reasoner (classical NLP, no LLM) extracts the triples and query entities, writes "
                 "RAPTOR's summaries (extractive) and the answers")
    else:
        model = f"{reasoner} does every LLM job"
    return (f"Not like-for-like with the paper —\n  data: {data};\n  metric: {metric};\n  model: {model} "
            f"(paper: {PAPER_MODELS}).")


def ragas_metric_note(judge: str | None) -> str:
    """How this run's RAGAS columns are scored against the paper's GPT-3.5-turbo-16k judge: the one part of
    ``setting_note`` that differs between the retrieval table and the paper's tables."""
    if judge:
        return f"all four RAGAS metrics are judged by {judge}, not by GPT-3.5-turbo-16k"
    return ("with no judge configured, context precision and recall are ragas' non-LLM string matching of "
            "retrieved against gold passages, and faithfulness and answer relevancy are not computed")


def named_beside_paper(paper: pd.DataFrame | None) -> Callable[[Mapping], str]:
    """How a finding names a row of SKETCH minus a baseline (``evaluation.findings.finding_sentences``' ``name``): ``sketch -
    naive on nonllm_context_precision@5``, then, for a paper column, the order the paper reported for the same pair
    (``(paper-reported 0.99 vs 0.81, ahead)``); ``paper`` None: the name alone."""
    def name(row: Mapping) -> str:
        col, method, base = row["column"], row["method"], row["baseline"]
        said = name_of(row)
        if paper is None or col not in paper.columns or base not in paper.index or method not in paper.index:
            return said
        pa, pb = paper.loc[method, col], paper.loc[base, col]
        return f"{said} (paper-reported {pa:.2f} vs {pb:.2f}, {'level' if pa == pb else 'ahead' if pa > pb else 'behind'})"
    return name


def truncation_sentence(methods, embedder) -> str:
    """Beside the retrieval table: per approach, how many of the texts it embeds are longer than the
    encoder reads (it cuts them silently at ``max_tokens`` word pieces, so a long semantic segment is
    represented by its opening only). KG-only embeds no chunk."""
    from ...core.chunking import over_encoder_limit

    parts = []
    for name, r in methods.items():
        if not getattr(r, "uses_vectors", True):
            continue
        over, total = over_encoder_limit((c.text for c in r.chunks), embedder)
        parts.append(f"{name} {over} of {total}")
    return (f"Texts longer than the encoder reads ({embedder.max_tokens} word pieces with its two special tokens; "
            "each is embedded from its opening only): " + ", ".join(parts) + ".")


STRING_COLUMNS = ("context_precision", "context_recall")
LONG_FACTOR = 2.0     # a method's chunks are "long" when their mean size is at least this many times SKETCH's


def verdict_table(pairs: pd.DataFrame, method: str = "sketch") -> pd.DataFrame:
    """SKETCH minus each baseline (``uncertainty.decided_pairs``' rows with a ``column`` label) as a reader's
    table: one row per baseline, per column ``diff [low, high]`` (the comparison's own interval, unadjusted for the family: said in the index's name) and the
    verdict word (Holm within the family), with each column's n in its header."""
    if pairs.empty:
        return pd.DataFrame()
    out = {}
    for col in dict.fromkeys(pairs["column"]):
        rows = pairs[pairs["column"] == col].set_index("baseline")
        ns = sorted({int(v) for v in rows["n"]})
        head = f"{col} (n = {ns[0] if len(ns) == 1 else f'{ns[0]}-{ns[-1]}'})"
        out[head] = {b: f"{format_ci(r['diff'], r['ci_low'], r['ci_high'])} {side(r['verdict'])}"
                     for b, r in rows.iterrows() if r["verdict"] != UNDECIDABLE}      # undecided: no numbers shown
    table = pd.DataFrame(out).dropna(axis=1, how="all").dropna(axis=0, how="all").fillna("")
    return table.rename_axis(f"{method} minus (intervals unadjusted; verdicts Holm within the family)")


def caveats(table: pd.DataFrame, *, span: str, reasoner: str, judged: bool, chunk_tokens: Mapping[str, float],
            method: str = "sketch", string_columns: Sequence[str] = STRING_COLUMNS, extra: Sequence[str] = ()) -> list[str]:
    """What SKETCH minus each baseline (said by ``evaluation.findings``) can and cannot show beside the paper, a
    sentence each: the string-match columns as what they are, with this run's chunk sizes (``chunk_tokens``:
    mean word pieces per method) and any lead on them over long chunks that the span column ``span``
    (ctx_recall@k) does not share; ``extra`` (the encoder cut of semantic chunks); the setting; and how many
    baselines the questions tell apart on ``span``. [] for an empty table."""
    if table.empty:
        return []
    span_rows = table[table["column"] == span]
    own = chunk_tokens.get(method, math.nan)     # long chunks: a mean size at least LONG_FACTOR times ``method``'s
    long = [m for m, t in chunk_tokens.items() if m != method and not math.isnan(own) and t >= LONG_FACTOR * own]
    out, lead_unmatched = [], []
    for col in [c for c in string_columns if c in set(table["column"])]:
        for _, r in table[(table["column"] == col) & (table["verdict"] == SUPPORTED)].iterrows():
            s = span_rows[span_rows["baseline"] == r["baseline"]]
            if r["baseline"] in long and (s.empty or s["verdict"].iloc[0] != SUPPORTED):
                lead_unmatched.append((col, r["baseline"], side(s["verdict"].iloc[0]) if len(s) else "not scored"))
    if any(c in set(table["column"]) for c in string_columns):
        sizes = ", ".join(f"{m} {t:.0f}" for m, t in chunk_tokens.items())
        text = (f"Caveat: {' and '.join(c.replace('_', ' ') for c in string_columns)} are ragas' non-LLM string matching "
                "of retrieved against gold passages, which favours contexts about as long as the gold sentences and "
                f"penalises long chunks (mean chunk size here, word pieces: {sizes})")
        if lead_unmatched:
            text += ("; so " + "; ".join(f"the lead on {c.replace('_', ' ')} over {b}, whose chunks are long, is not a "
                                         f"lead on {span} (there: {side})" for c, b, side in lead_unmatched)
                     + " — it measures chunk length more than retrieval")
        out.append(text + ".")
    out.extend(s for s in extra if s)
    model = ("the offline reasoner (classical NLP, no LLM) extracted the triples and query entities and wrote "
             "extractive answers, so answer metrics measure which sentences were copied, not generation"
             if reasoner == "offline" else f"{reasoner} extracted the triples and wrote the answers")
    judge = ("; with no judge, faithfulness and answer relevancy — where the paper reports SKETCH's largest leads — "
             "were not measured" if not judged else "")
    out.append(f"Not the paper's setting: {model}{judge}.")
    if len(span_rows):
        decided = span_rows[span_rows["verdict"].isin([SUPPORTED, CONTRADICTED])]   # "cannot be decided" is not
        ahead = int((span_rows["verdict"] == SUPPORTED).sum())
        ns = sorted({int(v) for v in span_rows["n"]})
        n = str(ns[0]) if len(ns) == 1 else f"{ns[0]} to {ns[-1]}"
        out.append(f"In sum, on {span} the {n} questions tell {method} apart from {len(decided)} of "
                   f"{len(span_rows)} baselines ({ahead} ahead, {len(decided) - ahead} behind).")
    return out
