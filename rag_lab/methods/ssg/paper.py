"""The SSG-traversal paper's two result tables (typed in from the paper, paper-reported), our run's
table beside one of them, and how alike the two settings are.

The paper scores each algorithm with DeepEval: contextual precision and recall of the retrieved
context, answer relevancy and faithfulness (all four LLM-judged), and the number of test cases
passed. DeepEval is not installed here. Our columns (``experiment.py``): gold-sentence precision
and recall (overlap of the gathered sentences with the question's gold sentences, no LLM) always;
with a judge, ragas' LLM context precision and recall (the closest installed analogue of
DeepEval's contextual ones), answer relevancy and faithfulness. ``like_for_like`` says, per paper
column, whether the data, the metric and the models match the paper's; ``reported_beats`` which algorithms the
paper's tables report above basic_retrieval (what our data decides is ``ledgered``'s).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...core.types import Dataset
from ...evaluation.decisions import estimand_of
from ...evaluation.uncertainty import formatted_summary, interval_frames, summary_with_ci
from .experiment import results_table, tidy, units_of

_PAPER_COLUMNS = ["precision", "recall", "answer_relevancy", "faithfulness", "passed", "total"]


PAPER_TABLES: dict[str, pd.DataFrame] = {
    # "20qa-themes-gpt4omini-reasoning": 20 questions from theme_based groups (max_sentences 10)
    "20q theme_based (paper-reported)": pd.DataFrame([
        ("basic_retrieval", 0.87, 0.74, 0.91, 0.93, 16, 20),
        ("query_traversal", 0.83, 0.83, 0.91, 1.00, 16, 20),
        ("ssg_traversal", 0.73, 0.72, 0.98, 0.92, 15, 20),
        ("triangulation_average", 0.84, 0.77, 0.96, 1.00, 16, 20),
        ("triangulation_geometric_3d", 0.86, 0.77, 0.96, 1.00, 16, 20),
        ("triangulation_fulldim", 0.90, 0.78, 0.95, 0.99, 17, 20),
        ("llm_guided_traversal", 0.88, 0.82, 0.95, 1.00, 17, 20),
    ], columns=["algorithm", *_PAPER_COLUMNS]).set_index("algorithm"),
    # "50qa-seq-multihop-gpt4o-reasoning-comparative-multicontext": sequential_multi_hop groups (max 15)
    "50q sequential_multi_hop (paper-reported)": pd.DataFrame([
        ("basic_retrieval", 0.93, 0.88, 0.99, 0.99, 48, 50),
        ("query_traversal", 0.91, 0.91, 0.98, 1.00, 50, 50),
        ("ssg_traversal", 0.93, 0.87, 0.99, 0.99, 49, 50),
        ("triangulation_average", 0.92, 0.87, 0.98, 0.99, 49, 50),
        ("triangulation_geometric_3d", 0.93, 0.85, 0.98, 1.00, 48, 50),
        ("triangulation_fulldim", 0.93, 0.87, 1.00, 0.97, 47, 50),
        ("llm_guided_traversal", 0.91, 0.94, 0.99, 0.99, 49, 50),
    ], columns=["algorithm", *_PAPER_COLUMNS]).set_index("algorithm"),
}

# each table's setting, from the paper's parts on its synthetic datasets and its graph
PAPER_CORPUS = "10 Wikipedia articles (Machine Learning and Artificial Intelligence topics)"
PAPER_EMBEDDER = "mixedbread-ai/mxbai-embed-large-v1"
PAPER_SETTING = {
    "20q theme_based (paper-reported)": {"strategy": "theme_based", "questions": 20, "answers": "gpt-4o-mini"},
    "50q sequential_multi_hop (paper-reported)": {"strategy": "sequential_multi_hop", "questions": 50,
                                                  "answers": "gpt-5-nano"},
}
# which of our question strategies matches each paper table
PAPER_STRATEGY = {name: s["strategy"] for name, s in PAPER_SETTING.items()}
PAPER_METRICS = {"precision": "DeepEval contextual precision", "recall": "DeepEval contextual recall",
                 "answer_relevancy": "DeepEval answer relevancy", "faithfulness": "DeepEval faithfulness",
                 "pass_rate": "DeepEval test cases passed"}
NUMERIC_COLUMNS = list(PAPER_METRICS)


def paper_table(name: str) -> pd.DataFrame:
    """One paper table with ``pass_rate`` (passed / total) and ``test_cases`` ("16/20")."""
    if name not in PAPER_TABLES:
        raise ValueError(f"no paper table {name!r}; expected one of {', '.join(PAPER_TABLES)}")
    t = PAPER_TABLES[name].copy()
    t["pass_rate"] = t["passed"] / t["total"]
    t["test_cases"] = [f"{p}/{n}" for p, n in zip(t["passed"], t["total"])]
    return t.drop(columns=["passed", "total"])


def our_column(paper_metric: str, judged: bool) -> str:
    """Which of our columns stands in each paper column: the LLM-judged context metrics with a
    judge, the gold-sentence ones without."""
    if paper_metric in ("precision", "recall"):
        return f"llm_context_{paper_metric}" if judged else f"gold_sentence_{paper_metric}"
    if paper_metric not in PAPER_METRICS:
        raise ValueError(f"no paper column {paper_metric!r}; expected one of {', '.join(PAPER_METRICS)}")
    return paper_metric


def compare_with_paper(ours: pd.DataFrame, paper_name: str, judged: bool = False,
                       choosers: dict[str, str] | None = None,
                       intervals: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Ours | paper-reported | difference per paper column (``plots.with_paper``), plus both test-case
    counts. Our columns name the metric that fills them, e.g. ``"precision (ours: gold_sentence_precision)"``;
    ``choosers`` (algorithm -> reasoner that made its choices) label the rows whose choices were ours.
    With ``intervals`` (frames keyed by our column names) each column also gets n and our 95% interval;
    none is like-for-like with the paper (other data, another judge or none), and the table says so."""
    from ...core.plots import with_paper

    paper = paper_table(paper_name)
    sources = {m: our_column(m, judged) for m in NUMERIC_COLUMNS}
    mine = pd.DataFrame({m: ours[c] if c in ours else float("nan") for m, c in sources.items()}, index=ours.index)
    if intervals is not None:
        intervals = {part: pd.DataFrame({m: frame[c] for m, c in sources.items() if c in frame}, index=frame.index)
                     for part, frame in intervals.items()}
    table = with_paper(mine, paper[NUMERIC_COLUMNS], intervals)
    table[("test_cases", "ours")] = ours["test_cases"]
    table[("test_cases", "paper-reported")] = paper["test_cases"]
    table.columns = [f"{metric} (ours: {sources[metric]})" if who == "ours" and metric in sources
                     else f"{metric} ({who})" for metric, who in table.columns]
    # a row whose choices were ours says who made them: the offline reasoner's are a rule, not an LLM's (the
    # paper's row used GPT-4o-mini / GPT-5-nano)
    chosen_by = {a: "offline rule, no LLM" if c == "offline" else f"choices by {c}"
                 for a, c in (choosers or {}).items() if c}
    return table.rename(index=lambda a: f"{a} (ours: {chosen_by[a]})" if a in chosen_by else a)


