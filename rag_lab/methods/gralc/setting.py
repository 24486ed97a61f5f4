"""What data each of the GraLC-RAG notebook's tables runs on, said in words for captions.

The paper runs Tables 1–2 on PubMedQA* (1,000 abstracts, one question each, gold = the
question's source abstract) and Tables 3–6 on PMC Open Access full texts. The notebook runs
all of them on one data set, so each caption says which setting it actually had: whole
PubMedQA abstracts (the paper's own setting for Tables 1–2), the abstract section of JATS
articles with template questions about the full article (harder: the questions were not
written from the abstract), or whole documents when there is no abstract.
"""
from __future__ import annotations

from typing import Mapping

from ...core.types import Dataset
from .gradient import CONDITIONS, is_abstract

JATS_LOADERS = ("biomed_articles", "pmc_oa")
PAPER_ABSTRACTS = 1000


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
        size = "the paper's size" if len(docs) == PAPER_ABSTRACTS else f"the paper used {PAPER_ABSTRACTS:,}"
        return (f"PubMedQA*: {len(docs):,} full abstracts (all context sections), {n_q:,} questions, one each, "
                f"gold = its source abstract — the paper's setting ({size})")
    if dataset.meta.get("condition") == "abstract":
        return (f"abstracts of {len(docs):,} JATS articles, {n_q:,} template questions about the full articles "
                "(gold = the article) — not the paper's PubMedQA* setting")
    return f"{len(docs):,} whole documents (none has an abstract), {n_q:,} questions — not the paper's setting"


def table1_like_for_like(dataset: Dataset) -> bool:
    """Tables 1-2 are like-for-like with the paper's (same kind of data, model and metric) only on whole
    PubMedQA abstracts, the paper's PubMedQA* setting; other data sets make the paper's numbers a
    reference, not a value our interval could contain or miss."""
    return bool(dataset.documents) and all(is_abstract(d) for d in dataset.documents)


def missing_conditions(runs: Mapping[str, object], wanted=CONDITIONS) -> str:
    """A sentence naming the document-length conditions this data set has none of ("" when all ran)."""
    missing = [c for c in wanted if c not in runs]
    if not missing:
        return ""
    why = ("its documents are abstracts, with no article around them" if list(runs) == ["abstract"]
           else "no document has the sections they need")
    return (f"No {', '.join(missing)} condition here: {why}. The paper runs these tables on PMC Open Access "
            "full texts (preset paper_pmc).")
