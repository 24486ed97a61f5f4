"""What each section of notebook 04 shows, computed from the runs: one function a section (Tables 1–2,
Tables 4–5, the evidence paragraphs, Table 6, the λ ablation, the closing findings) runs its comparisons in
the order the ledger files them and returns its tables, figures and the sentences said about them, so the
notebook only saves and shows them. Every sentence is written from the numbers beside it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...core.plots import per_metric
from ...evaluation.decisions import HOW_DECIDED, estimand_of
from ...evaluation.findings import finding_sentences, inside_said
from ...evaluation.retrievers import get_retriever
from ...evaluation.statistics import SUPPORTED, decided
from ...evaluation.uncertainty import decided_pairs, pairwise_differences
from ...evaluation.worked import worked_comparison
from ...reasoning import get_reasoner
from . import experiment as ex
from . import paper
from . import plots as pg
from . import tables as tb
from .encoding import encode_document
from .gradient import is_abstract
from .sentences import contrast_sentences, cs_sentence, lambda_sentences

LONG_CONDITIONS = ("introduction", "partial", "full")


def ran(runs: Mapping[str, ex.Run], wanted: str | None) -> str:
    """``wanted`` when that condition ran, else the first that did (the worked example and Table 6 fall back
    to the texts the data has)."""
    if not runs:
        raise ValueError("runs is empty: no length condition ran (experiment.length_gradient found no article "
                         "with the sections any condition needs); expected at least one condition")
    return wanted if wanted in runs else next(iter(runs))


def boundary_figure(doc, params: Mapping[str, dict]):
    """The boundary-score trace of gralc-structure over one document, built on it alone, with the token
    positions where its sections and subsections start."""
    tracer = ex.build(get_retriever("gralc-structure", **params["gralc-structure"]), [doc])
    trace = tracer.boundary_trace(doc).as_frame()
    enc = encode_document(doc.text, tracer.embedder, overlap=tracer.config.window_overlap,
                          use_cache=tracer.config.cache_tokens)
    markers = pd.DataFrame([{"token": int(np.searchsorted(enc.offsets[:, 0], s.start)), "kind": s.kind,
                             "title": s.title or s.id}
                            for s in doc.sections if s.kind in ("section", "subsection")])
    title = f"Boundary score over {doc.id} ({len(trace)} tokens, {len(tracer.chunks)} chunks)"
    return pg.boundary_trace(trace, markers, tracer.config.tau, alphas=tracer.config.alphas, title=title)


@dataclass
class ShortTexts:
    """Tables 1–2 and Figures 2–4 on the short texts: ``means`` (strategies x Table 1's columns) with
    ``intervals``, ``table1`` beside the paper printed long, ``order`` every pair on MRR, ``table2`` the
    ablation beside the paper and the sentences said under each."""

    run: ex.Run = field(repr=False)
    condition: str
    setting: str
    like_for_like: bool
    estimand: str
    ks: list[int]
    columns: dict[str, str]
    intervals: dict[str, pd.DataFrame] = field(repr=False)
    side: pd.DataFrame = field(repr=False)
    table1: pd.DataFrame = field(repr=False)
    order: pd.DataFrame = field(repr=False)
    said: list[str]
    table2: pd.DataFrame = field(repr=False)
    ablation_rows: pd.DataFrame = field(repr=False)
    said_ablation: list[str]
    figures: dict = field(repr=False)

    @property
    def means(self) -> pd.DataFrame:
        return self.intervals["ours"]


def short_texts(runs: Mapping[str, ex.Run], data, strategies: Sequence[str], ks: Sequence[int],
                params: Mapping[str, dict], units) -> ShortTexts:
    """Table 1 (MRR at the deepest k up to 10, Recall@k) on the short-text run, its MRR order paired by
    question, then Table 2's ablation steps against the late-chunking base; Figures 2–4."""
    t1_ks = [k for k in ks if k <= 10]
    cols = {"MRR": f"doc_mrr@{max(t1_ks)}", **{f"R@{k}": f"doc_recall@{k}" for k in sorted(t1_ks)}}
    run = ex.short_text_run(runs, data, strategies, t1_ks, params)
    short, setting = run.dataset.meta.get("condition", "documents"), paper.short_text_setting(run.dataset)
    # like-for-like with the paper's Tables 1-2 (same kind of data, model and metric) only on whole PubMedQA
    # abstracts, its PubMedQA* setting; elsewhere its numbers are a reference our interval cannot contain or miss
    like = bool(run.dataset.documents) and all(is_abstract(d) for d in run.dataset.documents)
    ci = tb.summary(run.scores, cols, units=units)
    t1, reported = ci["ours"], paper.reported(1)
    side = tb.beside_paper(t1, reported, ci, like_for_like=like)
    long = per_metric(side.rename_axis("strategy"))[0]
    order = paper.labelled(pairwise_differences(run.scores, cols["MRR"], strategies, units, ledger=(data.name, short)))
    if like:
        against = inside_said(side, f"Table 1 ({short} condition)", "strategies")
    else:
        against = (f"Table 1 ({short} condition): other data than the paper's PubMedQA*, so our 95% intervals are "
                   "not set against its numbers (the table prints no difference from them).")
    said = [against, *finding_sentences(order, ranking=f"Table 1 ({short} condition)", metric="MRR",
                                        reported=reported["MRR"])]

    rows = paper.labelled(decided_pairs(run.scores, cols["MRR"], paper.ABLATION_PAIRS,
                                        f"each strategy minus gralc-late on {cols['MRR']}", units,
                                        ledger=(data.name, short)))
    t2_side = tb.table2_beside(t1, rows)
    said_t2 = []
    if len(rows):
        steps = ", ".join(f"{step} {d:+.4f}" for step, d in paper.reported(2)["ΔMRR"].dropna().items())
        said_t2 = [f"Ablation ({short} condition, each step minus the late-chunking base on MRR, paired by question; "
                   f"paper-reported ΔMRR: {steps}):",
                   *("  " + s for s in finding_sentences(rows)),
                   f"{rows['verdict'].map(decided).sum()} of {len(rows)} components change MRR by a decided difference "
                   "(Holm p < 0.05 across the steps)."]

    # Table 1's MRR intervals under the ablation's row labels (``paper.ABLATION``), for Figure 4
    step_labels = dict(zip(paper.ABLATION, [paper.label(n) for n in paper.ABLATION_STRATEGIES]))
    t2_ci = {part: pd.Series({step: ci[part]["MRR"].get(name, float("nan")) for step, name in step_labels.items()})
             for part in ("ci_low", "ci_high")}
    figures = {
        "fig2_mrr": pg.ours_vs_paper_bars(t1["MRR"], reported["MRR"], f"Figure 2 — MRR by strategy ({short})", "MRR",
                                          note="paper-reported: PubMedQA*", low=ci["ci_low"]["MRR"],
                                          high=ci["ci_high"]["MRR"]),
        "fig3_recall_at_k": pg.recall_curves(t1, reported, t1_ks, f"Figure 3 — Recall@k ({short})",
                                             note="dashed: paper-reported", intervals=ci),
        "fig4_ablation": pg.ablation_steps(t2_side.xs("ours", axis=1, level=1), paper.reported(2),
                                           "Figure 4 — MRR as components are added (axis from 0)",
                                           low=t2_ci["ci_low"], high=t2_ci["ci_high"],
                                           note=f"{short}; error bars: our 95% interval over "
                                                f"{len(run.dataset.questions)} questions"),
    }
    return ShortTexts(run, short, setting, like, estimand_of(data), t1_ks, cols, ci, side, long, order, said,
                      t2_side, rows, said_t2, figures)


@dataclass
class IndexingCost:
    """Table 3 and Figure 5 from cold build costs: ``table`` beside the paper as ratios to Naive, over
    ``articles`` articles of ``condition``."""

    condition: str
    articles: int
    table: pd.DataFrame = field(repr=False)
    figure: object = field(repr=False)


def indexing_cost(costs: pd.DataFrame, condition: str) -> IndexingCost:
    """Chunks and seconds per strategy (``experiment.efficiency``'s rows), ours and the paper's relative to
    Naive (raw values are not comparable: other corpus size, machine and chunk size)."""
    articles = int(costs["articles"].iloc[0])
    t3 = tb.table3(costs)
    side = paper.beside_paper_ratios(t3, paper.reported(3), ["Chunks", "Time (s)"])
    figure = pg.efficiency_chart(t3, f"Figure 5 — chunks and indexing time ({articles} articles, {condition})",
                                 paper.reported(3))
    return IndexingCost(condition, articles, side, figure)


@dataclass
class ByLength:
    """Tables 4, 5, 5b and 5c and Figures 6–7 over the longer conditions: which ran (``long_conditions``,
    ``longest`` speaks for them; ``note`` names those that did not), the tables and their sentences."""

    long_conditions: list[str]
    longest: str | None
    note: str
    mrr_k: int
    table4: pd.DataFrame = field(repr=False)
    order: pd.DataFrame = field(repr=False)
    said: list[str]
    table5: pd.DataFrame = field(repr=False)
    table5b: pd.DataFrame = field(repr=False)
    contrast: pd.DataFrame = field(repr=False)
    said_cs: str | None
    said_coverage: list[str]
    figures: dict = field(repr=False)
    reading: str = tb.TABLE5_READING   # what Table 5's SecCov counts, for its caption

    @property
    def coverage_printed(self) -> str:
        """What Table 5c's cell prints: its sentences, or why there are none."""
        return "\n".join(self.said_coverage) if self.longest else self.note


def by_length(runs: Mapping[str, ex.Run], grad: pd.DataFrame, data, strategies: Sequence[str], ks: Sequence[int],
              conditions: Sequence[str], units) -> ByLength:
    """Table 4 (MRR, R@1, R@5 by condition beside the paper) with the longest condition's MRR order; Table 5
    (SecCov in the pattern reading, CS Recall), 5b (the fair reading) and 5c (structure-aware minus
    content-only on both readings); Figure 6 (MRR by length) and Figure 7 (the fair SecCov@5 by length)."""
    long_conditions = [c for c in LONG_CONDITIONS if c in runs]
    note = paper.missing_conditions(runs, LONG_CONDITIONS)
    cols = {"MRR": f"doc_mrr@{max(ks)}", "R@1": "doc_recall@1", "R@5": "doc_recall@5"}
    longest = long_conditions[-1] if long_conditions else None
    t4_ci = tb.summary(grad[grad["condition"].isin(long_conditions)], cols, by="condition", units=units)
    t4 = t4_ci["ours"]
    t4_side = tb.ours_with_intervals(t4, t4_ci, paper.reported(4))
    if longest:
        order = paper.labelled(pairwise_differences(grad[grad["condition"] == longest], cols["MRR"], strategies, units,
                                                    ledger=(data.name, longest)))
        said = finding_sentences(order, ranking=f"Table 4 ({longest} condition)", metric="MRR",
                                 means=t4.loc[longest]["MRR"], reported=paper.reported(4).loc[longest]["MRR"])
    else:
        order = pd.DataFrame()
        said = ["Tables 4–5: no introduction, partial or full condition ran on this data, so there is no ranking by "
                "document length and no section coverage to report."]
    shown = [c for c in conditions if c in runs]
    mrr_ci = tb.summary(grad, cols, by="condition", units=units)
    figures = {"fig6_mrr_by_length": pg.metric_by_condition(
        mrr_ci["ours"]["MRR"], paper.reported(4)["MRR"], "Figure 6 — MRR by document length", "MRR", shown,
        note="dashed: paper-reported (2,359 PMC articles)", low=mrr_ci["ci_low"]["MRR"], high=mrr_ci["ci_high"]["MRR"])}

    t5_ks = (5, max(ks))
    t5_ci = tb.table5(grad, t5_ks, long_conditions)   # columns "<label> <condition>"
    t5 = t5_ci["ours"]
    fair_cols = [c for c in t5.columns if "source article" in c]
    pattern_cols = [c for c in t5.columns if c not in fair_cols]
    t5_side = paper.by_condition(tb.ours_with_intervals(t5[pattern_cols], t5_ci, paper.reported(5)))
    t5b = paper.by_condition(tb.ours_with_intervals(t5[fair_cols], t5_ci))
    both = [f"{m}@{k}" for m in tb.READINGS.values() for k in t5_ks]
    seccov_rows = decided_pairs(grad[grad["condition"].isin(long_conditions)], both, [paper.GROUPS],
                                "structure-aware minus content-only SecCov, both readings, every k and condition",
                                units, paper.SIDES, by="condition", ledger=(data.name, ""))
    contrast = tb.table5c(seccov_rows, grad)
    said_cs = cs_sentence(t5, t5_ci["ci_low"], max(t5_ks), long_conditions, longest)
    said_coverage = contrast_sentences(contrast, t5_ks, longest)

    fair5 = paper.source_seccov_label(5)
    fig7 = tb.summary(grad, {fair5: f"{tb.READINGS[list(tb.READINGS)[1]]}@5"}, by="condition", units=units)
    figures["fig7_seccov_by_length"] = pg.metric_by_condition(
        fig7["ours"][fair5], None, "Figure 7 — SecCov@5 by document length, fair reading (source article's sections)",
        "sections of the source article in the top 5", shown, low=fig7["ci_low"][fair5], high=fig7["ci_high"][fair5],
        note="every chunk labelled by its section; the paper's counts use the pattern reading (Table 5), so they are "
             "not drawn here")
    return ByLength(long_conditions, longest, note, max(ks), t4_side, order, said, t5_side, t5b, contrast, said_cs,
                    said_coverage, figures)


@dataclass
class Evidence:
    """The evidence paragraphs (context level, ours only) by condition and strategy, the longest condition's
    order on ctx R@5 and its sentences; one question's gold paragraphs strategy by strategy (``passages``,
    ``hits``) and the sentence that names it."""

    table: pd.DataFrame = field(repr=False)
    said: list[str]
    passages: pd.DataFrame = field(repr=False)
    hits: pd.DataFrame = field(repr=False)
    worked: str


def evidence(runs: Mapping[str, ex.Run], grad: pd.DataFrame, data, strategies: Sequence[str], longest: str | None,
             units) -> Evidence:
    """Context-level MRR and recall of the evidence paragraphs; GraLC-RAG (+Graph)'s inside advantage (its
    concept-proximity score matches the template slots) is said when it leads by a decided difference."""
    table = tb.evidence_table(grad)
    order = (paper.labelled(pairwise_differences(grad[grad["condition"] == longest], "ctx_recall@5", strategies, units,
                                                 ledger=(data.name, longest))) if longest and not table.empty else None)
    ctx = (table.loc[longest][("ctx R@5", "ours")].dropna().sort_values(ascending=False, kind="stable")
           if order is not None and longest in table.index else None)
    said = []
    if ctx is not None:
        inside = (ctx.index[0] == "GraLC-RAG (+Graph)" and len(ctx) > 1
                  and ((order["method"] == ctx.index[0]) & (order["below"] == ctx.index[1])
                       & (order["verdict"] == SUPPORTED)).any())
        tail = (" Its concept-proximity score matches the template slots, which are vocabulary concepts: an inside "
                "advantage on these questions.")
        said = [s + (tail if inside else "") for s in
                finding_sentences(order, ranking=f"Evidence paragraphs ({longest} condition, ours only)",
                                  metric="ctx R@5", means=ctx)]

    condition = ran(runs, longest)
    wrun = runs[condition]
    k = 5 if 5 in wrun.results else max(wrun.results)
    q = next((q for q in wrun.dataset.questions if q.gold_contexts), None)   # the first question with gold passages
    if q is None:
        return Evidence(table, said, pd.DataFrame(), pd.DataFrame(),
                        f"No question of the {condition} condition lists gold passages: nothing to mark.")
    passages, hits = worked_comparison({name: by_q[q.id] for name, by_q in wrun.results[k].items()}, q,
                                       wrun.dataset.documents)
    return Evidence(table, said, passages, hits,
                    f"{q.id} ({condition} condition, each strategy's top {k}): {q.question}")


@dataclass
class Answers:
    """Table 6 on ``condition`` (the full texts, else the first condition that ran): ``table`` beside the paper,
    the per-question rows ``gen`` and the sentences said about F1 and section diversity."""

    condition: str
    run: ex.Run = field(repr=False)
    gen: pd.DataFrame = field(repr=False)
    table: pd.DataFrame = field(repr=False)
    said: list[str]
    tokens_scope: str = ex.TOKENS_SCOPE

    @property
    def questions(self) -> int:
        return self.gen["question_id"].nunique()


def answers(runs: Mapping[str, ex.Run], reasoner: str, strategies: Sequence[str], data, units,
            limit: int | None = None) -> Answers:
    """Each strategy's top five answered by ``reasoner``: proxy F1 and its order paired by question, section
    diversity structure-aware minus content-only, tokens as ratios to Naive beside the paper's."""
    condition = ran(runs, "full")
    run = runs[condition]
    gen = ex.generation(run, get_reasoner(reasoner), k=5, limit=limit)
    t6 = tb.table6(gen)
    reported = paper.reported(6)
    intervals = tb.summary(gen, {"Avg F1": "proxy_f1", "Sec Diversity": "section_diversity",
                                 "Answer F1 (reference)": "answer_f1"}, units=units)
    side = tb.add_intervals(paper.beside_paper_ratios(t6, reported, ["Tokens"]), intervals)
    ledger = (data.name, f"{condition}, answers")
    f1_order = paper.labelled(pairwise_differences(gen, "proxy_f1", strategies, units, ledger=ledger))
    diversity = decided_pairs(gen, "section_diversity", [paper.GROUPS],
                              "structure-aware minus content-only on section_diversity", units, paper.SIDES,
                              ledger=ledger)
    said = finding_sentences(f1_order, ranking=f"Answers ({reasoner} reasoner, {condition} condition)",
                             metric="proxy F1 (answer vs question)", means=t6["Avg F1"], reported=reported["Avg F1"],
                             reported_label="paper-reported with GPT-4o-mini")
    if len(diversity):
        m = tb.group_means(gen, "section_diversity")
        paper_diversity = reported["Sec Diversity"]
        said += [f"Section diversity of the answer contexts (each group's mean on a question): content-only "
                 f"{m['content-only']:.2f}, structure-aware {m['structure-aware']:.2f}; paper-reported "
                 f"{paper_diversity.iloc[:3].mean():.2f} vs {paper_diversity.iloc[3:].mean():.2f} (its content-only "
                 "1.00 is the unlabelled reading of Table 5). Structure-aware minus content-only, paired by question:",
                 *("  " + s for s in finding_sentences(diversity))]
    return Answers(condition, run, gen, side, said)


@dataclass
class LambdaAblation:
    """The infusion ablation on the answers' condition: ``table`` one row per λ, ``differences`` each λ
    against the first paired by question, the sentences and the figure."""

    condition: str
    questions: int
    table: pd.DataFrame = field(repr=False)
    differences: pd.DataFrame = field(repr=False)
    said: list[str]
    figure: object = field(repr=False)


def lambda_ablation(answered: Answers, lambda_grid: Sequence[float], params: Mapping[str, dict], lengths: ByLength,
                    short: ShortTexts, data, units) -> LambdaAblation:
    """gralc-kg at each λ of ``lambda_grid`` on Table 6's questions; MRR at the deepest k of the table whose
    Structure-Aware row λ = 0 repeats (Table 4 on a long condition, else Table 1), and the paper's KG minus
    Structure-Aware MRR beside ours at its λ."""
    condition = answered.condition
    mrr_k = lengths.mrr_k if condition in lengths.long_conditions else max(short.ks)
    sweep = ex.lambda_sweep(answered.run.dataset, lambda_grid, 5, params, mrr_k=mrr_k)
    ledger = (data.name, f"{condition}, λ sweep")
    rows = pd.concat([decided_pairs(sweep.scores, m, sweep.pairs, f"each λ minus λ = {sweep.table.index[0]:g} on {m}",
                                    units, ledger=ledger)
                      for m in sweep.metrics], ignore_index=True)   # one family per column
    diffs = sweep.by_lambda(rows)
    if condition in lengths.long_conditions:
        reported = (f"Table 4, {condition}", paper.reported(4).loc[condition]["MRR"])
    else:
        reported = ("Table 1, PubMedQA*", paper.reported(1)["MRR"]) if condition == short.condition else None
    paper_lam = get_retriever("gralc-kg").config.lam   # the paper's λ (§3.1.4), the config's default
    said = lambda_sentences(sweep, rows, diffs, condition, reported, paper_lam)
    n = len(answered.run.dataset.questions)
    figure = pg.lambda_curve(sweep.table, "gralc-kg: retrieval and token vectors against the fusion weight λ",
                             note=f"{condition} condition, random GAT/MLP weights; every axis from 0; means over {n} "
                                  "questions, one build per λ; paired intervals of the changes: the table above")
    return LambdaAblation(condition, n, sweep.table, diffs, said, figure)


def findings(short: ShortTexts, lengths: ByLength, found: Evidence, answered: Answers, sweep: LambdaAblation,
             data, units) -> list[str]:
    """The closing lines: how verdicts are decided, then each section's findings, with the lowest MRR tested
    against the paper's near-ceiling bound and the Table 1 leader said with its mean."""
    t1, reported = short.means, paper.reported(1)
    who = t1["MRR"].idxmin()
    # the strategy the paper labels ``who`` against the ceiling, as ``paper.SIDES`` names it
    ceiling = paper.labelled(decided_pairs(short.run.scores, short.columns["MRR"],
                                           [(paper.strategy(who), paper.CEILING_SIDE)],
                                           f"the lowest {short.columns['MRR']} minus {paper.CEILING:g}", units,
                                           paper.SIDES, ledger=(data.name, short.condition)))
    said_ceiling = [f"The lowest MRR, {t1.loc[who, 'MRR']:.3f} ({who}; its interval: Table 1), minus "
                    f"{paper.CEILING:g}, above which the paper calls its abstracts a near-ceiling setting "
                    f"(paper-reported lowest {reported['MRR'].min():.3f}; supported: it lies above):",
                    *("  " + s for s in finding_sentences(ceiling))]
    leader = finding_sentences(short.order, ranking=f"Table 1 ({short.condition} condition)", metric="MRR",
                               means=t1["MRR"], reported=reported["MRR"])
    lines = [HOW_DECIDED + " The paper reports no tests.", *lengths.said_coverage, *leader, *said_ceiling,
             *short.said_ablation, *lengths.said, lengths.said_cs, *found.said, *answered.said, *sweep.said,
             *short.said]
    return [line for line in lines if line]
