"""Across methods: every method on every dataset (``comparison``), the papers' headline claims
checked (``claims``), leaderboards with intervals (``intervals``) and how sure their order is
(``ranks``), methods held to equal context budgets (``budget``) and the comparisons decided at them
with k beside (``comparison``), answer metrics left out when no answer model ran (``unscored``), the
sentences that describe a run besides its findings (``descriptions``), and cost/benchmark measurements
(``benchmarking``, ``ssg_scale``).

May import: caching, core, reasoning, evaluation, datasets, methods, runs.
"""
