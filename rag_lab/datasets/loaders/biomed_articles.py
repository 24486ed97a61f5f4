"""``biomed_articles``: the project's twelve fictional JATS full texts (``data/biomed_articles``)
as Documents with sections, and cross-section questions from GraLC-RAG's five templates
(slots from the parsed sections and concepts linked with ``data/biomed_concepts``)."""
from __future__ import annotations

import logging
import os
from pathlib import Path

from .. import DATA_DIR, register_loader
from ...core.types import Dataset

log = logging.getLogger(__name__)


def jats_dataset(name: str, folder: Path, articles: int | None, concepts, seed: int, per_template: int,
                 questions: bool = True, imrad_only: bool = False, min_words: int = 0,
                 duplicates: str = "skip") -> Dataset:
    """Parse a JATS folder, optionally keep IMRaD articles only, and generate template questions.

    Files are parsed one at a time and parsing stops once ``articles`` documents are kept, so a
    small ``articles`` reads a large folder quickly. ``meta`` counts what was read and left out
    (by article type), which articles had no body or needed a repair, and the files skipped because
    their article id was taken by an earlier file (``duplicates``: "skip", or "refuse" to stop there)."""
    from collections import Counter

    from ..jats import iter_jats_folder
    from ..linking import ConceptLinker
    from ..section_questions import QuestionGenerator
    from ..structure import sections_by_role
    from ..vocabulary import load_vocabulary

    docs, read, left_out = [], Counter(), Counter()
    abstract_only, repaired, duplicated = [], [], []
    for d in iter_jats_folder(folder, duplicates, duplicated):
        kind = d.meta.get("article_type") or "unknown"
        read[kind] += 1
        abstract_only += [d.id] if not d.meta.get("has_body", True) else []
        repaired += [d.id] if d.meta.get("repairs") else []
        if imrad_only and not ({"intro", "methods", "results", "discussion"} <= set(sections_by_role(d))
                               and len(d.text.split()) >= min_words):
            left_out[kind] += 1
            continue
        docs.append(d)
        if articles and len(docs) >= articles:
            break
    if not docs:
        raise ValueError(f"{folder}: no article left after filtering (imrad_only={imrad_only}, min_words={min_words}; "
                         f"read {sum(read.values())} by type {dict(read)})")
    linker = ConceptLinker(load_vocabulary(concepts))
    qs = QuestionGenerator(linker, seed, per_template).for_documents(docs) if questions else []
    meta = {"path": str(folder), "seed": seed, "per_template": per_template,
            "concepts": str(concepts) if concepts is not None else "data/biomed_concepts/concepts.jsonl",
            "articles_read": dict(read), "left_out_by_filter": dict(left_out), "abstract_only": abstract_only,
            "repaired": repaired, "duplicates_skipped": duplicated}
    if left_out or abstract_only or repaired or duplicated:
        log.info("%s: read %d articles %s; left out by the IMRaD filter %s; abstract only: %d; repaired: %d; "
                 "skipped as duplicate ids: %d", folder, sum(read.values()), dict(read), dict(left_out),
                 len(abstract_only), len(repaired), len(duplicated))
    return Dataset(name, docs, qs, meta)


@register_loader("biomed_articles", "Twelve fictional JATS research articles (cardiometabolic/kidney) with "
                                    "GraLC-RAG template cross-section questions")
def load_biomed_articles(path: str | Path | None = None, articles: int | None = None, concepts=None, seed: int = 0,
                         per_template: int = 1, duplicates: str = "skip") -> Dataset:
    folder = Path(path or os.environ.get("RAG_LAB_DATA_BIOMED_ARTICLES") or DATA_DIR / "biomed_articles")
    if not folder.is_dir():
        raise FileNotFoundError(f"biomed_articles: folder {folder} not found; it ships with the repository under "
                                "data/biomed_articles (or set RAG_LAB_DATA_BIOMED_ARTICLES to a folder of JATS files)")
    return jats_dataset("biomed_articles", folder, articles, concepts, seed, per_template, duplicates=duplicates)
