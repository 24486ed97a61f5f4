"""Running a run's notebooks side by side (``rag_lab run --jobs N``, ``make reproduce``).

Why: on a machine with two cores a notebook rarely keeps both busy (kernel start, model load, spaCy
parses and offline reasoner jobs run on one), so independent notebooks finish sooner together. Not
every notebook is independent of the others' presence: one that times builds or queries would time
the other's load as well, and one that reuses what earlier notebooks of the run built must start after
them. Those run alone (``RUN_ALONE``, with the reason); the notebooks between two of them form a
*wave* that runs up to N at a time, each in a process of its own (its kernel's environment, e.g. its
near-tie file, is its own), and the manifest lists the notebooks in the run's order whatever finished
first. Each notebook writes only its own figures folder and run files, and the caches they share are
safe for several processes (rag_lab/caching), so the tables are those of a run one after another.

Written here rather than taken from a library: the standard library's process pool runs the notebooks;
what is ours is only which notebooks may share the machine.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Sequence

# notebook -> why it runs with nothing beside it
RUN_ALONE: dict[str, str] = {
    "04_gralc_rag": "Table 3 times cold index builds",
    "10_compare_retrieval": "reuses the encodings and indexes the notebooks before it built",
    "11_cost_and_speed": "measures build and query time",
}
JOBS_AUTO = "auto"


def default_jobs(cores: int | None = None) -> int:
    """Notebooks at a time when not told: two on a machine with two cores or more, else one."""
    cores = os.cpu_count() if cores is None else cores
    return 2 if (cores or 1) >= 2 else 1


def parse_jobs(value: str | int | None) -> int:
    """``--jobs``: a positive count, or ``auto`` (``default_jobs``)."""
    if value is None or str(value).strip().lower() == JOBS_AUTO:
        return default_jobs()
    try:
        jobs = int(str(value).strip())
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise ValueError(f"--jobs must be a positive number of notebooks or {JOBS_AUTO!r}, got {value!r}")
    return jobs


def waves(notebooks: Sequence[Path], alone: dict[str, str] = RUN_ALONE) -> list[list[Path]]:
    """The run's notebooks, in order, cut into groups that may run side by side: each notebook named in
    ``alone`` is a group of its own, the notebooks between two of them one group."""
    out: list[list[Path]] = []
    for nb in notebooks:
        if nb.stem in alone or not out or out[-1][-1].stem in alone:
            out.append([nb])
        else:
            out[-1].append(nb)
    return out


def run_wave(wave: Sequence[Path], jobs: int, run_one: Callable[..., dict[str, Any]],
             args: Callable[[Path], tuple]) -> list[dict[str, Any]]:
    """``run_one(*args(nb))`` for every notebook of ``wave``, up to ``jobs`` at a time (each in a fresh
    process when more than one), the entries in the wave's order. ``run_one`` must be a module-level
    function (it is sent to the processes by name)."""
    if jobs <= 1 or len(wave) <= 1:
        return [run_one(*args(nb)) for nb in wave]
    with ProcessPoolExecutor(max_workers=min(jobs, len(wave)), mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_one, *args(nb)) for nb in wave]
        return [f.result() for f in futures]
