"""Notebook 10's ``real`` preset timed on a stand-in of its data: the same four formats, the same sizes.

    python benchmarks/real_standin.py [--out DIR] [--scale 1.0] [--run] [--json FILE]

The papers' files cannot be fetched here, so this writes files in their upstream formats at the
sizes the preset reads (``notebooks/10_compare_retrieval.real.yaml``):

- PubMedQA ``ori_pqal.json``: 300 records, abstracts of about 1,270 characters (the mean of the
  first 150 real PQA-L records, measured in issue 53) in 3 labelled paragraphs;
- RAGBench COVID-QA ``covidqa/test-00000-of-00001.jsonl``: 300 rows of 4 passages (about 1,300
  characters each) drawn from 420, one or two relevant sentences a row;
- QuALITY ``QuALITY.v1.0.1.htmlstripped.dev``: 8 articles of about 28,000 characters, 11 or 12
  four-option questions each (92 in all, as the real dev file's first 8 articles give);
- PMC JATS: 20 articles, the 12 shipped ``biomed_articles`` and 8 distinct copies of them.

About 1.5 M characters in all, the size issues 53 and 55 measured for the preset. Texts are the
project's own corpora (fenwold_gazetteer, ml_encyclopedia, italian_cuisine), sentence by sentence;
each reuse of a sentence is made distinct by ``benchmarking.distinct_text`` (it costs the uncased
encoder what the original costs, while every cache and de-duplication sees a new text), so nothing
is served from a cache a real corpus would miss. ``--scale`` shrinks every count (a quick trial).

``--run``: runs ``rag_lab run 10_compare_retrieval --preset real`` on the stand-in in empty caches,
stamps the compare cell's "data set i of n" lines as they come, and prints each data set's seconds
(the unit the runner's ``per_dataset`` cell timeout is given per data set) and every cell's seconds.
Timing, not a test: run it alone.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_lab.compare.benchmarking import distinct_text  # noqa: E402
from rag_lab.core.chunking import sentence_spans  # noqa: E402
from rag_lab.datasets import load_dataset  # noqa: E402

SIZES = {"pubmedqa_records": 300, "abstract_chars": 1270, "covidqa_rows": 300, "covidqa_passages": 420,
         "passage_chars": 1300, "quality_articles": 8, "article_chars": 28000, "pmc_articles": 20}
BITS = 6   # up to 63 distinct copies of one sentence


class Sentences:
    """The shipped corpora's sentences in a fixed order, every pass over them a distinct copy."""

    def __init__(self, names=("fenwold_gazetteer", "ml_encyclopedia", "italian_cuisine")):
        self.pool = [s for name in names for doc in load_dataset(name).documents
                     for s in (doc.text[a:b] for a, b in sentence_spans(doc.text)) if 40 <= len(s) <= 300 and "\n" not in s]
        self.used = len(self.pool)   # copy 0 (the shipped text itself) is never handed out

    def take(self) -> str:
        s = self.pool[self.used % len(self.pool)]
        copy = self.used // len(self.pool)
        self.used += 1
        if copy >= 2 ** BITS:
            raise ValueError(f"the stand-in needs more than {2 ** BITS} copies of each sentence; lower --scale")
        return distinct_text(s, copy, BITS)

    def about(self, chars: int) -> list[str]:
        out = [self.take()]
        while sum(map(len, out)) + len(out) < chars:
            out.append(self.take())
        return out


def _question(sentence: str, form: str) -> str:
    words = re.findall(r"[\w'-]+", sentence)
    return form.format(" ".join(words[:7]).lower())


