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
document is that PMID, answer = LONG_ANSWER, and the yes/no/maybe decision and MeSH terms
in ``meta``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

from .. import register_loader
from ..cache import dataset_dir, download_hint
from ...types import Dataset, Document, Question, Section

ENV = "RAG_LAB_DATA_PUBMEDQA"
HF_NAME, HF_CONFIG = "qiaojin/PubMedQA", "pqa_labeled"


def record_to_pair(pmid: str, rec: Mapping, where: str) -> tuple[Document, Question]:
    for key in ("QUESTION", "CONTEXTS"):
        if key not in rec:
            raise ValueError(f"{where}: PMID {pmid} lacks field {key!r} (expected the ori_pqal.json layout)")
    contexts = rec["CONTEXTS"]
    if not isinstance(contexts, list) or not contexts or not all(isinstance(c, str) for c in contexts):
        raise ValueError(f"{where}: PMID {pmid}: CONTEXTS must be a non-empty list of strings")
    labels = list(rec.get("LABELS") or [])
    if labels and len(labels) != len(contexts):
        raise ValueError(f"{where}: PMID {pmid}: {len(labels)} LABELS for {len(contexts)} CONTEXTS")
    parts, sections, pos = [], [], 0
    for i, ctx in enumerate(contexts):
        ctx = " ".join(ctx.split())
        if parts:
            parts.append("\n\n")
            pos += 2
        sections.append(Section(f"{pmid}:{i + 1}", labels[i] if labels else "", "section", pos, pos + len(ctx), 1))
        parts.append(ctx)
        pos += len(ctx)
    meta = {"year": rec.get("YEAR"), "meshes": list(rec.get("MESHES") or []), "source": "pubmedqa"}
    doc = Document(str(pmid), "".join(parts), f"PMID {pmid}", sections, meta)
    question = Question(f"pubmedqa-{pmid}", rec["QUESTION"], rec.get("LONG_ANSWER") or None, [str(pmid)],
                        meta={"final_decision": rec.get("final_decision"), "pmid": str(pmid)})
    return doc, question


def from_records(records: Iterable[tuple[str, Mapping]], where: str, name: str = "pubmedqa") -> Dataset:
    docs, questions = [], []
    for pmid, rec in records:
        d, q = record_to_pair(str(pmid), rec, where)
        docs.append(d)
        questions.append(q)
    if not docs:
        raise ValueError(f"{where}: no PubMedQA records")
    return Dataset(name, docs, questions, {"source": where})


def hf_record(row: Mapping) -> tuple[str, dict]:
    """A Hugging Face ``pqa_labeled`` row in the ori_pqal.json field names."""
    ctx = row["context"]
    return str(row["pubid"]), {"QUESTION": row["question"], "CONTEXTS": ctx["contexts"], "LABELS": ctx["labels"],
                               "MESHES": ctx.get("meshes", []), "LONG_ANSWER": row.get("long_answer"),
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
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: invalid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object PMID -> record, got {type(data).__name__}")
    return from_records(list(data.items())[:limit_records], str(where))
