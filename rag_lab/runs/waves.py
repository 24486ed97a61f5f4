"""Running a run's notebooks side by side (``rag_lab run --jobs N``, ``make reproduce``).

Why: on a machine with two cores a notebook rarely keeps both busy (kernel start, model load, spaCy
parses and offline reasoner jobs run on one), so notebooks finish sooner together. A notebook that
times builds or queries must not share the machine (it would time the other's load as well): those
run alone (``RUN_ALONE``, with the reason), after the others, one at a time. The others form one wave
that runs up to N at a time, each in a process of its own (its kernel's environment, e.g. its near-tie
file, is its own), the longest known first (``LONGEST_FIRST``) so the wave does not end on it.

Order does not change a table: a notebook that needs an index another one is building waits for it and
loads it (``evaluation.index_reuse``: notebook 10 reuses what 01-04 build, whichever builds it first),
a reused index gives what a fresh build gives (tests/test_determinism.py), and each notebook writes
only its own figures folder and run files. The manifest lists the notebooks in the run's order whatever
ran first. ``--jobs 1`` runs them one after another in the run's order.

Written here rather than taken from a library: the standard library's process pool runs the notebooks;
what is ours is only which notebooks may share the machine, and in which order they start.
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
    "11_cost_and_speed": "measures build and query time",
}
# started first in their wave: the longest of a cold make reproduce (notebook 10: 268 s; the others <= 89 s)
LONGEST_FIRST = ("10_compare_retrieval",)
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


def waves(notebooks: Sequence[Path], alone: dict[str, str] = RUN_ALONE,
          first: Sequence[str] = LONGEST_FIRST) -> list[list[Path]]:
    """The run's notebooks cut into groups run one after another: first every notebook not named in
    ``alone`` (those named in ``first`` at its head, the rest in the run's order), then each one named in
    ``alone`` as a group of its own, in the run's order."""
    together = [nb for nb in notebooks if nb.stem not in alone]
    together.sort(key=lambda nb: nb.stem not in first)          # stable: the run's order otherwise
    return ([together] if together else []) + [[nb] for nb in notebooks if nb.stem in alone]


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
