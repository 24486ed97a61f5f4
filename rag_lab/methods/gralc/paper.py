"""Numbers reported in the GraLC-RAG paper (Tables 1–6), for display beside ours as
"paper-reported" (``reported``). Rows use the paper's strategy labels; ``PAPER_LABELS`` maps our names. Also
the paper's comparisons as data for ``uncertainty.decided_pairs`` (the ablation's pairs, the two groups of
strategies and the ceiling as sides), and the paper's setting against the run's: what data each table ran on
(for captions) and the loader arguments that choose the data."""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ...core.types import Dataset
from .gradient import CONDITIONS, is_abstract
from .method import PAPER_LABELS

ORDER = ["Naive", "Semantic", "Late Chunking", "Structure-Aware", "GraLC-RAG (KG)", "GraLC-RAG (+Graph)"]


def _table1() -> pd.DataFrame:
    """PubMedQA*, 1,000 questions over 1,000 abstracts."""
    rows = [[0.9787, 0.9690, 0.9880, 0.9900, 0.9960], [0.9802, 0.9710, 0.9880, 0.9910, 0.9950],
            [0.9768, 0.9660, 0.9860, 0.9920, 0.9960], [0.9765, 0.9660, 0.9850, 0.9890, 0.9940],
            [0.9687, 0.9520, 0.9830, 0.9880, 0.9930], [0.9502, 0.9260, 0.9700, 0.9820, 0.9930]]
    return pd.DataFrame(rows, index=ORDER, columns=["MRR", "R@1", "R@3", "R@5", "R@10"])


def _table2() -> pd.DataFrame:
    rows = [[0.9768, 0.9660, 0.9920, float("nan")], [0.9765, 0.9660, 0.9890, -0.0003],
            [0.9687, 0.9520, 0.9880, -0.0081], [0.9502, 0.9260, 0.9820, -0.0266]]
    return pd.DataFrame(rows, index=ABLATION, columns=["MRR", "R@1", "R@5", "ΔMRR"])


CEILING = 0.95       # §4.1 calls MRR above 0.95 on its abstracts a near-ceiling effect
ABLATION = ["Late Chunking (base)", "+ Structure Boundaries", "+ KG Infusion", "+ Graph-Guided Retrieval"]
ABLATION_STRATEGIES = ["gralc-late", "gralc-structure", "gralc-kg", "gralc-graph"]
ABLATION_PAIRS = [(step, ABLATION_STRATEGIES[0]) for step in ABLATION_STRATEGIES[1:]]   # each step minus the base
# the paper's contrast (§4.3, Tables 5-6): the structure-aware strategies against the content-only ones
CONTENT_ONLY = ("gralc-naive", "gralc-semantic", "gralc-late")
STRUCTURE_AWARE = ("gralc-structure", "gralc-kg", "gralc-graph")
GROUPS = ("structure-aware", "content-only")
CEILING_SIDE = f"the {CEILING:g} ceiling"
# the sides of its comparisons that are no one strategy (``uncertainty.decided_pairs``): each group's mean on a
# question, and the constant the lowest MRR is tested against
SIDES = {GROUPS[0]: STRUCTURE_AWARE, GROUPS[1]: CONTENT_ONLY, CEILING_SIDE: CEILING}


def _table3() -> pd.DataFrame:
    """200 full-text PMC articles, CPU; the paper's naive row used 512-token chunks, and it
    reports one row for both GraLC-RAG variants."""
    rows = {"Naive": [1109, 44.6], "Semantic": [6765, 535.1], "Late Chunking": [3055, 313.7],
            "Structure-Aware": [2139, 1044.1], "GraLC-RAG (KG)": [2139, 2566.1]}
    return pd.DataFrame(rows, index=["Chunks", "Time (s)"]).T


def _table4() -> pd.DataFrame:
    data = {
        "introduction": [[0.398, 0.327, 0.480], [0.488, 0.430, 0.553], [0.379, 0.313, 0.465], [0.393, 0.324, 0.477],
                         [0.364, 0.290, 0.451], [0.347, 0.271, 0.436]],
        "partial": [[0.361, 0.288, 0.453], [0.555, 0.489, 0.637], [0.339, 0.267, 0.422], [0.387, 0.320, 0.469],
                    [0.339, 0.266, 0.429], [0.358, 0.282, 0.454]],
        "full": [[0.344, 0.268, 0.435], [0.517, 0.448, 0.607], [0.326, 0.263, 0.395], [0.365, 0.296, 0.446],
                 [0.323, 0.261, 0.397], [0.332, 0.269, 0.407]],
    }
    frames = [pd.DataFrame(rows, index=pd.MultiIndex.from_product([[cond], ORDER], names=["condition", "strategy"]),
                           columns=["MRR", "R@1", "R@5"]) for cond, rows in data.items()]
    return pd.concat(frames)


