"""Across methods: every method on every dataset (``comparison``), the papers' headline claims
checked (``claims``), leaderboards with intervals (``intervals``) and how sure their order is
(``ranks``), and cost/benchmark measurements (``benchmarking``, ``ssg_scale``).

May import: caching, core, reasoning, evaluation, datasets, methods, runs.
"""