@dataclass(frozen=True)
class RunSetting:
    """What our run used, to set beside the paper's setting."""

    dataset: str
    questions: int          # questions of the paper table's grouping strategy in our run
    embedder: str
    reasoner: str           # wrote the answers that answer relevancy and faithfulness judge
    judge: str | None


def _metric_note(paper_metric: str, judged: bool) -> str:
    if paper_metric in ("precision", "recall"):
        if judged:
            return f"analogue: ragas LLM context {paper_metric} (DeepEval is not installed)"
        return f"differs: gold-sentence {paper_metric} (overlap with the gold sentences, no LLM)"
    if paper_metric == "pass_rate":
        return ("analogue: a case passes when each judged metric reaches the threshold" if judged else
                "differs: a case passes on gold-sentence precision and recall alone")
    return f"analogue: ragas {paper_metric.replace('_', ' ')}" if judged else "not computed (no judge)"


def like_for_like(paper_name: str, setting: RunSetting) -> pd.DataFrame:
    """Per paper column: our column, and whether the metric, the data and the models match the
    paper's ("same", "analogue", "differs: …"); "like-for-like" is yes only when all three are the same."""
    paper = PAPER_SETTING[paper_name]
    judged = setting.judge is not None
    # the paper's generated questions and its Wikipedia snapshot are not shipped, so the data always differs
    data = (f"differs: {setting.questions} {paper['strategy']} questions on {setting.dataset} "
            f"(paper: {paper['questions']} DeepEval-generated questions on {PAPER_CORPUS})")
    same_embedder = setting.embedder.endswith(PAPER_EMBEDDER.split("/")[-1])
    embeddings = "same embeddings" if same_embedder else f"embeddings {setting.embedder} (paper: {PAPER_EMBEDDER})"
    rows = []
    for metric in NUMERIC_COLUMNS:
        models = [embeddings]
        if judged or metric in ("answer_relevancy", "faithfulness"):
            models.append(f"judge: {setting.judge or 'none'} (paper: DeepEval's, model not stated)")
        if metric in ("answer_relevancy", "faithfulness") or (judged and metric == "pass_rate"):
            models.append(f"answers by {setting.reasoner} (paper: {paper['answers']})")
        model = "same" if same_embedder and len(models) == 1 else "differs: " + "; ".join(models)
        note = _metric_note(metric, judged)
        rows.append({"paper column": metric, "ours": our_column(metric, judged), "paper": PAPER_METRICS[metric],
                     "metric": note, "data": data, "model": model,
                     "like-for-like": "yes" if all(v == "same" for v in (note, data, model)) else "no"})
    return pd.DataFrame(rows).set_index("paper column")


