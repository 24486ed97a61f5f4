"""Explore: the teaching explorer. ``explorer`` holds the state and logic (pick a data set, a method,
a question; hits with gold marked and what the method did), ``widget`` its ipywidgets face used near
the end of ``00_quickstart``.

May import: caching, core, reasoning, evaluation, datasets, methods.
"""
