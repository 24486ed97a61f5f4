"""Section "reproduce" of benchmarks/run.py: ``make reproduce`` cold, then warm, on this machine.

    python benchmarks/reproduce_timing.py [--out reproduce.json] [--keep DIR]

Cold: ``python -m rag_lab run`` (every notebook, as ``make reproduce`` does) with ``RAG_LAB_CACHE``
pointing to an empty temporary folder (no embeddings, offline-reasoner results or indexes kept).
Warm: the same command again over that folder. Each run writes its executed notebooks, manifest
and figures inside the folder, so the repository's figures/ and papermill_runs/ are untouched.
Reported: wall seconds of each run and each notebook's seconds (from the run manifests), the
targets (cold <= 600 s, warm <= 180 s) and whether the two runs wrote the same tables: every CSV
under the figures folders compared cell by cell, leaving out columns and tidy rows that hold a
measurement of time or memory (names matched by ``MEASURED``), which no two runs share.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD_LIMIT_S = 600.0
WARM_LIMIT_S = 180.0
# a column or metric holding a time, speed or memory measurement (differs between any two runs)
MEASURED = re.compile(r"second|_s$|_s@|\(s\)|_ms\b|latency|time|speed|per_s|heap|memory|_mb\b|\bmb\b", re.I)


def run_all(cache: Path, label: str) -> dict:
    """``python -m rag_lab run`` of every notebook with RAG_LAB_CACHE=cache; wall seconds and manifest."""
    env = {**os.environ, "RAG_LAB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("RAG_LAB_REUSE", None)   # measured as a user runs it: reuse on
    runs = cache.parent / "runs"
    cmd = [sys.executable, "-m", "rag_lab", "run", "--run-id", label, "--runs-dir", str(runs),
           "--figures-dir", str(cache.parent / f"figures-{label}")]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    manifest_path = runs / label / "manifest.json"
    if not manifest_path.exists():
        raise RuntimeError(f"{label} run wrote no manifest (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                           f"{proc.stderr[-2000:]}")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    def slowest(nb):
        return sorted(nb.get("cells", []), key=lambda c: -(c.get("seconds") or 0))[:3]
    notebooks = {nb["notebook"]: {"seconds": round(nb["seconds"], 1), "status": nb["status"],
                                  "slowest_cells": slowest(nb)} for nb in manifest["notebooks"]}
    return {"wall_seconds": round(wall, 1), "status": manifest["status"], "notebooks": notebooks}


def _comparable(frame):
    """The table without its measured columns and tidy measurement rows."""
    keep = [c for c in frame.columns if not MEASURED.search(str(c))]
    frame = frame[keep]
    if "metric" in frame.columns:
        frame = frame[~frame["metric"].astype(str).str.contains(MEASURED)]
    return frame.reset_index(drop=True)


def compare_tables(cold: Path, warm: Path) -> dict:
    """CSV tables of the two runs: which exist in only one, which differ outside measured columns."""
    import pandas as pd

    a = {p.relative_to(cold): p for p in cold.rglob("*.csv")}
    b = {p.relative_to(warm): p for p in warm.rglob("*.csv")}
    differ = []
    for rel in sorted(set(a) & set(b)):
        x, y = _comparable(pd.read_csv(a[rel])), _comparable(pd.read_csv(b[rel]))
        if list(x.columns) != list(y.columns) or not x.equals(y):
            differ.append(str(rel))
    return {"tables": len(set(a) & set(b)), "only_cold": sorted(map(str, set(a) - set(b))),
            "only_warm": sorted(map(str, set(b) - set(a))), "differ": differ,
            "identical": not differ and set(a) == set(b)}


def target(measured: float, limit: float) -> dict:
    return {"measured": round(float(measured), 1), "limit": limit, "holds": bool(measured <= limit)}


def reproduce_section(keep: Path | None = None) -> tuple[dict, dict]:
    """Cold then warm; (targets, details) in benchmarks/run.py's shape, printed as it goes."""
    with tempfile.TemporaryDirectory(prefix="rag_lab_reproduce_") as tmp:
        base = Path(keep) if keep else Path(tmp)
        cache = base / "cache"
        cache.mkdir(parents=True, exist_ok=False)
        details = {}
        for label in ("cold", "warm"):
            print(f"reproduce: {label} run (RAG_LAB_CACHE={cache}) ...", flush=True)
            details[label] = run_all(cache, label)
            print(f"reproduce: {label} {details[label]['wall_seconds']:.0f} s, " + ", ".join(
                f"{n} {r['seconds']:.0f}" for n, r in details[label]["notebooks"].items()), flush=True)
        details["tables"] = compare_tables(base / "figures-cold", base / "figures-warm")
    ok = details["cold"]["status"] == details["warm"]["status"] == "ok" and details["tables"]["identical"]
    targets = {"reproduce_cold_s": target(details["cold"]["wall_seconds"], COLD_LIMIT_S),
               "reproduce_warm_s": target(details["warm"]["wall_seconds"], WARM_LIMIT_S),
               "reproduce_same_outputs": {"measured": ok, "limit": True, "holds": ok}}
    print(f"reproduce: tables compared {details['tables']['tables']}, differing {details['tables']['differ']}, "
          f"only in one run {details['tables']['only_cold'] + details['tables']['only_warm']}", flush=True)
    return targets, details


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="run in DIR (kept) instead of a temporary folder")
    args = parser.parse_args(argv)
    targets, details = reproduce_section(args.keep)
    for name, t in targets.items():
        print(f"  {'holds ' if t['holds'] else 'MISSED'}  {name}: {t['measured']} (limit {t['limit']})")
    if args.out:
        args.out.write_text(json.dumps({"targets": targets, "details": details}, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