CONDITION_ORDER = ["introduction", "partial", "full"]


def seccov_label(k: int) -> str:
    """Column name of SecCov@k in the reading that reproduces the paper's pattern
    (``seccov.PAPER_READING``: labels at any level of every retrieved article, content-only unlabelled)."""
    return f"SecCov@{k} (any-level labels, all retrieved)"


def source_seccov_label(k: int) -> str:
    """Column name of our own reading, which the paper's numbers are not set beside: distinct
    top-level sections of the question's source article."""
    return f"SecCov@{k} (source article's sections; ours only)"


def _table5() -> pd.DataFrame:
    """Columns "<metric> <condition>", e.g. "SecCov@5 (any-level labels, all retrieved) full": the
    paper's printed values, which ``seccov.PAPER_READING`` reproduces in pattern."""
    seccov5 = [[1.00, 1.00, 1.00]] * 3 + [[2.32, 3.52, 4.26], [2.33, 3.74, 4.46], [2.35, 3.63, 4.36]]
    seccov20 = [[1.00, 1.00, 1.00]] * 3 + [[3.97, 10.08, 14.43], [3.95, 10.84, 15.57], [3.95, 10.84, 15.57]]
    cs20 = [[0.0, 0.0, 0.0]] * 6
    cols = [f"{m} {c}" for m in (seccov_label(5), seccov_label(20), "CS Recall@20") for c in CONDITION_ORDER]
    return pd.DataFrame([a + b + c for a, b, c in zip(seccov5, seccov20, cs20)], index=ORDER, columns=cols)


ANSWER_ENCODING = "o200k_base"   # the tokenizer of the paper's answering model, GPT-4o-mini (§3.5)


def _table6() -> pd.DataFrame:
    """50 full-text cross-section questions, GPT-4o-mini answers; F1 is answer-vs-question overlap;
    Tokens as GPT-4o-mini counted them (``experiment.TOKENS_SCOPE`` says how ours differ)."""
    rows = [[0.389, 1.00, 169466], [0.403, 1.00, 29748], [0.375, 1.00, 71506], [0.381, 4.48, 86060],
            [0.394, 4.62, 77930], [0.395, 4.48, 85659]]
    return pd.DataFrame(rows, index=ORDER, columns=["Avg F1", "Sec Diversity", "Tokens"])


def reported(table: int) -> pd.DataFrame:
    """The paper's Table ``table`` (1-6) as it prints it, rows its strategy labels (``ORDER``); a new frame each
    call, so no caller changes another's."""
    tables = {1: _table1, 2: _table2, 3: _table3, 4: _table4, 5: _table5, 6: _table6}
    if table not in tables:
        raise ValueError(f"the paper has Tables 1-6 of numbers, got {table!r}")
    return tables[table]()


def label(name: str) -> str:
    return PAPER_LABELS.get(name, name)


def strategy(paper_label: str) -> str:
    """The registry's name of a strategy the paper labels ``paper_label`` (``label`` turned round)."""
    return next((name for name, said in PAPER_LABELS.items() if said == paper_label), paper_label)


def labelled(table: pd.DataFrame) -> pd.DataFrame:
    """A decided table (registry names, as the ledger files them) with the paper's labels in its method and
    other-side columns, as the notebook's tables show them."""
    named = [c for c in ("method", "baseline", "below") if c in table.columns]
    return table.assign(**{c: table[c].map(label) for c in named})


BASE = "Naive"
RATIO_DIFFERENCE = "ratio: ours − paper"


def beside_paper_ratios(ours: pd.DataFrame, reported: pd.DataFrame, ratios: Sequence[str], base: str = BASE) -> pd.DataFrame:
    """Ours beside the paper's numbers where the raw values are *not* comparable (another corpus size,
    machine, chunk size or answering model): no difference of raw values. For the columns in ``ratios``
    each strategy's value relative to ``base``, ours and the paper's, and the difference of the two
    ratios — the comparison the two settings allow. Columns: (metric, "ours" | "paper-reported" |
    "ours ÷ <base>" | "paper ÷ <base>" | ``RATIO_DIFFERENCE``); then our columns the paper lacks as
    (column, "ours"). A ratio is NaN where either side has no ``base`` row."""
    unknown = [c for c in ratios if c not in ours.columns or c not in reported.columns]
    if unknown:
        raise ValueError(f"ratio columns {unknown} are not in both tables ({list(ours.columns)}, {list(reported.columns)})")
    index = ours.index.union(reported.index, sort=False)
    parts = {}
    for c in [c for c in reported.columns if c in ours.columns]:
        mine, theirs = ours[c].reindex(index), reported[c].reindex(index)
        parts[(c, "ours")], parts[(c, "paper-reported")] = mine, theirs
        if c in ratios:
            mine_r = mine / ours[c].get(base, float("nan"))
            theirs_r = theirs / reported[c].get(base, float("nan"))
            parts[(c, f"ours ÷ {base}")], parts[(c, f"paper ÷ {base}")] = mine_r, theirs_r
            parts[(c, RATIO_DIFFERENCE)] = mine_r - theirs_r
    for c in [c for c in ours.columns if c not in reported.columns]:
        parts[(c, "ours")] = ours[c].reindex(index)
    return pd.DataFrame(parts, index=index)


