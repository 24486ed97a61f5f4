"""UnWeaver's Table 1 (paper-reported) and our run's numbers in the same layout.

The paper's table gives, per dataset and method, Factual Correctness (ragas, mean over 5 runs,
with a second figure describing its spread whose scale the text copy lost) and tokens: LLM prompt
and completion tokens and embedder tokens, each split into the indexing and the querying phase.
``token_usage_table`` fills that layout from a run: indexing = each retriever's ``build_cost``;
querying = what the questions cost (query embeddings from the evaluation rows, and the shared
reasoner's usage while the method was evaluated: query-time reasoner calls plus answer
generation). ``estimated_llm_tokens`` gives what an LLM reasoner *would* be sent, computed
without calling one (the prompts of ``rag_lab.reasoning.prompts`` counted with cl100k_base;
completions as each job's documented allowance) — with the offline reasoner every measured LLM
column is zero, and this shows the cost structure the paper discusses. ``claim_family`` decides the
paper's claim (at least as good as VectorRAG) on our run (``evaluation.findings`` says it); ``caveats`` what
that can show beside the paper's numbers.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...evaluation.decisions import dataset_of, estimand_of
from ...evaluation.findings import finding_sentences
from ...evaluation.ledger import recorded
from ...evaluation.harness import build, combine, evaluate, run_queries, summarize
from ...evaluation.provenance import caption_reasoners
from ...evaluation.retrievers import answer_contexts, available_methods, get_retriever, planned_llm_calls
from ...evaluation.statistics import NON_INFERIORITY_MARGIN, UNDECIDABLE
from ...evaluation.uncertainty import TEST_COLUMNS, Units, decide, paired_on, per_question, question_units, summary_with_ci

from ...core.types import Cost, Dataset
from . import views
from .voting import RULES

TOKEN_COLUMNS = [("LLM prompt", "index"), ("LLM prompt", "query"), ("LLM completion", "index"),
                 ("LLM completion", "query"), ("Embedder", "index"), ("Embedder", "query")]
FC_COLUMNS = [("FC", "mean"), ("FC", "spread (as printed)")]
_NA = math.nan

# Table 1 of the paper, tokens in thousands as printed ("-": not applicable / not produced).
# RAPTOR has no Tech-QA row: the authors report GMM numerical instability there.
_PAPER_ROWS = [
    ("COVID-QA", 1234, "UnWeaver", 0.3823, 1.32, 1466, 994, 4043, 230, 2224, 17),
    ("COVID-QA", 1234, "VectorRAG", 0.3790, 6.02, _NA, 922, _NA, 359, 476, 17),
    ("COVID-QA", 1234, "RAPTOR", 0.3643, 8.04, 770, 2649, 389, 305, 730, 17),
    ("COVID-QA", 1234, "GraphRAG", 0.3092, 3.66, 25882, 7051, 14239, 282, 20455, 17),
    ("eManual", 522, "UnWeaver", 0.4811, 2.47, 98, 940, 198, 96, 105, 5.7),
    ("eManual", 522, "VectorRAG", 0.4793, 2.16, _NA, 343, _NA, 83, 36, 5.7),
    ("eManual", 522, "RAPTOR", 0.4466, 2.17, 57, 1177, 30, 115, 60, 5.7),
    ("eManual", 522, "GraphRAG", 0.3424, 5.87, 1428, 3266, 687, 112, 1063, 5.7),
    ("Tech-QA", 596, "UnWeaver", 0.3135, 7.54, 3747, 2384, 4446, 158, 2411, 55),
    ("Tech-QA", 596, "VectorRAG", 0.3218, 7.86, _NA, 2354, _NA, 161, 3026, 55),
    ("Tech-QA", 596, "RAPTOR", _NA, _NA, _NA, _NA, _NA, _NA, _NA, _NA),
    ("Tech-QA", 596, "GraphRAG", 0.2847, 4.19, 49270, 5944, 35704, 163, 54016, 55),
]
# our method names -> the paper's row they re-implement. Our "kg" is SKETCH's KG-only retriever, not
# Microsoft's GraphRAG, so it is labelled as what it is and set beside no paper row
PAPER_NAMES = {"unweaver": "UnWeaver", "naive": "VectorRAG", "raptor": "RAPTOR"}
OWN_LABELS = {"kg": "kg (SKETCH's KG-only, not GraphRAG: no paper row to compare)"}


def paper_table1() -> pd.DataFrame:
    """Table 1 as reported in the paper; token columns in tokens (the paper prints thousands)."""
    index = pd.MultiIndex.from_tuples([(f"{d} ({n} questions)", m) for d, n, m, *_ in _PAPER_ROWS],
                                      names=["dataset", "method"])
    values = [[fc, spread, *(round(v * 1000) if v == v else v for v in tokens)] for _, _, _, fc, spread, *tokens in _PAPER_ROWS]
    return _integer_tokens(pd.DataFrame(values, index=index, columns=pd.MultiIndex.from_tuples(FC_COLUMNS + TOKEN_COLUMNS)))


def _integer_tokens(table: pd.DataFrame) -> pd.DataFrame:
    """Token columns as nullable integers (counts, with NaN where the paper prints "-")."""
    return table.astype({c: "Int64" for c in table.columns if c in TOKEN_COLUMNS})


def paper_fc_gap() -> pd.Series:
    """UnWeaver's FC minus VectorRAG's, per dataset, as the paper reports them."""
    fc = paper_table1()[("FC", "mean")]
    t = fc.unstack("method").reindex(list(dict.fromkeys(fc.index.get_level_values("dataset"))))
    return (t["UnWeaver"] - t["VectorRAG"]).rename("UnWeaver - VectorRAG (FC)")


def _by_method(dataset_label: str, rows: Mapping[str, list], columns: list[tuple]) -> pd.DataFrame:
    """One row a method under ``dataset_label``, in the paper layout's index and ``columns``: the frame both
    of this run's token tables share."""
    index = pd.MultiIndex.from_tuples([(dataset_label, name) for name in rows], names=["dataset", "method"])
    return _integer_tokens(pd.DataFrame(list(rows.values()), index=index, columns=pd.MultiIndex.from_tuples(columns)))


