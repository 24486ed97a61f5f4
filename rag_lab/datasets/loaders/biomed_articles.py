"""``biomed_articles``: the project's twelve fictional JATS full texts (``data/biomed_articles``)
as Documents with sections, and cross-section questions from GraLC-RAG's five templates
(slots from the parsed sections and concepts linked with ``data/biomed_concepts``)."""
from __future__ import annotations

import os
from pathlib import Path

from .. import DATA_DIR, register_loader
from ...types import Dataset


def jats_dataset(name: str, folder: Path, articles: int | None, concepts, seed: int, per_template: int,
                 questions: bool = True, imrad_only: bool = False, min_words: int = 0) -> Dataset:
    """Parse a JATS folder, optionally keep IMRaD articles only, and generate template questions."""
    from ..jats import parse_jats_folder
    from ..linking import ConceptLinker
    from ..section_questions import generate_questions
    from ..structure import sections_by_role
    from ..vocabulary import load_vocabulary

    docs = parse_jats_folder(folder)
    if imrad_only:
        docs = [d for d in docs if {"intro", "methods", "results", "discussion"} <= set(sections_by_role(d))
                and len(d.text.split()) >= min_words]
    docs = docs[:articles] if articles else docs
    if not docs:
        raise ValueError(f"{folder}: no article left after filtering (imrad_only={imrad_only}, min_words={min_words})")
    qs = generate_questions(docs, ConceptLinker(load_vocabulary(concepts)), seed, per_template) if questions else []
    meta = {"path": str(folder), "seed": seed, "per_template": per_template,
            "concepts": str(concepts) if concepts is not None else "data/biomed_concepts/concepts.jsonl"}
    return Dataset(name, docs, qs, meta)


@register_loader("biomed_articles", "Twelve fictional JATS research articles (cardiometabolic/kidney) with "
                                    "GraLC-RAG template cross-section questions")
def load_biomed_articles(path: str | Path | None = None, articles: int | None = None, concepts=None, seed: int = 0,
                         per_template: int = 1) -> Dataset:
    folder = Path(path or os.environ.get("RAG_LAB_DATA_BIOMED_ARTICLES") or DATA_DIR / "biomed_articles")
    if not folder.is_dir():
        raise FileNotFoundError(f"biomed_articles: folder {folder} not found; it ships with the repository under "
                                "data/biomed_articles (or set RAG_LAB_DATA_BIOMED_ARTICLES to a folder of JATS files)")
    return jats_dataset("biomed_articles", folder, articles, concepts, seed, per_template)
