"""Runs: executing notebooks and recording what ran. ``runner`` (papermill, a run folder and its
manifest), ``presets`` (a paper's setting as notebook parameters, with what it needs downloaded),
``grid`` (sweeps over a process pool or a Dask cluster), ``report`` (the run's one-page report),
``lab`` (JupyterLab on the project's kernel). What a reader should never meet in an executed notebook
(warnings, tracebacks, progress-bar fragments) is checked by the notebook tests (tests/output_checks.py).

May import: caching, core, reasoning, evaluation, datasets.
"""