def setting_sentence(paper_name: str, setting: RunSetting) -> str:
    """One sentence, from the run's setting, on where it differs from the paper's table."""
    paper = PAPER_SETTING[paper_name]
    table = like_for_like(paper_name, setting)
    context = ("ragas' LLM-judged context precision/recall" if setting.judge
               else "gold-sentence precision/recall (no judge)")
    return (f"Beside {paper_name}: {setting.questions} {paper['strategy']} questions on {setting.dataset} "
            f"(paper: {paper['questions']}), {setting.embedder} embeddings (paper: {PAPER_EMBEDDER}), "
            f"{context} against DeepEval's LLM-judged ones; {int((table['like-for-like'] == 'yes').sum())} "
            f"of {len(table)} columns like-for-like.")


# -- one sentence beside each notebook table, from the run's own setting ---------------------------
PAPER_THEME_MODEL = "llama3.1:8b"       # the paper's theme extraction (its graph part)


def graph_sentence(config, embedder: str, reasoner: str) -> str:
    """Where our graph's setting differs from the paper's (its graph architecture and themes)."""
    return (f"Our graph differs from the paper's in: {embedder} embeddings (paper: {PAPER_EMBEDDER}); themes "
            f"by the {reasoner} reasoner (paper: {PAPER_THEME_MODEL}); top_k={config.top_k} + "
            f"top_x={config.top_x} edges per window (paper: about ten comparisons kept, split not stated); "
            f"top_t={config.top_t} theme bridges (paper: no value given).")


def questions_sentence(questions, dataset: str, writer: str | None = None) -> str:
    """Where our questions differ from the paper's (its synthetic-dataset part)."""
    counts = pd.Series([q.meta.get("strategy", "") for q in questions]).value_counts()
    source = f"written by {writer}" if writer else "written by hand"
    paper = ", ".join(f"{s['questions']} {s['strategy']}" for s in PAPER_SETTING.values())
    return (f"Our questions differ from the paper's: {len(questions)} on {dataset}, {source} for grouping-strategy "
            f"sentence groups (" + ", ".join(f"{n} {s}" for s, n in counts.items())
            + f"); the paper's were generated and evolved by DeepEval ({paper}).")


def strategies_sentence(strategies) -> str:
    """Which of the run's grouping strategies have a paper table at all."""
    ours = list(dict.fromkeys(strategies))
    without = [s for s in ours if s not in PAPER_STRATEGY.values()]
    return (f"The paper reports {' and '.join(PAPER_STRATEGY.values())} only (one table each); of our "
            f"{len(ours)} strategies, without a paper counterpart: " + (", ".join(without) or "none") + ".")


