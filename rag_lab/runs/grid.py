"""Parameter sweeps: a grid of parameter sets × notebooks, each cell one papermill run.

Runs locally through a process pool, or on an existing Dask distributed cluster when given
its address (Dask rather than Ray: it is pure Python, pip-installs in seconds, and a
scheduler + workers on plain TCP is all it needs — see docs/sweeps.md). A task runs its
notebook in a scratch folder on the worker and returns every file it wrote as bytes, so the
outputs and manifest come back to the run folder even when the worker is another machine.
A failed task (a failing notebook, a cell past the timeout, or a crashed worker) is recorded
and retried once; the others finish regardless.

A sweep lands in ``papermill_runs/grid-<hash>-<timestamp>/``; each task is named by its notebook
and the hash of its effective parameters (as single runs are), and each attempt's folder is a
run folder like any other (executed notebook, ``manifest.json``, ``tables/``) plus the
``figures/`` it wrote, so ``rag_lab runs`` and ``rag_lab collect`` see every attempt.

Grid file (YAML)::

    notebooks: [00_quickstart]          # names as `python -m rag_lab run` takes them
    grid:                               # every combination of these values is one task
      k: [3, 5]
      semantic_threshold: [80, 90]
    parameters: {limit: 4}              # the same for every task
    retries: 1                          # extra attempts for a failed task
    workers: 2                          # local process pool size
    timeout: 1800                       # seconds one cell may run (default: the runner's)
"""
from __future__ import annotations

import datetime as dt
import itertools
import json
import logging
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caching.atomic import inside, write_bytes, write_text
from .runner import (DEFAULT_CELL_TIMEOUT, NOTEBOOK_DIR, RUNS_DIR, effective_parameters, new_run_id, parameter_hash,
                     resolve_notebooks)
from .llm_parameters import check_specs, recorded

log = logging.getLogger(__name__)
KEYS = ("notebooks", "grid", "parameters", "retries", "workers", "timeout")


