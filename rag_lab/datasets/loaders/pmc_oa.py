"""``pmc_oa``: PubMed Central Open Access full texts in JATS XML from a local folder.

Download: the bulk packages at https://ftp.ncbi.nlm.nih.gov/pub/pmc/oa_bulk/ (e.g.
``oa_comm/xml/``), or single articles through the PMC OA web service; unpack the ``.xml`` /
``.nxml`` files into one folder (sub-folders are searched) and pass it as ``path`` or set
``RAG_LAB_DATA_PMC_OA``; else ``<data cache>/pmc_oa`` is read, where ``python -m rag_lab download
pmc_oa --ids PMC…`` (or ``--count N --seed S``, a draw from a search) saves articles. As in the GraLC-RAG paper, ``imrad_only`` keeps articles with
Introduction, Methods, Results and Discussion sections and at least ``min_words`` words;
questions come from the paper's five templates (concepts: the shipped vocabulary unless a
concepts ``.jsonl`` or a MeSH ``desc*.xml`` is given).
"""
from __future__ import annotations

from pathlib import Path

from .. import register_loader
from ..cache import dataset_dir, download_hint
from ...core.types import Dataset
from .biomed_articles import jats_dataset

ENV = "RAG_LAB_DATA_PMC_OA"


@register_loader("pmc_oa", "PubMed Central Open Access JATS articles from a local folder (IMRaD filter, template "
                           "cross-section questions)")
def load_pmc_oa(path: str | Path | None = None, articles: int | None = None, concepts=None, seed: int = 0,
                per_template: int = 1, imrad_only: bool = True, min_words: int = 1000,
                questions: bool = True, duplicates: str = "skip") -> Dataset:
    where = Path(path) if path else dataset_dir("pmc_oa", ENV)
    if not where.is_dir():
        raise FileNotFoundError(
            f"pmc_oa: no local copy at {where}. {download_hint('pmc_oa', '--count 200 --seed 0')} (or name the "
            f"articles: --ids PMC1,PMC2,...); or download PMC Open "
            "Access JATS files (bulk packages: https://ftp.ncbi.nlm.nih.gov/pub/pmc/oa_bulk/oa_comm/xml/), unpack the "
            f".xml/.nxml files into a folder and pass path=FOLDER or set {ENV}=FOLDER")
    return jats_dataset("pmc_oa", Path(where), articles, concepts, seed, per_template, questions, imrad_only,
                        min_words, duplicates)