def shown_comparison(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``compare_with_paper``'s table (with intervals) narrowed for reading (the saved CSV keeps every column): per paper
    column with a number of ours, "ours [95% interval]", the paper's and the difference; one n column;
    the test-case counts (pass_rate as a fraction is left to the CSV);
    the columns this run left empty and the never like-for-like check are named in the returned note
    instead of shown."""
    from ...evaluation.statistics import format_ci

    out = pd.DataFrame(index=table.index)
    empty, n = [], None
    for metric in (m for m in NUMERIC_COLUMNS if m != "pass_rate"):     # the test-case counts say it
        ours = next((c for c in table.columns if c.startswith(f"{metric} (ours")), None)
        if ours is None or table[ours].isna().all():
            empty.append(metric)
            continue
        if n is None and table[f"{metric} (n)"].notna().any():
            n = table[f"{metric} (n)"]
        out[f"{metric}: ours [95% interval]"] = [
            format_ci(v, lo, hi, 2) if pd.notna(lo) else f"{v:.2f}" if pd.notna(v) else ""
            for v, lo, hi in zip(table[ours], table[f"{metric} (ci_low)"], table[f"{metric} (ci_high)"])]
        out[f"{metric}: paper"] = table[f"{metric} (paper-reported)"].round(2)
        out[f"{metric}: difference"] = table[f"{metric} (difference)"].round(2)
    if n is not None:
        out.insert(0, "n", n.astype("Int64"))
    out["test cases (ours)"] = table["test_cases (ours)"]
    out["test cases (paper)"] = table["test_cases (paper-reported)"]
    note = ("Shown narrowed (the saved CSV has every column): our number with its 95% interval, the paper's, "
            "and ours minus the paper's; no column is like-for-like (see the table below), so no difference is "
            "read as agreement or disagreement"
            + (f"; not computed in this run: {', '.join(empty)}." if empty else "."))
    return out, note


@dataclass(frozen=True)
class PaperComparison:
    """Our run beside one paper table: the whole ``table`` (``compare_with_paper``), its narrowed view and note
    (``shown_comparison``), the per-column ``like_for_like`` check and the ``setting_sentence``."""

    name: str
    table: pd.DataFrame
    shown: pd.DataFrame
    note: str
    like_for_like: pd.DataFrame
    setting: str


def paper_comparisons(scores: pd.DataFrame, judged: pd.DataFrame | None, threshold: float, dataset: Dataset,
                      embedder_id: str, reasoner_name: str, judge: str | None) -> list[PaperComparison]:
    """For each paper table, our run on the questions of the same grouping strategy beside it, with how alike
    the two settings are (``like_for_like``). A paper table whose strategy has no question in this run is left out."""
    chosen = scores[scores["chooser"].astype(bool)]           # who made llm_guided_traversal's choices
    choosers = {a: ", ".join(sorted(set(c))) for a, c in chosen.groupby("algorithm")["chooser"]}
    out = []
    for name, strategy in PAPER_STRATEGY.items():
        if not (scores["strategy"] == strategy).any():
            continue
        rows = tidy(scores, judged, strategy)     # n and the 95% interval of every mean, clustered by document
        intervals = interval_frames(rows, {c: c for c in dict.fromkeys(rows["metric"])}, units=units_of(scores))
        table = compare_with_paper(results_table(scores, judged, threshold, strategy), name, judged is not None,
                                   choosers, intervals)
        setting = RunSetting(dataset.name, sum(q.meta.get("strategy") == strategy for q in dataset.questions),
                             embedder_id, reasoner_name, judge)
        out.append(PaperComparison(name, table, *shown_comparison(table), like_for_like(name, setting),
                                   setting_sentence(name, setting)))
    return out


def beats_basic(table: pd.DataFrame, metric: str, tolerance: float = 1e-9) -> list[str]:
    """Algorithms above basic_retrieval on ``metric`` by more than ``tolerance`` (float noise is no win)."""
    if "basic_retrieval" not in table.index:
        raise ValueError("the table has no basic_retrieval row to compare with")
    base = table.loc["basic_retrieval", metric]
    return [a for a in table.index if a != "basic_retrieval" and table.loc[a, metric] > base + tolerance]


def reported_beats(metric: str) -> list[str]:
    """Per paper table, which algorithms the paper reports above basic_retrieval on ``metric`` (``precision``,
    ``recall``), with basic_retrieval's own number."""
    out = []
    for name in PAPER_TABLES:
        paper = paper_table(name)
        out.append(f"  paper, {name}, {PAPER_METRICS[metric]}: " + (", ".join(beats_basic(paper, metric)) or "none")
                   + f" (basic_retrieval {paper.loc['basic_retrieval', metric]:.2f}).")
    return out


@dataclass
class Results:
    """Notebook 03's results: the table in the paper's layout, its intervals (raw and as read), and the lines said
    beside them."""
    table: pd.DataFrame
    summary: pd.DataFrame
    shown_summary: pd.DataFrame
    said: list[str]


def results(scores: pd.DataFrame, judged: pd.DataFrame | None, threshold: float, dataset: Dataset,
            definition: str) -> Results:
    """``results_table`` of one run and every mean of it with n and its 95% interval (clustered by document), with
    what they speak of (``estimand_of``), how they differ from the paper's tables, the ``definition`` of their
    context columns (``compare.descriptions``, which notebook 10 shares; this layer cannot import it) and which
    columns this run did not compute (all empty without a judge)."""
    table = results_table(scores, judged, threshold)
    n = len(dataset.questions)
    measured = ("ragas' LLM-judged context precision/recall (DeepEval is not installed)." if judged is not None
                else "gold-sentence precision/recall (no judge, so no answer relevancy or faithfulness).")
    said = [estimand_of(dataset),
            f"Unlike the paper's tables (one grouping strategy each, DeepEval's LLM-judged metrics), this one pools {n} "
            f"questions of {scores['strategy'].nunique()} strategies and measures context by " + measured, definition]
    empty = [c for c in table.columns if table[c].isna().all()]
    if empty:
        said.append("Not computed in this run (no judge): " + ", ".join(empty) + ".")
    rows = tidy(scores, judged)
    summary = summary_with_ci(rows, list(dict.fromkeys(rows["metric"])), units=units_of(scores))
    return Results(table, summary, formatted_summary(summary), said)