@dataclass
class Grid:
    notebooks: list[str]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    retries: int = 1
    workers: int = 2
    timeout: float | None = DEFAULT_CELL_TIMEOUT

    @classmethod
    def from_yaml(cls, path: str | Path) -> "Grid":
        import yaml

        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"{path}: not valid YAML ({e})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping with keys notebooks, grid, parameters")
        unknown = set(data) - set(KEYS)
        if unknown:
            raise ValueError(f"{path}: unknown keys {sorted(unknown)}; expected {', '.join(KEYS)}")
        grid = cls(**data)
        grid.validate(str(path))
        return grid

    def validate(self, where: str = "grid") -> None:
        if not self.notebooks or not all(isinstance(n, str) for n in self.notebooks):
            raise ValueError(f"{where}: 'notebooks' must be a non-empty list of notebook names")
        for key, values in self.grid.items():
            if not isinstance(values, list) or not values:
                raise ValueError(f"{where}: grid value for {key!r} must be a non-empty list, got {values!r}")
            if len({parameter_hash({key: v}) for v in values}) < len(values):
                raise ValueError(f"{where}: grid value for {key!r} lists a value twice: {values!r}")
        if self.retries < 0 or self.workers < 1:
            raise ValueError(f"{where}: need retries >= 0 and workers >= 1")
        if self.timeout is not None and (not isinstance(self.timeout, (int, float)) or self.timeout <= 0):
            raise ValueError(f"{where}: timeout must be a positive number of seconds, got {self.timeout!r}")

    def tasks(self, defaults: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """One task per notebook x combination, named ``<notebook>-<hash>``: the hash of the parameters
        the notebook will run with (``defaults[notebook]``, its parameters cell, under the task's values)."""
        keys = list(self.grid)
        combos = [dict(zip(keys, values)) for values in itertools.product(*(self.grid[k] for k in keys))] or [{}]
        out = []
        for nb in self.notebooks:
            for combo in combos:
                params = {**self.parameters, **combo}
                digest = parameter_hash({**(defaults or {}).get(nb, {}), **params})
                out.append({"task_id": f"{nb}-{digest}", "notebook": nb, "parameters": params, "param_hash": digest})
        return out


def run_task(task: dict[str, Any], notebook_dir: str, timeout: float | None = DEFAULT_CELL_TIMEOUT) -> dict[str, Any]:
    """Run one notebook in a scratch folder; return its status and every file it wrote, by path
    relative to the attempt folder (the run folder's files at its top, figures under ``figures/``)."""
    from .runner import run_notebooks

    with tempfile.TemporaryDirectory(prefix="rag_lab_task_") as tmp:
        tmp = Path(tmp).resolve()   # the runner resolves its folders; _relocate must see the same prefix
        manifest = run_notebooks([task["notebook"]], task["parameters"], run_id="run", runs_dir=tmp,
                                 figures_root=tmp / "figures", notebook_dir=Path(notebook_dir), progress=False,
                                 timeout=timeout)
        files = {str(p.relative_to(tmp / "run")): p.read_bytes() for p in (tmp / "run").rglob("*") if p.is_file()}
        files.update({str(p.relative_to(tmp)): p.read_bytes() for p in (tmp / "figures").rglob("*") if p.is_file()})
    entry = manifest["notebooks"][0]
    return {"status": entry["status"], "error": entry.get("error"), "seconds": entry["seconds"], "files": files,
            "scratch": str(tmp)}


def _relocate(manifest_bytes: bytes, scratch: str, task_dir: Path, run_id: str) -> bytes:
    """The task's manifest as it reads in its attempt folder: its run id and figure paths moved there."""
    manifest = json.loads(manifest_bytes)
    manifest["run_id"] = run_id
    old, new = str(Path(scratch) / "figures"), str(task_dir / "figures")
    for entry in manifest.get("notebooks", []):
        entry["figures_dir"] = entry["figures_dir"].replace(old, new, 1)
        entry["files"] = [f.replace(old, new, 1) for f in entry.get("files", [])]
    return json.dumps(manifest, indent=2, default=str).encode("utf-8")


def _executor(address: str | None, workers: int):
    if address:
        from distributed import Client, as_completed
        return Client(address), as_completed
    from concurrent.futures import as_completed
    return ProcessPoolExecutor(max_workers=workers), as_completed


def run_grid(grid: Grid, address: str | None = None, run_id: str | None = None, runs_dir: Path = RUNS_DIR,
             notebook_dir: Path = NOTEBOOK_DIR) -> dict[str, Any]:
    """Run every task, retrying failures ``grid.retries`` times; returns the grid manifest."""
    grid.validate()
    paths = resolve_notebooks(grid.notebooks, notebook_dir)  # fail early on a misspelt name
    defaults = {name: effective_parameters(path, {}) for name, path in zip(grid.notebooks, paths)}
    tasks = {t["task_id"]: t for t in grid.tasks(defaults)}
    for tid, task in tasks.items():        # a spec whose URL holds a credential never reaches a worker or a file
        check_specs(task["parameters"], f"{tid}: parameter")
    run_id = run_id or new_run_id("grid", parameter_hash({"tasks": sorted(tasks)}))
    run_dir = Path(runs_dir) / run_id
    records = {tid: {**t, "parameters": recorded(t["parameters"]), "attempts": [], "status": "pending"}
               for tid, t in tasks.items()}
    manifest = {"run_id": run_id, "engine": f"dask:{address}" if address else f"process-pool:{grid.workers}",
                "cell_timeout": grid.timeout, "started": dt.datetime.now().isoformat(timespec="seconds"),
                "tasks": records}
    executor, as_completed = _executor(address, grid.workers)

    def submit(tid):
        return executor.submit(run_task, tasks[tid], str(notebook_dir), grid.timeout)

    try:
        pending = {submit(tid): tid for tid in tasks}
        while pending:
            future = next(iter(as_completed(list(pending))))
            tid = pending.pop(future)
            record = records[tid]
            try:
                outcome = future.result()
            except Exception as e:  # the worker died or the task raised outside the notebook
                outcome = {"status": "failed", "error": f"{type(e).__name__}: {e}", "seconds": None, "files": {}}
            attempt = len(record["attempts"]) + 1
            task_dir = run_dir / tid / f"attempt-{attempt}"
            for rel, data in outcome["files"].items():
                target = inside(task_dir, rel)
                if target is None:      # a worker's path that would leave the attempt folder
                    log.warning("%s: a worker sent a file named %r, outside its attempt folder; ignored", tid, rel)
                    continue
                if rel == "manifest.json":
                    data = _relocate(data, outcome["scratch"], task_dir, f"{run_id}/{tid}/attempt-{attempt}")
                write_bytes(target, data)
            record["attempts"].append({"status": outcome["status"], "error": outcome["error"],
                                       "seconds": outcome["seconds"], "folder": str(task_dir)})
            record["status"] = outcome["status"]
            if outcome["status"] != "ok" and attempt <= grid.retries:
                record["status"] = "retrying"
                pending[submit(tid)] = tid
            write_text(run_dir / "manifest.json", json.dumps(manifest, indent=2, default=str))
    finally:
        executor.close() if address else executor.shutdown()
    manifest["finished"] = dt.datetime.now().isoformat(timespec="seconds")
    manifest["status"] = "ok" if all(r["status"] == "ok" for r in records.values()) else "failed"
    write_text(run_dir / "manifest.json", json.dumps(manifest, indent=2, default=str))
    return manifest
