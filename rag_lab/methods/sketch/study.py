"""Notebook 01's sections, each the sequence of lab calls it always makes, returning what it shows.

The notebook narrates, saves and displays; these functions compute. ``worked_example`` walks one
question through SKETCH; ``retrieval_report`` is the teaching set's retrieval and cost tables with
the sentences beside them; ``decided_on`` gives the data SKETCH against each baseline is decided on
(``Decision``: the lead table and the findings); ``beside_paper`` sets our numbers beside the paper's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ...core.figures import save_table
from ...core.plots import left_out_note, per_metric, with_paper
from ...core.types import Dataset
from ...evaluation.decisions import estimand_of
from ...evaluation.findings import finding_sentences
from ...evaluation.harness import build_costs, nan_counts, summarize
from ...evaluation.provenance import caption_reasoners, index_reasoner_name, reasoners_label
from ...evaluation.truncation import encoder_cut, encoder_cut_finding
from ...evaluation.uncertainty import decided_pairs, formatted_summary, interval_frames, question_units, summary_with_ci
from ...evaluation.worked import answer_prompt, worked_answer, worked_hits
from .graph_stores import render_cypher
from .graph_reading import answer_sentence
from .paper import (TABLE_DATASETS, caveats, named_beside_paper, paper_table, ragas_metric_note, setting_note,
                    table_number_for, truncation_sentence, verdict_table)

NO_CYPHER = "(networkx: a breadth-first search in memory, no Cypher)"


def built_by(retriever) -> str:
    """Caption text naming the reasoner that built ``retriever``'s index."""
    return reasoners_label(index_reasoner_name(retriever))


def worked_example(sketch, reasoner, question, k: int, documents) -> dict:
    """One question through a built SKETCH at ``k``: its retrieval, entity matches, the statements the
    graph store ran (parameters written in), the matched nodes' neighbourhood, the merged ranking with
    the gold passages marked, the answer prompt, the answer read against the reference and the graph
    facts it pasted back."""
    ret = sketch.retrieve(question.question, k)
    queries = ret.trace["graph_queries"]
    answer, reading = worked_answer(sketch, reasoner, question, ret)
    return {
        "retrieval": ret,
        "matches": pd.DataFrame(ret.trace["matches"], columns=["entity", "node", "how", "similarity"]).round(3),
        "statements": [render_cypher(s["cypher"], s["parameters"]) for s in queries] or [NO_CYPHER],
        "neighbourhood": sketch.graph.neighbourhood([m["node"] for m in ret.trace["matches"]], sketch.config.hops),
        "merged": pd.DataFrame([{"rank": i + 1, "chunk": h.chunk.id, "source": h.via, "cosine": round(h.score, 3)}
                                for i, h in enumerate(ret.hits)]),
        "gold": worked_hits([h.chunk for h in ret.hits], question, documents),
        "prompt": answer_prompt(sketch, question, ret),
        "answer": answer,
        "reading": reading,
        "answer_sentence": answer_sentence(answer, ret.trace["facts"], reasoner.name),
    }


def retrieval_report(results: pd.DataFrame, methods: Mapping, data: Dataset, k: int, embedder, reasoner: str,
                     judge: str | None, note: str) -> dict:
    """The teaching set's headline retrieval metrics at ``k`` (mean, n and a 95% interval over questions,
    clustered by document), its caption (``note``: RAPTOR's summaries), the build costs, the unscored
    values, and the sentences beside them: estimand, setting, graph radius, encoder truncation."""
    table = summarize(results)
    units = question_units(data)
    headline = [c for c in (f"{m}@{k}" for m in ("doc_mrr", "doc_recall", "ctx_mrr", "ctx_recall", "ctx_precision",
                                                 "ctx_ndcg")) if c in table.columns]
    summary = summary_with_ci(results, headline, units=units)
    costs = build_costs(methods).pivot(index="method", columns="metric", values="value")
    cut = encoder_cut("semantic", [c.text for c in methods["semantic"].chunks], embedder)
    return {
        "units": units,
        "summary": summary,
        "shown": formatted_summary(summary),
        "caption": f"Retrieval on {data.name}: mean [95% interval] over the n questions scored "
                   f"({caption_reasoners(results)}; {note})",
        "costs": costs[["chunks", "build_seconds", "build_embedding_tokens", "build_llm_calls"]],
        "unscored": nan_counts(results).to_dict() or "none",
        "estimand": estimand_of(data),
        "setting": [setting_note(data.name, len(data.documents), len(data.questions), reasoner, judge,
                                 retrieval_table=True),
                    methods["sketch"].config.radius_sentence(), truncation_sentence(methods, embedder),
                    encoder_cut_finding(results, cut, "naive", f"ctx_recall@{k}", units=units)],
    }


