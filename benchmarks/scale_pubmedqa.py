"""How long GraLC-RAG's paper preset takes on the 1,000 PubMedQA abstracts, estimated on this machine.

    python benchmarks/scale_pubmedqa.py [--source ori_pqal.json] [--sizes 35 140] [--words 200]

Runs notebook 04 with ``--preset paper`` on two scaled copies of an ori_pqal.json file (records
repeated under new PMIDs, every sentence given a copy number so no embedding is served from a
cache), reads each cell's duration from the executed notebook, fits per cell a fixed cost plus a
cost per abstract, and scales the per-abstract cost by the ratio of MiniLM tokens in a real
abstract (``--words`` words, the GraLC paper's "about 200"; tokens per word measured on the
source) to those in the source's abstracts. Prints the estimate for ``--target`` abstracts per
table and writes it as JSON (``--out``). Timing, not a test: run it alone, under the model lock.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.runs.presets import apply_preset  # noqa: E402
from rag_lab.runs.runner import run_notebooks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# cell id -> (what it does, the preset parameter capping how many abstracts it handles, or None)
CELLS = {"84969818": ("Table 1-2 (six strategies built and queried on the abstracts)", None),
         "ff1c2f00": ("corpus table (concept linking)", None), "b354581f": ("length conditions (tokenising)", None),
         "6b86ebc0": ("Table 3 (cold indexing of efficiency_articles)", "efficiency_articles"),
         "bb706deb": ("Table 6 (answers for generation_questions)", "generation_questions"),
         "4646d18b": ("lambda sweep (gralc-kg per lambda)", None), "99b2eb64": ("boundary trace (one abstract)", 1)}


def scaled_file(source: Path, n: int, folder: Path) -> Path:
    records = list(json.loads(source.read_text(encoding="utf-8-sig")).items())
    records = [(k, r) for k, r in records if any(str(c).strip() for c in r.get("CONTEXTS") or [])]
    out = {}
    for i in range(n):
        pmid, rec = records[i % len(records)]
        copy = i // len(records)
        contexts = [re.sub(r"\.(\s|$)", f" (copy {copy} of {n}).\\1", c) for c in rec["CONTEXTS"]]
        out[f"{pmid}{copy:03d}"] = {**rec, "CONTEXTS": contexts}
    path = folder / f"ori_pqal_{n}.json"
    path.write_text(json.dumps(out), encoding="utf-8")
    return path


def cell_seconds(executed: Path) -> dict[str, float]:
    nb = json.loads(executed.read_text(encoding="utf-8"))
    return {c.get("id"): float(c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0)
            for c in nb["cells"] if c["cell_type"] == "code"}


def tokens_per_abstract_and_word(path: Path) -> tuple[float, float]:
    from rag_lab.datasets.loaders.pubmedqa import load_pubmedqa
    from rag_lab.core.embedding import shared_embedder

    data = load_pubmedqa(path)
    emb = shared_embedder()
    tokens = [len(emb.tokenize_with_offsets(d.text)[0]) for d in data.documents]
    words = [len(d.text.split()) for d in data.documents]
    return sum(tokens) / len(tokens), sum(tokens) / sum(words)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=str(ROOT / "tests/fixtures/pubmedqa_pqal/ori_pqal.json"))
    ap.add_argument("--sizes", type=int, nargs=2, default=[35, 140])
    ap.add_argument("--target", type=int, default=1000)
    ap.add_argument("--words", type=float, default=200.0, help="words in a real abstract (GraLC paper: about 200)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        per_size, tokens = {}, None
        for n in args.sizes:
            data = scaled_file(Path(args.source), n, tmp)
            tokens = tokens or tokens_per_abstract_and_word(data)
            names, per = apply_preset(["04_gralc_rag"], "paper", {"data_path": str(data)})
            os.environ["RAG_LAB_CACHE"] = str(tmp / f"cache-{n}")   # cold caches, as on a first run
            manifest = run_notebooks(names, {}, run_id=f"scale-{n}", runs_dir=tmp / "runs",
                                     figures_root=tmp / f"figures-{n}", per_notebook=per, progress=False)
            entry = manifest["notebooks"][0]
            if entry["status"] != "ok":
                print(entry.get("traceback", entry.get("error")))
                return 1
            per_size[n] = {"total": entry["seconds"], **cell_seconds(Path(entry["output"]))}
    (a, b), (tok_abstract, tok_word) = args.sizes, tokens
    scale = args.words * tok_word / tok_abstract
    caps = per[next(iter(per))]
    rows = {}
    for cell, (label, cap) in CELLS.items():
        limit = caps.get(cap) if isinstance(cap, str) else cap
        items = [min(n, limit) if limit else n for n in (a, b, args.target)]
        slope = (per_size[b][cell] - per_size[a][cell]) / (items[1] - items[0]) if items[1] != items[0] else 0.0
        fixed = per_size[a][cell] - slope * items[0]
        estimate = max(fixed, 0.0) + slope * scale * items[2]
        rows[label] = {"measured": {str(n): round(per_size[n][cell], 2) for n in args.sizes},
                       "per_abstract_s": round(slope, 4), "fixed_s": round(fixed, 2), "estimate_s": round(estimate, 1)}
        print(f"{label:62s} {per_size[a][cell]:7.1f}s @{a} {per_size[b][cell]:7.1f}s @{b}  "
              f"-> {estimate / 60:6.1f} min @{args.target}")
    rest = {n: per_size[n]["total"] - sum(per_size[n][c] for c in CELLS) for n in args.sizes}
    slope = (rest[b] - rest[a]) / (b - a)
    other = max(rest[a] - slope * a, 0.0) + max(slope, 0.0) * scale * args.target
    whole = other + sum(r["estimate_s"] for r in rows.values())
    rows["other cells and start-up"] = {"measured": {str(n): round(rest[n], 2) for n in args.sizes},
                                        "estimate_s": round(other, 1)}
    rows["whole notebook"] = {"measured": {str(n): round(per_size[n]["total"], 2) for n in args.sizes},
                              "estimate_s": round(whole, 1)}
    print(f"{'other cells and start-up':62s} -> {other / 60:6.1f} min;  whole notebook -> {whole / 60:6.1f} min")
    report = {"sizes": args.sizes, "target": args.target, "cpu_count": os.cpu_count(),
              "tokens_per_source_abstract": round(tok_abstract, 1), "tokens_per_word": round(tok_word, 3),
              "words_per_real_abstract": args.words, "per_abstract_scale": round(scale, 3), "cells": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "cells"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
