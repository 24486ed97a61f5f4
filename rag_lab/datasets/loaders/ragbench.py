"""RAGBench (Friel, Belyi & Sanyal, 2024): the COVID-QA, eManual and TechQA subsets the UnWeaver
paper evaluates on, read from a local copy of the Hugging Face dataset ``galileo-ai/ragbench``
(formerly ``rungalileo/ragbench``).

Upstream layout, one folder per subset with one file per split::

    <root>/covidqa/test-00000-of-00001.parquet      (also train-…, validation-…)
    <root>/emanual/…   <root>/techqa/…

JSON Lines files with the same stem (``test-00000-of-00001.jsonl``, one row object per line)
are read too. Columns used: ``id``, ``question``, ``documents`` (the row's passages),
``response`` (the reference answer), ``documents_sentences`` (per passage, ``[key, sentence]``
pairs, keys like "0a", "1c"), ``all_relevant_sentence_keys`` and, kept in ``meta``,
``relevance_score``, ``utilization_score``, ``completeness_score``, ``adherence_score`` and
``generation_model_name``. Other columns are ignored.

Mapping to rag_lab's model: every distinct passage text of the split becomes one ``Document``
(id ``<subset>-<first 12 hex of its sha1>``, so a passage shared by several rows is indexed once:
the corpus is the union of all rows' passages, as a RAG system over the subset would see it).
Each row becomes a ``Question``: answer = ``response``; gold documents = the row's passages that
hold a relevant sentence; gold contexts = those relevant sentences as their passage writes them
(found verbatim, or with different whitespace between the words, as RAGBench's sentence splitter
re-spaces them; sentences not found are left out and counted in ``dataset.meta``). Empty
passages are not indexed (counted too); relevance keys are read in any case. A row
whose annotation marks no sentence relevant keeps no gold, so retrieval metrics skip it while
answer metrics still use it.

Root folder: ``path``, else ``$RAG_LAB_DATA_RAGBENCH``, else ``<data cache>/ragbench`` (where
``python -m rag_lab download ragbench_<subset>`` puts ``<subset>/…``). ``max_rows`` reads
only the first rows of the split (the corpus is then only their passages).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path

from ...core.types import Dataset, Document, Question
from .. import register_loader
from ..cache import dataset_dir, download_hint
from ..upstream_files import parquet_rows

ENV_VAR = "RAG_LAB_DATA_RAGBENCH"
HF_DATASET = "galileo-ai/ragbench"
SUBSETS = ("covidqa", "emanual", "techqa")
SPLITS = ("train", "validation", "test")
META_COLUMNS = ("relevance_score", "utilization_score", "completeness_score", "adherence_score",
                "generation_model_name")
_KEY_CHARS = re.compile(r"[^0-9a-z]")


def split_files(root: Path, subset: str, split: str) -> list[Path]:
    folder = root / subset
    return sorted(folder.glob(f"{split}-*.parquet")) + sorted(folder.glob(f"{split}-*.jsonl"))


def _missing_message(root: Path, subset: str, split: str) -> str:
    return (f"RAGBench subset {subset!r} ({split} split) not found: expected {root / subset}/{split}-00000-of-00001.parquet "
            f"(or .jsonl). {download_hint('ragbench_' + subset, '' if split == 'test' else '--split ' + split)}; "
            f"or download the folder {subset}/ of the Hugging Face "
            f"dataset {HF_DATASET} "
            f"(https://huggingface.co/datasets/{HF_DATASET}/tree/main/{subset}) into {root / subset}/, "
            f"or set {ENV_VAR} to the folder that holds {subset}/.")


def read_rows(path: Path) -> list[dict]:
    """Rows of one split file (parquet or JSON Lines) as plain dicts."""
    if path.suffix == ".parquet":
        return parquet_rows(path)
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{n}: not valid JSON ({e.msg})") from e
    return rows


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and value != value)


def _key(value) -> str:
    return _KEY_CHARS.sub("", str(value).lower())


def _require(row: dict, column: str, where: str):
    if column not in row or row[column] is None:
        raise ValueError(f"{where}: RAGBench row has no {column!r} column; columns present: {sorted(row)}")
    return row[column]


def doc_id(subset: str, text: str) -> str:
    return f"{subset}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}"


def locate(sentence: str, passage: str) -> str | None:
    """The passage's own text of ``sentence``: verbatim, else with any whitespace between its words
    (the annotated sentences were re-spaced by a sentence splitter); None when it is not there."""
    sentence = sentence.strip()
    if not sentence:
        return None
    if sentence in passage:
        return sentence
    m = re.search(r"\s+".join(map(re.escape, sentence.split())), passage)
    return m.group(0) if m else None


def rows_to_dataset(rows: list[dict], subset: str, split: str, source: str = "") -> Dataset:
    documents: dict[str, Document] = {}
    questions, unlocated, empty_passages = [], 0, 0
    for n, row in enumerate(rows, 1):
        where = f"{source or subset} row {n}"
        passages = _require(row, "documents", where)
        if not isinstance(passages, list) or not all(isinstance(p, str) or p is None for p in passages):
            raise ValueError(f"{where}: 'documents' must be a list of strings")
        ids: list[str | None] = []
        for text in passages:
            if not text or not text.strip():   # an empty passage is kept as a hole so sentence keys still line up
                ids.append(None)
                empty_passages += 1
                continue
            did = doc_id(subset, text)
            documents.setdefault(did, Document(did, text, "", meta={"subset": subset, "first_row": str(row.get("id"))}))
            ids.append(did)
        sentences = {}
        for d, pairs in enumerate(row.get("documents_sentences") or []):
            for pair in pairs:
                if isinstance(pair, list) and len(pair) == 2:
                    sentences[_key(pair[0])] = (d, str(pair[1]))
        gold_docs, gold_contexts = [], []
        for key in row.get("all_relevant_sentence_keys") or []:
            if _key(key) not in sentences:
                continue
            d, sentence = sentences[_key(key)]
            if d >= len(ids) or ids[d] is None:
                continue
            gold_docs.append(ids[d])
            found = locate(sentence, passages[d])
            if found:
                gold_contexts.append(found)
            else:
                unlocated += 1
        response = row.get("response")
        questions.append(Question(
            id=str(_require(row, "id", where)), question=" ".join(str(_require(row, "question", where)).split()),
            answer=response.strip() or None if isinstance(response, str) else None,
            gold_doc_ids=list(dict.fromkeys(gold_docs)), gold_contexts=list(dict.fromkeys(gold_contexts)),
            meta={"subset": subset, "split": split, "row_doc_ids": [i for i in ids if i is not None],
                  **{c: row[c] for c in META_COLUMNS if _present(row.get(c))}}))
    return Dataset(f"ragbench_{subset}", list(documents.values()), questions,
                   {"source": HF_DATASET, "subset": subset, "split": split, "rows": len(rows),
                    "unlocated_gold_sentences": unlocated, "empty_passages": empty_passages})


def load_ragbench(subset: str, path: str | os.PathLike | None = None, split: str = "test",
                  max_rows: int | None = None) -> Dataset:
    if subset not in SUBSETS:
        raise ValueError(f"unknown RAGBench subset {subset!r}; this loader reads {', '.join(SUBSETS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown RAGBench split {split!r}; expected one of {', '.join(SPLITS)}")
    if max_rows is not None and max_rows <= 0:
        raise ValueError(f"max_rows must be positive, got {max_rows}")
    root = Path(path) if path is not None else dataset_dir("ragbench", ENV_VAR)
    files = split_files(root, subset, split)
    if not files:
        raise FileNotFoundError(_missing_message(root, subset, split))
    rows = []
    for f in files:
        rows += read_rows(f)
        if max_rows is not None and len(rows) >= max_rows:
            break
    rows = rows[:max_rows] if max_rows is not None else rows
    if not rows:
        raise ValueError(f"{', '.join(map(str, files))}: no rows")
    return rows_to_dataset(rows, subset, split, ", ".join(f.name for f in files))


# one loader per subset the UnWeaver paper evaluates on
for _subset, _title in (("covidqa", "COVID-QA"), ("emanual", "eManual"), ("techqa", "TechQA")):
    register_loader(f"ragbench_{_subset}", f"RAGBench {_title} (local copy of galileo-ai/ragbench "
                                           f"{_subset}/*.parquet)")(functools.partial(load_ragbench, _subset))
