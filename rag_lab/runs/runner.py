"""Execute notebooks headlessly with papermill and record each run in a manifest.

A run gets a folder ``papermill_runs/<run-id>/`` named by what ran and a short hash of its
parameters, plus a timestamp only to keep reruns apart (``04_gralc_rag-3fa2c91d0e-20261123T041200``),
so runs with the same parameters sort next to each other. The folder holds the executed
notebooks, a copy of every table (CSV) each notebook wrote during the run under
``tables/<notebook>/`` (``figures/<notebook>/`` is overwritten by the next run; these copies
stay), the rankings its ``evaluate`` calls made as TREC runs and qrels under ``trec/<notebook>/``
(``evaluation/trec.py``), and ``manifest.json``: parameters, their hash, reasoner and judge, git revision, package
versions, the embedding backend, status, durations per notebook and per cell, files written, and for a failure the
cell (index and first line) and the error. A cell running longer than the timeout fails the
notebook; the other notebooks still run; a cell tagged ``per_dataset`` (one unit of work per data set of
``datasets``) may run it once per data set. Every comparison the notebooks decided is gathered into
``comparisons.csv`` (``evaluation/ledger.py``); one comparison given two answers fails the run. Outputs appear whole or not at all (rag_lab.caching.atomic).

The parameter hash covers a notebook's *effective* parameters: the defaults in its
``parameters`` cell with the given values laid over them (``figures_dir`` left out), so
``run 04 -p lam 0.1`` and ``run 04`` hash alike when 0.1 is the default.

With ``address`` (``rag_lab run --address tcp://host:8786``) the kernels build their indexes'
per-document work on that Dask cluster (``rag_lab.evaluation.cluster``); the manifest records it as
``cluster``. Results are the same as a local run's; the address is not a parameter and not hashed.
"""
from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import logging
import os
import platform
import re
import time
import traceback
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from ..caching.atomic import atomic_path, write_bytes, write_text
from ..core.redact import scrub, scrub_file
from ..core.environment import environment
from ..core.progress import HEADLESS_ENV
from ..evaluation import ledger
from ..evaluation.provenance import embedding_backend, git_revision, package_versions
from ..evaluation.trec import TREC_DIR_ENV
from ..core.ties import NEAR_TIES_ENV, read_near_ties
from .parameters import cell_timeout, check_all
from .reference import figures_folder, reference_check, write_reference_near_ties
from .report import write_report
from .llm_parameters import check_specs, recorded, recorded_manifest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
RUNS_DIR = ROOT / "papermill_runs"
FIGURES_DIR = ROOT / "figures"
KERNEL_NAME = "rag_lab"
DEFAULT_CELL_TIMEOUT = 1800  # seconds a single cell may run; generous: the slowest notebook took ~5 min in all
HASH_CHARS = 10
NOT_HASHED = ("figures_dir",)  # where outputs go is not part of what was computed
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PAPERMILL_ADDED = ("injected-parameters", "papermill-error-cell-tag")  # cells papermill inserts
log = logging.getLogger(__name__)


def list_notebooks(folder: Path = NOTEBOOK_DIR) -> list[Path]:
    return sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))


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