def paper_column_metrics(judged: bool, answer_k: int) -> dict[str, str]:
    """Our metric in each of the paper's columns: ragas' context P/R is its string matching without a
    judge and judged with one; answer relevancy and faithfulness need a judge."""
    ragas = "llm" if judged else "nonllm"
    return {**{c: f"{c}@{answer_k}" for c in ("answer_relevancy", "faithfulness")},
            **{c: f"{ragas}_{c}@{answer_k}" for c in ("context_precision", "context_recall")}}


@dataclass
class Decision:
    """The data SKETCH against each baseline is decided on, its approaches and their scored rows."""

    data: Dataset
    methods: dict
    results: pd.DataFrame

    def __post_init__(self):
        self.units = question_units(self.data)     # question -> its document: differences clustered by document
        self.table = summarize(self.results)
        self.estimand = estimand_of(self.data)

    def span_columns(self, k: int) -> dict[str, str]:
        """Notebook 10's span metrics at ``k`` that the deciding data scored, each under its own name."""
        return {c: c for c in (f"{m}@{k}" for m in ("ctx_recall", "ctx_precision", "ctx_mrr", "ctx_ndcg"))
                if c in self.table.columns}

    def pairs(self, columns: Mapping[str, str]) -> pd.DataFrame:
        """SKETCH minus each baseline on ``columns`` (label -> metric@k, those scored), paired by question and
        clustered by document: one declared family recorded in the run's ledger, each row under its label."""
        scored = {c: m for c, m in columns.items() if m in self.table.columns}
        baselines = [("sketch", name) for name in self.methods if name != "sketch"]
        pairs = decided_pairs(self.results, list(scored.values()), baselines,
                              f"sketch minus each baseline on {', '.join(sorted(scored.values()))}",
                              units=self.units, ledger=(self.data.name, ""))
        pairs.insert(2, "column", pairs["metric"].map({m: c for c, m in scored.items()}))
        return pairs

    def lead(self, k: int, answer_k: int, judged: bool) -> dict:
        """The span metrics at ``k``, then (no judge) ragas' string matching at ``answer_k``: the pairs, the
        reader's verdict table, its caption and the findings sentences."""
        strings = {} if judged else {f"string-match context {m}": f"nonllm_context_{m}@{answer_k}"
                                     for m in ("precision", "recall")}
        pairs = self.pairs({**self.span_columns(k), **strings})
        return {"pairs": pairs, "shown": verdict_table(pairs), "sentences": finding_sentences(pairs),
                "caption": f"SKETCH minus each baseline on {self.data.name}: span metrics at k = {k}, then "
                           f"string-match at k = {answer_k}; mean paired difference [95% interval, clustered by "
                           f"document] and verdict ({caption_reasoners(self.results)})"}

    def findings(self, columns: Mapping[str, str], k: int, reasoner: str, judge: str | None, embedder,
                 paper_number: int | None) -> list[str]:
        """What this run found, a sentence a line: SKETCH minus each baseline on the bars' ``columns``, each beside
        the order the paper reported for the pair, the caveats, and the paper's leaders per column."""
        paper = paper_table(paper_number) if paper_number is not None else None
        pairs = self.pairs(columns)
        chunk_tokens = {name: sum(embedder.count_tokens(c.text) for c in r.chunks) / len(r.chunks)
                        for name, r in self.methods.items() if getattr(r, "chunks", None)}   # mean word pieces
        cut = encoder_cut("semantic", [c.text for c in self.methods["semantic"].chunks], embedder)
        found = [f"Findings ({len(self.data.questions)} questions; reasoner: {reasoner}; judge: {judge or 'none'}) on "
                 f"{self.data.name}: sketch minus each baseline, paired by question, span metrics first, each beside "
                 "the order the paper reported for the pair:", *finding_sentences(pairs, name=named_beside_paper(paper))]
        found += caveats(pairs, span=f"ctx_recall@{k}", reasoner=reasoner, judged=judge is not None,
                         chunk_tokens=chunk_tokens,
                         extra=[encoder_cut_finding(self.results, cut, "naive", f"ctx_recall@{k}", units=self.units)])
        if paper is None:
            return found + ["The paper reports nothing for this dataset."]
        top = {c.replace("_", " "): f"{' = '.join(paper.index[paper[c] == paper[c].max()])} ({paper[c].max():.3f})"
               for c in paper.columns}     # the paper's leaders: every method at each column's highest value
        return found + [f"Highest per column, paper-reported Table {paper_number}: "
                        + "; ".join(f"{c}: {t}" for c, t in top.items()) + "."]