def by_condition(side: pd.DataFrame, conditions: Sequence[str] = CONDITION_ORDER) -> pd.DataFrame:
    """Table 5 beside the paper (columns ("<metric> <condition>", part)) turned readable: rows
    (metric, strategy), columns (condition, part: ours | paper-reported | difference), so the
    27-odd columns become three conditions of at most three parts each. Nothing is dropped."""
    pieces = {}
    for name, part in side.columns:
        metric, cond = next(((name[: -len(c) - 1], c) for c in conditions if name.endswith(f" {c}")), (name, ""))
        pieces.setdefault(metric, {})[(cond, part)] = side[(name, part)]
    frames = []
    for metric, cols in pieces.items():
        frame = pd.DataFrame(cols, index=side.index)
        frame.index = pd.MultiIndex.from_product([[metric], side.index], names=["metric", "strategy"])
        frames.append(frame)
    if not frames:   # no condition ran (PubMedQA's abstracts): nothing of ours or the paper's to set side by side
        index = pd.MultiIndex.from_arrays([[], []], names=["metric", "strategy"])
        return pd.DataFrame(index=index, columns=pd.MultiIndex.from_arrays([[], []], names=["condition", ""]))
    out = pd.concat(frames)
    order = [c for c in [*conditions, ""] if c in out.columns.get_level_values(0)]
    parts = ["ours", "n", "ci_low", "ci_high", "paper-reported", "difference"]
    cols = sorted(out.columns, key=lambda c: (order.index(c[0]), parts.index(c[1]) if c[1] in parts else len(parts)))
    return out[cols].rename_axis(columns=["condition", ""])


# What data each table runs on, said for captions. The paper runs Tables 1–2 on PubMedQA* (1,000 abstracts,
# one question each, gold = the question's source abstract) and Tables 3–6 on PMC Open Access full texts; the
# notebook runs all of them on one data set, so each caption says which setting it actually had.
JATS_LOADERS = ("biomed_articles", "pmc_oa")
PAPER_ABSTRACTS = 1000
# §3.3 describes its 1,000 questions as 500 expert-annotated + 500 artificial; PubMedQA's labelled
# set PQA-L (ori_pqal.json, what the loader reads by default) holds 1,000 expert-labelled ones
PAPER_QUESTIONS = (f"the paper: {PAPER_ABSTRACTS:,} questions, described as 500 expert-annotated + 500 artificial; "
                   "PQA-L's 1,000 are all expert-labelled")


def loader_kwargs(dataset: str, data_path=None, articles: int | None = None, seed: int = 0,
                  per_template: int = 1) -> dict:
    """Keyword arguments for ``load_dataset`` from the notebook's parameters: ``articles`` is the
    number of JATS articles, or of PubMedQA records (first N of the file)."""
    kwargs: dict = {"path": data_path} if data_path else {}
    if dataset in JATS_LOADERS:
        kwargs.update(seed=seed, per_template=per_template)
        if articles:
            kwargs["articles"] = articles
    elif dataset == "pubmedqa" and articles:
        kwargs["limit_records"] = articles
    return kwargs


def short_text_setting(dataset: Dataset) -> str:
    """One phrase saying what Tables 1–2 ran on (for the caption and the printed summary)."""
    docs, n_q = dataset.documents, len(dataset.questions)
    if docs and all(is_abstract(d) for d in docs):
        return (f"PubMedQA*: {len(docs):,} full abstracts (all context sections), {n_q:,} questions, one each, "
                f"gold = its source abstract — the paper's protocol, not its question set ({PAPER_QUESTIONS})")
    if dataset.meta.get("condition") == "abstract":
        return (f"abstracts of {len(docs):,} JATS articles, {n_q:,} template questions about the full articles "
                "(gold = the article) — not the paper's PubMedQA* setting")
    return f"{len(docs):,} whole documents (none has an abstract), {n_q:,} questions — not the paper's setting"


def missing_conditions(runs: Mapping[str, object], wanted=CONDITIONS) -> str:
    """A sentence naming the document-length conditions this data set has none of ("" when all ran)."""
    missing = [c for c in wanted if c not in runs]
    if not missing:
        return ""
    why = ("its documents are abstracts, with no article around them" if list(runs) == ["abstract"]
           else "no document has the sections they need")
    return (f"No {', '.join(missing)} condition here: {why}. The paper runs these tables on PMC Open Access "
            "full texts (preset paper_pmc).")