def write_pubmedqa(folder: Path, text: Sentences, n: int, chars: int, rng: random.Random) -> None:
    records = {}
    for i in range(n):
        sents = text.about(int(chars * rng.uniform(0.7, 1.3)))
        third = max(1, len(sents) // 3)
        paragraphs = [" ".join(sents[:third]), " ".join(sents[third:2 * third]), " ".join(sents[2 * third:])]
        records[str(80_000_000 + i)] = {
            "QUESTION": _question(sents[-1], "Does the record report {}?"), "CONTEXTS": [p for p in paragraphs if p],
            "LABELS": ["BACKGROUND", "METHODS", "RESULTS"][:len([p for p in paragraphs if p])],
            "MESHES": sorted(set(re.findall(r"\b[A-Z][a-z]{4,}\b", " ".join(sents))))[:4], "YEAR": str(2000 + i % 20),
            "reasoning_required_pred": "yes", "reasoning_free_pred": "yes",
            "final_decision": ("yes", "no", "maybe")[i % 3], "LONG_ANSWER": text.take()}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ori_pqal.json").write_text(json.dumps(records), encoding="utf-8")


def write_covidqa(root: Path, text: Sentences, rows: int, passages: int, chars: int, rng: random.Random) -> None:
    pool = [text.about(int(chars * rng.uniform(0.7, 1.3)))[:26] for _ in range(passages)]   # keys a..z
    lines = []
    for i in range(rows):
        picked = rng.sample(range(passages), 4)
        docs = [pool[p] for p in picked]
        relevant = [f"0{chr(97 + j)}" for j in sorted(rng.sample(range(len(docs[0])), min(2, len(docs[0]))))][:1 + i % 2]
        answer = " ".join(docs[0][ord(k[1]) - 97] for k in relevant)
        lines.append(json.dumps({
            "id": f"standin-{i}", "question": _question(docs[0][ord(relevant[0][1]) - 97], "What is said of {}?"),
            "documents": [" ".join(d) for d in docs], "response": answer, "generation_model_name": "stand-in",
            "annotating_model_name": "stand-in", "dataset_name": "covidqa",
            "documents_sentences": [[[f"{j}{chr(97 + m)}", s] for m, s in enumerate(d)] for j, d in enumerate(docs)],
            "response_sentences": [["a", answer]], "all_relevant_sentence_keys": relevant,
            "all_utilized_sentence_keys": relevant, "unsupported_response_sentence_keys": [],
            "adherence_score": True, "relevance_score": 0.5, "utilization_score": 0.5, "completeness_score": 1.0}))
    (root / "covidqa").mkdir(parents=True, exist_ok=True)
    (root / "covidqa" / "test-00000-of-00001.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_quality(folder: Path, text: Sentences, articles: int, chars: int, rng: random.Random) -> None:
    lines = []
    for a in range(articles):
        sents = text.about(chars)
        paragraphs = ["\n\n".join([f"ARTICLE {a + 1}"] + [" ".join(sents[i:i + 5]) for i in range(0, len(sents), 5)])]
        questions = []
        for q in range(12 if a < 4 else 11):   # 8 articles: 92 questions
            options = [_question(text.take(), "{}") for _ in range(4)]
            gold = rng.randint(1, 4)
            questions.append({"question": _question(rng.choice(sents), "What does the story say of {}?"),
                              "options": options, "writer_label": gold, "difficult": q % 2,
                              "question_unique_id": f"{90_000 + a}_1_{q + 1}", "gold_label": gold,
                              "validation": [], "speed_validation": []})
        lines.append(json.dumps({"article_id": str(90_000 + a), "set_unique_id": f"{90_000 + a}_1", "batch_num": "1",
                                 "writer_id": "1", "source": "stand-in", "title": f"Article {a + 1}", "year": "1950",
                                 "author": "stand-in", "topic": "stand-in", "url": "", "license": "stand-in",
                                 "article": paragraphs[0], "questions": questions}))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "QuALITY.v1.0.1.htmlstripped.dev").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_pmc(folder: Path, n: int) -> None:
    """``n`` JATS files cycling through the shipped biomed_articles; copy c's text nodes made distinct."""
    sources = sorted((ROOT / "data" / "biomed_articles").glob("*.xml"))
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        src, copy = sources[i % len(sources)], i // len(sources)
        xml = src.read_text(encoding="utf-8")
        if copy:
            xml = re.sub(r">([^<]+)<", lambda m: ">" + distinct_text(m.group(1), copy, BITS) + "<", xml)
            xml = re.sub(r"&([A-Za-z]+);", lambda m: f"&{m.group(1).lower()};", xml)   # entity names as they were
            xml = re.sub(r"(<article-id[^>]*>)([^<]+)", lambda m: f"{m.group(1)}{m.group(2)}-copy{copy}", xml)
        (folder / f"{src.stem}{'-copy' + str(copy) if copy else ''}.xml").write_text(xml, encoding="utf-8")


def write_standin(out: Path, scale: float = 1.0, seed: int = 0) -> dict[str, Path]:
    """The four data sets under ``out``; returns the RAG_LAB_DATA_* variable -> folder a run reads."""
    n = {k: max(1, round(v * scale)) if not k.endswith("chars") else v for k, v in SIZES.items()}
    rng, text = random.Random(seed), Sentences()
    write_pubmedqa(out / "pubmedqa", text, n["pubmedqa_records"], n["abstract_chars"], rng)
    write_covidqa(out / "ragbench", text, n["covidqa_rows"], n["covidqa_passages"], n["passage_chars"], rng)
    write_quality(out / "quality", text, n["quality_articles"], n["article_chars"], rng)
    write_pmc(out / "pmc_oa", n["pmc_articles"])
    return {"RAG_LAB_DATA_PUBMEDQA": out / "pubmedqa", "RAG_LAB_DATA_RAGBENCH": out / "ragbench",
            "RAG_LAB_DATA_QUALITY": out / "quality", "RAG_LAB_DATA_PMC_OA": out / "pmc_oa"}


def characters(env: dict[str, Path], preset_options: dict[str, dict]) -> dict[str, tuple[int, int, int]]:
    """Data set -> (documents, questions, characters) as the preset's loaders read the stand-in."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        out = {}
        for name, options in preset_options.items():
            data = load_dataset(name, **options)
            out[name] = (len(data.documents), len(data.questions), sum(len(d.text) for d in data.documents))
        return out
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def run_preset(env: dict[str, Path], cache: Path) -> dict:
    """``rag_lab run 10_compare_retrieval --preset real`` on the stand-in: per data set and per cell seconds."""
    full = {**os.environ, **{k: str(v) for k, v in env.items()}, "RAG_LAB_CACHE": str(cache),
            "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "rag_lab", "run", "10_compare_retrieval", "--preset", "real"]
    start = time.monotonic()
    stamps, lines = [], []
    with subprocess.Popen(cmd, cwd=ROOT, env=full, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stderr:
            lines.append(line.rstrip())
            found = re.search(r"data set \d+ of \d+: .*", line)
            if found:
                stamps.append((time.monotonic() - start, found.group()))
                print(f"{stamps[-1][0]:8.1f} s  {found.group()}", flush=True)
        stdout = proc.stdout.read()
    wall = time.monotonic() - start
    run_dir = max((ROOT / "papermill_runs").iterdir(), key=lambda p: p.stat().st_mtime)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    entry = next(iter(manifest["notebooks"].values())) if isinstance(manifest.get("notebooks"), dict) else manifest
    cells = entry["notebooks"][0]["cells"]
    compare_cell = max(cells, key=lambda c: c["seconds"])
    # the first data set is announced as the compare cell starts (after its load): its stamp + the cell's
    # seconds is where the cell ends, which closes the last data set's span
    ends = [t for t, _ in stamps[1:]] + [stamps[0][0] + compare_cell["seconds"]] if stamps else []
    per_data_set = {line.split(": ", 1)[1].split(",")[0]: round(end - t, 1) for (t, line), end in zip(stamps, ends)}
    for name, seconds in per_data_set.items():
        print(f"{name}: {seconds:.0f} s")
    print("cells over 5 s:", [(c["index"], round(c["seconds"])) for c in cells if c["seconds"] > 5])
    return {"returncode": proc.returncode, "wall_seconds": round(wall, 1), "run": run_dir.name,
            "data_set_starts": stamps, "per_data_set_seconds": per_data_set, "cells": cells,
            "manifest_entry": entry, "stdout_tail": stdout[-2000:],
            "stderr_tail": lines[-30:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="where to write the stand-in (default: a temporary folder)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every count (records, rows, articles)")
    ap.add_argument("--run", action="store_true", help="time the preset on it (alone on the machine)")
    ap.add_argument("--json", type=Path, default=None, help="write what was measured here")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="rag_lab_real_standin_"))
    env = write_standin(out, args.scale)
    from rag_lab.runs.presets import load_preset
    options = load_preset(ROOT / "notebooks" / "10_compare_retrieval.ipynb", "real").parameters["dataset_options"]
    sizes = characters(env, options)
    report = {"out": str(out), "scale": args.scale, "sizes": sizes,
              "characters": sum(c for _, _, c in sizes.values())}
    for name, (docs, questions, chars) in sizes.items():
        print(f"{name}: {docs} documents, {questions} questions, {chars:,} characters")
    print(f"in all: {report['characters']:,} characters, under {out}")
    if args.run:
        report["run"] = run_preset(env, Path(tempfile.mkdtemp(prefix="rag_lab_real_cache_")))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