def token_usage_table(retrievers: Mapping[str, object], df: pd.DataFrame, query_usage: Mapping[str, Cost],
                      dataset_label: str) -> pd.DataFrame:
    """This run in the paper's layout: rows (dataset, method), FC and token columns (tokens summed
    over all questions). FC is the mean ragas factual_correctness when the run had a judge, else NaN."""
    rows = {}
    for name, r in retrievers.items():
        b, q = r.build_cost, query_usage.get(name, Cost())
        own = df[df["method"] == name]
        fc = own[own["metric"] == "factual_correctness"]["value"]
        query_embedding = float(own[own["metric"] == "query_embedding_tokens"]["value"].sum())
        rows[name] = [float(fc.mean()) if len(fc) else _NA, _NA,
                      b.llm_prompt_tokens, q.llm_prompt_tokens, b.llm_completion_tokens, q.llm_completion_tokens,
                      b.embedding_tokens, query_embedding]
    return _by_method(dataset_label, rows, FC_COLUMNS + TOKEN_COLUMNS)


def estimated_llm_tokens(retrievers: Mapping[str, object], dataset: Dataset, answer_k: int = 5,
                         dataset_label: str | None = None) -> pd.DataFrame:
    """LLM tokens an LLM reasoner would be sent, computed without one: indexing = the method's planned
    reasoner calls (``planned_llm_calls``, as ``python -m rag_lab estimate`` counts them); querying =
    the shared answer prompt over each question's top ``answer_k`` contexts (the generator call the
    paper's query columns include), completions as the documented per-call allowance. Query-time
    reasoner calls a method makes besides the answer are not included."""
    from ...reasoning.estimate import estimate_calls
    from ...reasoning.prompts import ANSWER
    from ...reasoning.tokens import count_message_tokens

    results = run_queries(dict(retrievers), dataset, answer_k, progress=False)
    rows = {}
    for name, r in retrievers.items():
        planned = estimate_calls(planned_llm_calls(r, dataset.documents))
        prompt_q = sum(count_message_tokens(ANSWER.messages(question=q.question,
                                                            contexts=answer_contexts(r, results[name][q.id])))
                       for q in dataset.questions)
        rows[name] = [sum(p["prompt_tokens"] for p in planned), prompt_q,
                      sum(p["est_completion_tokens"] for p in planned),
                      ANSWER.completion_allowance * len(dataset.questions)]
    return _by_method(dataset_label or dataset.name, rows, TOKEN_COLUMNS[:4])


def beside_paper(ours: pd.DataFrame, ours_label: str) -> pd.DataFrame:
    """Our rows and the paper's Table 1 stacked under a first index level saying whose they are."""
    paper = paper_table1()
    ours = ours.reindex(columns=paper.columns)
    ours = ours.rename(index=lambda m: f"{m} (cf. {PAPER_NAMES[m]})" if m in PAPER_NAMES else OWN_LABELS.get(m, m),
                       level="method")
    return _integer_tokens(pd.concat({ours_label: ours, "paper-reported": paper}, names=["source"]))