def decided_on(decide_on, dataset, data: Dataset, methods: dict, results: pd.DataFrame, knobs: Mapping[str, dict],
               limit=None, **evaluating) -> Decision:
    """The teaching run itself when ``decide_on`` is None or ``dataset``; else ``decide_on`` loaded (its first
    ``limit`` questions) and every approach, fresh with its ``knobs``, built and scored there by
    ``evaluate(..., **evaluating)``."""
    from ...datasets import data_source
    from ...evaluation.harness import evaluate
    from ...evaluation.retrievers import get_retriever

    if decide_on in (None, dataset):
        return Decision(data, methods, results)
    decider = data_source(decide_on).load(limit=limit)
    deciding = {name: get_retriever(name, **kw) for name, kw in knobs.items()}
    return Decision(decider, deciding, evaluate(deciding, decider, **evaluating))


def beside_paper(ours: pd.DataFrame, columns: Mapping[str, str], results: pd.DataFrame, dataset_name: str,
                 judge: str | None, units, note: str, out) -> dict:
    """Our numbers in the paper's columns (``columns``: column -> our metric@k) beside the paper's table for
    this dataset (saved, with every paper table as transcribed, into ``out``): what to print and show."""
    number = table_number_for(dataset_name)
    ragas = "llm" if judge is not None else "nonllm"
    if judge is not None:      # which contexts our context precision/recall columns scored
        scope = ("context P/R judged on the handed-over contexts (SKETCH's and KG-only's facts block included, "
                 "as the paper's judge saw the merged context)")
    else:
        scope = ("context P/R scored on the retrieved chunks of every approach (the facts block SKETCH and KG-only "
                 "hand the answering model is not matched against the gold passages)")
    source = (f"our context P/R = {ragas}_context_precision/{ragas}_context_recall, "
              f"{scope}; {caption_reasoners(results)}; {note}")
    for n in (1, 2, 3, 4):
        save_table(paper_table(n), out, f"paper_table{n}",
                   caption=f"Table {n} ({TABLE_DATASETS[n]}), paper-reported (RAGAS, GPT-3.5 judge)")
    report = {"number": number, "metric_note": ragas_metric_note(judge),
              "paper_tables": {f"Table {n} — {TABLE_DATASETS[n]} (paper-reported)":
                               paper_table(n).rename(columns=lambda c: f"{c} (paper-reported)") for n in (1, 2, 3, 4)}}
    if number is None:
        return {**report, "head": f"The paper reports no table for {dataset_name}; ours ({source}):",
                "shown": ours.round(3), "left_out": ""}
    side = with_paper(ours, paper_table(number), interval_frames(results, columns, units=units),
                      like_for_like=judge is not None and number in (2, 3, 4)).round(3)
    save_table(side, out, f"table{number}_ours_vs_paper",
               caption=f"Table {number} ({TABLE_DATASETS[number]}): ours vs paper-reported ({source})")
    shown, unscored = per_metric(side)     # one block of rows per metric, so the table is shown whole
    return {**report, "shown": shown,
            "head": f"Table {number} — {TABLE_DATASETS[number]}: ours | paper-reported | difference\n("
                    + source.replace("; ", ";\n ") + ")",
            "left_out": left_out_note(unscored, judge, f"their paper-reported numbers are in table{number}_ours_vs_paper.csv")}
