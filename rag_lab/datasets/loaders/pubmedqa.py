"""``pubmedqa``: PubMedQA (Jin et al., 2019) in the generic form, as the GraLC-RAG paper uses it
(PubMedQA*: the given contexts become the retrieval corpus).

Input: ``ori_pqal.json`` from https://github.com/pubmedqa/pubmedqa (``data/``), a JSON object
PMID -> {QUESTION, CONTEXTS, LABELS, MESHES, YEAR, reasoning_*_pred, final_decision,
LONG_ANSWER}; ``ori_pqaa.json`` / ``ori_pqau.json`` have the same layout. Pass the file (or
its folder) as ``path`` or set ``RAG_LAB_DATA_PUBMEDQA``; else ``<data cache>/pubmedqa/ori_pqal.json``
is read (``python -m rag_lab download pubmedqa`` puts it there); with ``source="hf"`` the Hugging
Face dataset ``qiaojin/PubMedQA`` (config ``pqa_labeled``) is read instead, which needs the
network or a local Hugging Face cache.

Mapping: one document per PMID, its text the contexts joined by blank lines, one section
per context titled with its label (BACKGROUND, METHODS …); one question per PMID whose gold
document is that PMID, answer = LONG_ANSWER, and the yes/no/maybe decision (lower case,
whatever case the file uses) and MeSH terms in ``meta``. Every document is a whole abstract
minus its conclusion (``meta["kind"] = "abstract"``), so the GraLC-RAG length gradient takes
the document itself as the abstract condition. Text is cleaned of HTML entities and inline
markup; empty contexts are dropped, and a record with no text left is skipped and listed in
``dataset.meta["records_without_context"]``.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Mapping

from .. import register_loader
from ..cache import dataset_dir, download_hint
from ...core.types import Dataset, Document, Question, Section
from ..text_blocks import TextBlocks
from ..text_clean import clean_text, normalise_label
from ..upstream_files import read_json

log = logging.getLogger(__name__)

ENV = "RAG_LAB_DATA_PUBMEDQA"
HF_NAME, HF_CONFIG = "qiaojin/PubMedQA", "pqa_labeled"


DECISIONS = ("yes", "no", "maybe")


def _contexts(pmid: str, rec: Mapping, where: str) -> list[tuple[str, str]]:
    """(label, text) of each non-empty context, cleaned; labels may be absent."""
    contexts = rec["CONTEXTS"]
    if isinstance(contexts, str):
        contexts = [contexts]
    if not isinstance(contexts, (list, tuple)):
        raise ValueError(f"{where}: PMID {pmid}: CONTEXTS must be a list of strings, got {type(contexts).__name__}")
    labels = list(rec.get("LABELS") or [])
    if labels and len(labels) != len(contexts):
        raise ValueError(f"{where}: PMID {pmid}: {len(labels)} LABELS for {len(contexts)} CONTEXTS "
                         "(expected one label per context, or none)")
    out = []
    for i, ctx in enumerate(contexts):
        text = clean_text(ctx)
        if text:
            out.append((clean_text(labels[i]) if labels else "", text))
    return out


def record_to_pair(pmid: str, rec: Mapping, where: str) -> tuple[Document, Question] | None:
    """One record as (abstract document, question); None when every context is empty.

    Tolerates what the released files hold: YEAR as a number or missing, MESHES or LABELS
    missing (PQA-U/PQA-A), final_decision in any case or absent, HTML entities and inline
    markup in the text, and empty context strings (dropped)."""
    if not isinstance(rec, Mapping):
        raise ValueError(f"{where}: PMID {pmid}: expected an object with QUESTION and CONTEXTS, "
                         f"got {type(rec).__name__}")
    for key in ("QUESTION", "CONTEXTS"):
        if key not in rec:
            raise ValueError(f"{where}: PMID {pmid} lacks field {key!r} (expected the ori_pqal.json layout)")
    contexts = _contexts(pmid, rec, where)
    if not contexts:
        return None
    blocks, sections = TextBlocks(), []
    for i, (label, ctx) in enumerate(contexts):
        start, end = blocks.add(ctx)
        sections.append(Section(f"{pmid}:{i + 1}", label, "section", start, end, 1))
    year = clean_text(rec.get("YEAR")) or None
    meta = {"year": year, "meshes": [clean_text(m) for m in rec.get("MESHES") or [] if clean_text(m)],
            "source": "pubmedqa", "kind": "abstract"}
    doc = Document(str(pmid), blocks.text, f"PMID {pmid}", sections, meta)
    decision = normalise_label(rec.get("final_decision"), DECISIONS, f"{where}: PMID {pmid}", "final_decision")
    question = Question(f"pubmedqa-{pmid}", clean_text(rec["QUESTION"]), clean_text(rec.get("LONG_ANSWER")) or None,
                        [str(pmid)], meta={"final_decision": decision, "pmid": str(pmid)})
    return doc, question


def from_records(records: Iterable[tuple[str, Mapping]], where: str, name: str = "pubmedqa") -> Dataset:
    docs, questions, empty = [], [], []
    for pmid, rec in records:
        pair = record_to_pair(str(pmid), rec, where)
        if pair is None:
            empty.append(str(pmid))
            continue
        docs.append(pair[0])
        questions.append(pair[1])
    if empty:
        log.warning("%s: %d record(s) with no non-empty context left out (PMIDs %s)", where, len(empty),
                    ", ".join(empty[:10]) + (" …" if len(empty) > 10 else ""))
    if not docs:
        raise ValueError(f"{where}: no PubMedQA records with text (expected PMID -> record with non-empty CONTEXTS)")
    return Dataset(name, docs, questions, {"source": where, "records_without_context": empty})


def hf_record(row: Mapping) -> tuple[str, dict]:
    """A Hugging Face ``pqa_labeled`` row in the ori_pqal.json field names."""
    ctx = row["context"]
    return str(row["pubid"]), {"QUESTION": row["question"], "CONTEXTS": ctx["contexts"],
                               "LABELS": ctx.get("labels"), "MESHES": ctx.get("meshes", []),
                               "YEAR": ctx.get("year", row.get("year")), "LONG_ANSWER": row.get("long_answer"),
                               "final_decision": row.get("final_decision")}


@register_loader("pubmedqa", "PubMedQA (ori_pqal.json layout): one document per PMID (sections from LABELS), "
                             "question gold = its PMID")
def load_pubmedqa(path: str | Path | None = None, source: str = "file", limit_records: int | None = None) -> Dataset:
    if source == "hf":
        try:
            from datasets import load_dataset as hf_load
            rows = hf_load(HF_NAME, HF_CONFIG, split="train")
        except Exception as e:  # offline, or not cached
            raise FileNotFoundError(f"pubmedqa: could not read the Hugging Face dataset {HF_NAME}/{HF_CONFIG} "
                                    f"({type(e).__name__}: {e}); download ori_pqal.json instead") from e
        records = [hf_record(r) for r in rows][:limit_records]
        return from_records(records, f"hf:{HF_NAME}/{HF_CONFIG}")
    if source != "file":
        raise ValueError(f"pubmedqa: source must be 'file' or 'hf', got {source!r}")
    where = Path(path) if path else dataset_dir("pubmedqa", ENV)
    if where.is_dir():
        where = where / "ori_pqal.json"
    if not where.is_file():
        raise FileNotFoundError(
            f"pubmedqa: ori_pqal.json not found at {where}. {download_hint('pubmedqa')}; or download it from "
            f"https://github.com/pubmedqa/pubmedqa (data/ori_pqal.json) and pass path=FILE_OR_FOLDER or set {ENV}")
    data = read_json(where)
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object PMID -> record, got {type(data).__name__}")
    return from_records(list(data.items())[:limit_records], str(where))