def load_available(names: Sequence[str], limit: int | None = None, ragbench_max_rows: int | None = None
                   ) -> tuple[list[Dataset], list[str]]:
    """The datasets that can be loaded here and have questions, and a note for each one skipped
    (a public dataset with no local copy says where to put one)."""
    from ...datasets import data_source

    kept, notes = [], []
    for value in names:
        source = data_source(value)          # a name, a generic-form folder or a loader with arguments
        name = source.label
        extra = {"max_rows": ragbench_max_rows} if name.startswith("ragbench_") and ragbench_max_rows else {}
        try:
            data = source.load(extra, limit=limit)
        except FileNotFoundError as e:
            notes.append(f"{name}: skipped, no local copy.\n" + textwrap.fill(str(e), 160, initial_indent="  ", subsequent_indent="  ",
                                                                             break_long_words=False, break_on_hyphens=False))
            continue
        if not data.questions:
            notes.append(f"{name}: skipped, it has no questions")
            continue
        kept.append(data)
    return kept, notes


def compare_with_baselines(dataset: Dataset, unweaver, baselines: Sequence[str], reasoner=None, embedder=None,
                           ks: Sequence[int] = (1, 3, 5, 10), judge=None, answer_k: int = 5,
                           other_rules: Sequence[str] = ()) -> dict:
    """UnWeaver (built here if it is not), its other voting rules on the same index, and every
    baseline in ``baselines`` that is registered, evaluated on ``dataset`` with the shared reasoner,
    one method at a time (built first, so building is not counted) so that the reasoner's usage while
    each was queried and answered is its own (the query-phase LLM tokens of the paper's table).
    Returns the tidy rows, this run's token table (paper layout), the estimated LLM tokens, the
    retrievers, and the baselines left out because no method of that name is registered."""
    if not unweaver.chunks:
        build(unweaver, dataset.documents)
    retrievers = {"unweaver": unweaver}
    for rule in other_rules:
        retrievers[f"unweaver-{rule}"] = unweaver.variant(name=f"unweaver-{rule}", rule=rule)
    missing = [b for b in baselines if b not in available_methods()]
    shared = {key: v for key, v in (("reasoner", reasoner), ("embedder", embedder)) if v is not None}
    for name in baselines:
        if name not in missing:
            retrievers[name] = get_retriever(name, **shared)   # every method's reasoner calls counted on one object
    frames, usage = [], {}
    for name, retriever in retrievers.items():
        if not retriever.chunks:
            build(retriever, dataset.documents)
        before = reasoner.usage.copy() if reasoner is not None else None
        frames.append(evaluate({name: retriever}, dataset, ks, reasoner=reasoner, judge=judge, answer_k=answer_k,
                               progress=False))
        usage[name] = reasoner.usage_since(before) if reasoner is not None else Cost()
    df = combine(frames)
    label = f"{dataset.name} ({len(dataset.questions)} questions)"
    return {"results": df, "tokens": token_usage_table(retrievers, df, usage, label),
            "estimated": estimated_llm_tokens(retrievers, dataset, answer_k, label),
            "retrievers": retrievers, "missing": missing}


@dataclass
class Evaluation:
    """Notebook 02's comparison with the baselines on every data set it could load: per data set the run
    (``compare_with_baselines``), its means (``summarize``) and 95% intervals, clustered by document."""
    datasets: list
    notes: list[str]
    runs: dict[str, dict]
    columns: list[str]
    units: dict[str, dict]
    summaries: dict[str, pd.DataFrame]
    intervals: dict[str, pd.DataFrame]

    @property
    def missing(self) -> list[str]:
        """The baselines no method of that name is registered for, on any data set."""
        return sorted({m for r in self.runs.values() for m in r["missing"]})

    @property
    def estimands(self) -> list[str]:
        """What every interval speaks of, a sentence per data set (``decisions.estimand_of``)."""
        return [estimand_of(d) for d in self.datasets]

    @property
    def label(self) -> str:
        """The reasoners behind every data set's rows (``provenance.caption_reasoners``)."""
        return caption_reasoners(*[r["results"] for r in self.runs.values()])