def notebook_defaults(path: str | Path) -> dict[str, Any]:
    """The assignments of a notebook's ``parameters`` cell (literals evaluated, anything else as source text).

    papermill's own ``inspect_notebook`` skips tuple assignments (``window, stride = 3, 1``); this does not.
    A cell that does not parse gives ``{}``: the notebook will then fail when run and be recorded as failed."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            try:
                return _assignments(source)
            except SyntaxError:
                return {}
    return {}


def _assignments(source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and node.value is not None:
                out[target.id] = _literal(node.value, source)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                out.update({t.id: _literal(v, source) for t, v in zip(target.elts, node.value.elts)
                            if isinstance(t, ast.Name)})
    return out


def _literal(node: ast.AST, source: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError):
        return ast.get_source_segment(source, node)


def canonical(value: Any) -> Any:
    """JSON-ready and stable: 90.0 and 90 are one value, tuples are lists, keys are strings."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def parameter_hash(parameters: dict[str, Any]) -> str:
    """A short, stable id of a parameter set (key order and 90 vs 90.0 do not matter)."""
    text = json.dumps(canonical({k: v for k, v in parameters.items() if k not in NOT_HASHED}),
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def effective_parameters(notebook: str | Path, given: dict[str, Any]) -> dict[str, Any]:
    """The notebook's defaults with ``given`` laid over them, ``figures_dir`` left out."""
    merged = {**notebook_defaults(notebook), **given}
    return {k: v for k, v in merged.items() if k not in NOT_HASHED}


def changed_parameters(notebook: str | Path, effective: dict[str, Any]) -> dict[str, Any]:
    """The parameters whose value differs from the notebook's default (what tells runs apart)."""
    defaults = notebook_defaults(notebook)
    return {k: v for k, v in effective.items() if k not in defaults or canonical(defaults[k]) != canonical(v)}


def run_label(notebooks: Sequence[Path], everything: bool) -> str:
    """``04_gralc_rag`` for one notebook, ``all`` for every numbered one, else ``00+04`` (their numbers)."""
    if len(notebooks) == 1:
        return notebooks[0].stem
    if everything:
        return "all"
    return "+".join(nb.stem.split("_", 1)[0] for nb in notebooks)


def new_run_id(label: str = "run", digest: str = "") -> str:
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    return "-".join(p for p in (label, digest, stamp) if p)


def _new_run_dir(runs_dir: Path, run_id: str) -> Path:
    """Create a fresh folder for ``run_id``; a rerun within the same second gets ``-2``, ``-3``..."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        folder = runs_dir / (run_id if n == 1 else f"{run_id}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise RuntimeError(f"could not find a free run folder name for {run_id} in {runs_dir}")


def kernel_name() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    if KERNEL_NAME not in specs:
        raise RuntimeError(f"the Jupyter kernel {KERNEL_NAME!r} is not registered; run `make setup` "
                           f"(it runs: python -m ipykernel install --sys-prefix --name {KERNEL_NAME})")
    return KERNEL_NAME


def reasoner_of(parameters: dict[str, Any]) -> dict[str, Any]:
    """Which reasoner and judge the run used: the parameters, else $RAG_LAB_LLM, else offline (as
    ``rag_lab.reasoning.resolve_reasoner`` decides), by their redacted names (``llm_parameters.py``)."""
    return recorded({"reasoner": parameters.get("reasoner") or os.environ.get("RAG_LAB_LLM") or "offline",
                     "judge": parameters.get("judge")})


def _files_under(folder: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} if folder.exists() else {}


def cell_records(executed: Path) -> list[dict[str, Any]]:
    """Per code cell of the source notebook: index (0-based, markdown cells counted, cells papermill
    inserted not), first line, seconds and status (ok / failed / timeout / not run), from papermill's
    cell metadata in the executed copy."""
    import nbformat

    try:
        nb = nbformat.read(str(executed), as_version=4)
    except Exception:  # no notebook was written (papermill failed before the first cell)
        return []
    cells = [c for c in nb.cells if not set(c.metadata.get("tags", [])) & set(_PAPERMILL_ADDED)]
    out = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        pm = cell.metadata.get("papermill", {})
        started = pm.get("start_time") is not None
        status = "failed" if pm.get("exception") or pm.get("status") == "failed" else "ok" if started else "not run"
        line = next((ln.strip() for ln in cell.source.splitlines() if ln.strip()), "")
        out.append({"index": index, "first_line": line[:120], "seconds": pm.get("duration"), "status": status})
    return out


def _failure(exc: BaseException, cells: list[dict[str, Any]], timeout: float | None) -> dict[str, Any]:
    """Which cell failed and why. The cell is the last one that started: execution stops there."""
    timed_out = isinstance(exc, TimeoutError)
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    message = next((ln for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()), "")
    error = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {message.strip()}"
    if timed_out:
        error = f"cell timed out after {timeout:g} s ({error})"
    started = [c for c in cells if c["status"] != "not run"]
    cell = started[-1] if started else None
    if cell is not None:
        cell["status"] = "timeout" if timed_out else "failed"
    return {"kind": "timeout" if timed_out else "error", "cell": cell["index"] if cell else None,
            "first_line": cell["first_line"] if cell else None, "error": error[:4000]}


def _copy_tables(files: Sequence[str], figures_dir: Path, run_dir: Path, notebook: str) -> list[str]:
    """Copy the CSV tables a notebook wrote into ``run_dir/tables/<notebook>/``; relative paths back."""
    out = []
    for f in files:
        src = Path(f)
        if src.suffix.lower() == ".csv":
            rel = Path("tables") / notebook / src.relative_to(figures_dir)
            write_bytes(run_dir / rel, src.read_bytes())
            out.append(rel.as_posix())
    return out


def _run_one(nb: Path, given: dict[str, Any], run_dir: Path, figures_dir: Path, kernel: str,
             timeout: float | None, progress: bool) -> dict[str, Any]:
    import papermill as pm

    effective = effective_parameters(nb, given)
    entry: dict[str, Any] = {
        "notebook": nb.stem, "source": str(nb), "parameters": recorded(effective),
        "changed": recorded(changed_parameters(nb, effective)),
        "param_hash": parameter_hash(effective), **reasoner_of(effective), "figures_dir": str(figures_dir),
        "status": "running", "started": dt.datetime.now().isoformat(timespec="seconds"),
    }
    before = _files_under(figures_dir)
    out_path = run_dir / nb.name
    near_ties_file = run_dir / "near_ties" / f"{nb.stem}.jsonl"       # core/ties.py: the kernel appends to it
    near_ties_file.parent.mkdir(parents=True, exist_ok=True)
    near_ties_file.unlink(missing_ok=True)
    ledger_file = run_dir / ledger.LEDGER_DIR / f"{nb.stem}.csv"      # evaluation/ledger.py: the kernel appends to it
    ledger_file.unlink(missing_ok=True)
    t0 = time.perf_counter()
    trec_dir = run_dir / "trec" / nb.stem                              # evaluation/trec.py: evaluate() writes there
    with atomic_path(out_path) as tmp, environment({NEAR_TIES_ENV: str(near_ties_file), TREC_DIR_ENV: str(trec_dir),
                                                    ledger.LEDGER_ENV: str(ledger_file)}):
        try:
            pm.execute_notebook(str(nb), str(tmp), parameters={**given, "figures_dir": str(figures_dir)},
                                kernel_name=kernel, cwd=str(nb.parent), progress_bar=progress, language="python",
                                execution_timeout=timeout, timeout_func=lambda c: cell_timeout(c, timeout, effective))
            entry["status"], error = "ok", None
        except Exception as e:  # record and go on with the next notebook
            entry["status"], error = "failed", e
            entry["traceback"] = _ANSI.sub("", traceback.format_exc())[-4000:]
        entry["cells"] = cell_records(tmp)
        if error is not None:
            entry["failure"] = _failure(error, entry["cells"], timeout)
            entry["error"] = entry["failure"]["error"]
            if not tmp.exists() or tmp.stat().st_size == 0:
                tmp.write_text(json.dumps({"error": entry["error"]}), encoding="utf-8")
        scrub_file(tmp)             # a key a server echoed into an output (ragas' errors) never reaches the file
    entry["seconds"] = round(time.perf_counter() - t0, 2)
    entry["output"] = out_path.name
    after = _files_under(figures_dir)
    entry["files"] = sorted(p for p, m in after.items() if before.get(p) != m)
    entry["tables"] = _copy_tables(entry["files"], figures_dir, run_dir, nb.stem)
    entry["trec"] = sorted(p.relative_to(run_dir).as_posix() for p in trec_dir.glob("*") if p.is_file())
    near = read_near_ties(near_ties_file)
    entry["near_ties"] = [asdict(t) for t in near]
    entry["reference"] = reference_check(entry, figures_dir)
    if entry["reference"].get("compared"):       # a reference run: its notes are committed beside its tables
        write_reference_near_ties(near, figures_dir)
    return json.loads(scrub(json.dumps(entry, default=str), urls=False))     # the error and traceback too


def run_notebooks(names: Sequence[str] | None = None, parameters: dict[str, Any] | None = None,
                  run_id: str | None = None, runs_dir: Path = RUNS_DIR, figures_root: Path = FIGURES_DIR,
                  notebook_dir: Path = NOTEBOOK_DIR, per_notebook: dict[str, dict[str, Any]] | None = None,
                  progress: bool = True, timeout: float | None = DEFAULT_CELL_TIMEOUT,
                  address: str | None = None, jobs: int = 1, write_reference: bool = False) -> dict[str, Any]:
    """Run notebooks one after another; returns the manifest (also written to the run folder).

    Parameter names the notebooks do not take are refused before the first one starts (``parameters.py``).
    A notebook run with non-default parameters writes its figures into the run folder, not into the
    repository's ``figures/``, unless ``write_reference`` (``reference.figures_folder``).

    ``timeout``: seconds any one cell may run (None: no limit). ``run_id``: the folder name; by
    default ``<notebook or label>-<parameter hash>-<timestamp>``. ``address``: a Dask scheduler the
    kernels send per-document index work to (module docstring). ``jobs``: more than 1 runs up to that
    many notebooks side by side, those that time alone after them (rag_lab/runs/waves.py); the manifest
    keeps the run's order."""
    from ..evaluation.cluster import cluster_address
    from .waves import run_wave, waves
    if jobs < 1:
        raise ValueError(f"jobs must be a positive number of notebooks at a time, got {jobs}")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"the cell timeout must be a positive number of seconds (or None), got {timeout}")
    notebooks = resolve_notebooks(names, notebook_dir)
    runs_dir, figures_root = Path(runs_dir).resolve(), Path(figures_root).resolve()  # notebooks run in their folder
    if not notebooks:
        raise ValueError(f"no notebooks to run in {notebook_dir}")
    given = {nb: {**(parameters or {}), **(per_notebook or {}).get(nb.stem, {})} for nb in notebooks}
    for nb in notebooks:                   # a spec whose URL holds a credential never reaches a file
        check_specs(given[nb], f"{nb.stem}: parameter")
    check_all(notebooks, given, notebook_defaults)
    hashes = {nb.stem: parameter_hash(effective_parameters(nb, given[nb])) for nb in notebooks}
    digest = next(iter(hashes.values())) if len(hashes) == 1 else parameter_hash(hashes)
    kernel = kernel_name()
    if run_id:
        run_dir = runs_dir / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
    else:
        run_dir = _new_run_dir(runs_dir, new_run_id(run_label(notebooks, not names), digest))
    manifest: dict[str, Any] = {
        "run_id": run_dir.name, "param_hash": digest, "status": "running",
        "started": dt.datetime.now().isoformat(timespec="seconds"), "finished": None,
        "parameters": recorded(parameters or {}),
        "per_notebook": {nb: recorded(p) for nb, p in (per_notebook or {}).items()}, "cell_timeout": timeout,
        "git": git_revision(), "python": platform.python_version(), "packages": package_versions(),
        "kernel": kernel, "embedding_backend": embedding_backend(), "cluster": address, "jobs": jobs, "notebooks": [],
    }
    manifest_path = run_dir / "manifest.json"
    t0 = time.perf_counter()
    with cluster_address(address), headless_kernels():   # kernels inherit both through the environment
        folders = {nb: figures_folder(nb.stem, changed_parameters(nb, effective_parameters(nb, given[nb])),
                                      figures_root, run_dir, write_reference) for nb in notebooks}
        for wave in waves(notebooks) if jobs > 1 else [[nb] for nb in notebooks]:
            manifest["notebooks"] += run_wave(wave, jobs, _run_one, lambda nb: (
                nb, given[nb], run_dir, folders[nb], kernel, timeout, progress))
            manifest["notebooks"].sort(key=lambda e: [nb.stem for nb in notebooks].index(e["notebook"]))
            write_text(manifest_path, json.dumps(manifest, indent=2, default=str))
    manifest["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    manifest["seconds"] = round(sum(e["seconds"] for e in manifest["notebooks"]), 2)
    manifest["wall_seconds"] = round(time.perf_counter() - t0, 2)     # below the sum when notebooks ran side by side
    manifest["ledger"] = ledger.gather_run(run_dir)   # comparisons.csv; a comparison with two answers fails the run
    ok = all(e["status"] == "ok" for e in manifest["notebooks"]) and not manifest["ledger"]["conflicts"]
    manifest["status"] = "ok" if ok else "failed"
    write_text(manifest_path, json.dumps(manifest, indent=2, default=str))
    write_report(run_dir, manifest)   # index.html: the run as one page (rag_lab/runs/report.py)
    return manifest


# what a kernel whose output is saved for a reader gets in its environment: our bars off and "building"
# lines to this terminal only (rag_lab/core/progress.py); Hugging Face's bars (loading weights) and any other
# tqdm bar off by default at their source. Papermill's own per-notebook bar passes ``disable`` itself: it stays.
HEADLESS = {HEADLESS_ENV: "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1"}


def headless_kernels():
    """Within the block, kernels started from this process have ``HEADLESS`` in their environment."""
    return environment(HEADLESS)


def read_runs(runs_dir: Path = RUNS_DIR) -> list[tuple[Path, dict[str, Any]]]:
    """Every notebook run's (folder, manifest) under ``runs_dir``, sweeps' task runs included, sorted
    by folder. Grid manifests (which list tasks, not notebooks) are not runs; an unreadable manifest
    is skipped with a warning naming it."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise FileNotFoundError(f"no runs folder at {runs_dir}; run `python -m rag_lab run` first")
    out = []
    for path in sorted(runs_dir.rglob("manifest.json")):
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            log.warning("skipping %s: not a readable manifest (%s)", path, e)
            continue
        if isinstance(manifest, dict) and isinstance(manifest.get("notebooks"), list):
            out.append((path.parent, recorded_manifest(manifest)))
    return out