def evaluation(names: Sequence[str], unweaver, dataset: str, baselines: Sequence[str], reasoner, embedder,
               ks: Sequence[int], judge, k: int, limit: int | None = None, ragbench_max_rows: int | None = None) -> Evaluation:
    """Every data set of ``names`` that loads here (``load_available``), UnWeaver with its other rules and the
    registered ``baselines`` evaluated on it. ``unweaver`` is reused on ``dataset`` (its documents); every
    other data set gets a fresh index with the same knobs. Means and intervals are of the retrieval metrics at
    ``k`` and the answer metrics, those scored."""
    datasets, notes = load_available(names, limit, ragbench_max_rows)
    knobs = unweaver.config.as_dict()
    others = [r for r in RULES if r != unweaver.config.rule]
    runs = {}
    for d in datasets:
        index = unweaver if d.name == dataset else get_retriever("unweaver", reasoner=reasoner, embedder=embedder, **knobs)
        runs[d.name] = compare_with_baselines(d, index, baselines, reasoner, embedder, ks, judge, k, other_rules=others)
    summaries = {name: summarize(r["results"]) for name, r in runs.items()}
    answer = [f"{m}@{k}" for m in ("token_f1", "rouge_l", "string_similarity", "nonllm_context_recall", "factual_correctness")]
    wanted = [f"doc_mrr@{k}", f"ctx_mrr@{k}", f"ctx_recall@{k}", f"ctx_precision@{k}", f"ctx_ndcg@{k}"] + answer
    columns = [c for c in wanted if any(c in s.columns for s in summaries.values())]
    units = {d.name: question_units(d) for d in datasets}
    intervals = {name: summary_with_ci(r["results"], columns, units=units[name]) for name, r in runs.items()}
    return Evaluation(datasets, notes, runs, columns, units, summaries, intervals)


def shown_tokens(tokens: pd.DataFrame, judge: str | None, reasoner: str) -> tuple[pd.DataFrame, str]:
    """The token table as shown: without the FC columns no judge filled and the LLM columns that are 0 for every
    method (no LLM ran), and the lines naming what was left out ("" when nothing was)."""
    unscored = [c for c in tokens.columns if tokens[c].isna().all()]
    zero = [c for c in tokens.columns if c not in unscored and (tokens[c] == 0).all()]
    said = ""
    if unscored:
        said += (f"Left out above, with no score of ours in this run (judge: {judge or 'none'}): "
                 f"{', '.join(dict.fromkeys(c[0] for c in unscored))}; the column stays in token_usage.csv.\n")
    if zero:
        said += (f"Left out above, 0 for every method with the {reasoner} reasoner: {', '.join(' · '.join(c) for c in zero)}; "
                 "the next table estimates what an LLM reasoner would be sent.\n")
    return tokens.drop(columns=unscored + zero), said


def findings(ev: Evaluation, decide_on: Sequence[str], k: int, reasoner: str, judged: bool) -> list[str]:
    """What notebook 02's run found, a paragraph a data set of ``decide_on`` (``claim_family``, said by
    ``evaluation.findings``) and the ``caveats``; the others are said to be described only."""
    agreement = {d.name: views.rule_agreement(ev.runs[d.name]["retrievers"]["unweaver"], d.questions, k, RULES)
                 for d in ev.datasets}   # approval, PAV and CC on the same index, per question
    results = {name: r["results"] for name, r in ev.runs.items() if name in decide_on}
    described = [name for name in ev.runs if name not in results]
    out = []
    if described:
        out.append(f"Not decided on {', '.join(described)} (not in decide_on: too few documents to decide); their means are in "
                   "the evaluation table.")
    families = {name: claim_family(df, k, k, ev.units.get(name), name) for name, df in results.items()}
    for name, family in families.items():
        if len(family):
            out.append("\n  ".join([f"On {name} (n = {int(family['n'].max())} questions) UnWeaver minus VectorRAG (naive); at "
                                    f"least as good as VectorRAG on context recall@{k} is the paper's claim, the threshold row:",
                                    *finding_sentences(family)]))
    tokens = pd.concat([r["tokens"] for r in ev.runs.values()])
    return out + caveats(families, k, reasoner, judged, tokens, {n: agreement[n] for n in results})


def claim_family(results: pd.DataFrame, k: int, answer_k: int, units: Units | None = None,
                 dataset: str = "") -> pd.DataFrame:
    """UnWeaver minus VectorRAG (naive) on one data set as one declared family: the retrieval metrics at k,
    the answer metrics at ``answer_k`` (those scored) and the paper's claim — at least as good on context
    recall@k, a non-inferiority test at ``-NON_INFERIORITY_MARGIN`` — paired by question, clustered by
    document with ``units``, Holm across the rows (``uncertainty.decide``) and recorded in the run's
    ledger. Empty when the two were not both scored."""
    rows = []
    columns = [(f"{m}@{k}", 0.0) for m in ("doc_mrr", "ctx_recall", "ctx_precision")] + \
              [(f"{m}@{answer_k}", 0.0) for m in ("token_f1", "rouge_l", "factual_correctness")] + \
              [(f"ctx_recall@{k}", -NON_INFERIORITY_MARGIN)]
    for column, threshold in columns:
        table = per_question(results, column)
        if "unweaver" not in table.columns or "naive" not in table.columns:
            continue
        d = paired_on(table, "unweaver", "naive", threshold, units)
        if d.n:
            rows.append({"method": "unweaver", "baseline": "naive", "metric": column, **d.as_dict()})
    if not rows:
        return pd.DataFrame(columns=["method", "baseline", "metric", *TEST_COLUMNS])
    name = dataset or dataset_of(results, "unnamed")
    family = f"unweaver minus naive on {name}: each metric, and at least as good on ctx_recall@{k} (margin {NON_INFERIORITY_MARGIN})"
    return recorded(decide(pd.DataFrame(rows), family), name)


def caveats(families: Mapping[str, pd.DataFrame], answer_k: int, reasoner: str, judged: bool,
            tokens: pd.DataFrame | None = None, agreement: Mapping[str, Mapping[str, int]] | None = None) -> list[str]:
    """What the findings (``families``: data set -> its ``claim_family``, said by ``evaluation.findings``) can
    and cannot show beside the paper: the widths of the context-recall intervals that can decide against the
    paper-reported factual-correctness gap, what the reasoner's answers are, the judge, the rules' agreement
    (``agreement``: data set -> ``rule_agreement``), UnWeaver's index cost against VectorRAG's (``tokens``, the
    paper layout) and the paper's own gap; a sentence each."""
    gap = paper_fc_gap().dropna()
    widths = [r["ci_high"] - r["ci_low"] for f in families.values() if len(f)
              for _, r in f[(f["metric"].str.startswith("ctx_recall@")) & (f["threshold"] == 0)].iterrows()
              if r["verdict"] != UNDECIDABLE and not np.isnan(r["ci_high"] - r["ci_low"])]
    span = (f"the context-recall intervals here are {min(widths):.2f} to {max(widths):.2f} wide" if widths
            else "no context-recall comparison here can be decided")
    seen = "might be told from zero" if widths and min(widths) <= 2 * gap.abs().max() else "could not be told from zero"
    out = [f"Caveats: {span}, so a difference the size of the paper-reported one (UnWeaver minus VectorRAG at "
           f"most {gap.abs().max():.4f} in factual correctness, another metric) {seen} with this many questions."]
    if reasoner == "offline":
        out.append("The offline reasoner's entity descriptions are sentences copied from the chunks and its answers are "
                   f"extractive, so token F1 and ROUGE-L at {answer_k} score copied sentences by string overlap with the reference, "
                   "not generated answers.")
    if not judged:
        out.append("The paper's measure, ragas' factual correctness, needs a judge and was not computed.")
    said = [views.agreement_sentence(name, a) for name, a in (agreement or {}).items() if a.get("questions")]
    out += [line[0].upper() + line[1:] + "." for line in said]
    if tokens is not None and len(tokens):
        emb_paper = paper_table1()[("Embedder", "index")].astype(float).rename(None)
        paper_emb = emb_paper.unstack("method").reindex(list(dict.fromkeys(emb_paper.index.get_level_values("dataset"))))
        paper_ratio = ", ".join(f"{r['UnWeaver'] / r['VectorRAG']:.1f}x on {d.split(' (')[0]}" for d, r in paper_emb.iterrows())
        emb = tokens[("Embedder", "index")]
        for ds in dict.fromkeys(tokens.index.get_level_values("dataset")):
            if (ds, "unweaver") in emb.index and (ds, "naive") in emb.index and emb[(ds, "naive")] > 0:
                out.append(f"{ds}: UnWeaver's index cost {emb[(ds, 'unweaver')] / emb[(ds, 'naive')]:.1f}x the embedder "
                           f"tokens of VectorRAG's (paper-reported: {paper_ratio}).")
    out.append("Paper-reported (Table 1, factual correctness with GPT-oss-120B): UnWeaver minus VectorRAG = "
               + ", ".join(f"{v:+.4f} on {d.split(' (')[0]}" for d, v in gap.items())
               + f" — at most {gap.abs().max():.4f} either way, UnWeaver ahead on {int((gap > 0).sum())} of {len(gap)}.")
    return out
