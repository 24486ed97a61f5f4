"""Command line: ``python -m rag_lab COMMAND``. Each command is a module here with
``add_arguments(parser)`` and ``run(args) -> exit code``; ``COMMANDS`` lists them.

May import: caching, core, reasoning, evaluation, datasets, methods, runs, compare, explore.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sqlite3
import sys

from .errors import CLEAR, describe

COMMANDS = {
    "datasets": "list the datasets that load by name",
    "download": "fetch a public data set (PubMedQA, QASPER, RAGBench, PMC OA ...) into the data cache, checked",
    "methods": "list the registered retrieval methods",
    "eval": "build methods on a dataset, score retrieval at every k and (with --reasoner) the answers",
    "run": "execute notebooks headlessly with papermill (writes papermill_runs/<notebook>-<hash>-<time>/)",
    "runs": "list the runs: status, notebook, parameter hash, duration, reasoner, changed parameters",
    "collect": "gather every run's tables into one tidy CSV (run, notebook, parameters, table, row, column, value)",
    "doctor": "pre-flight check of a reasoner (--llm SPEC): every job on a built-in sample, a verdict per job",
    "estimate": "count the LLM calls and tokens (and cost) an indexing run would make, without calling",
    "cache": "what the cache folder holds (info), remove what is no longer needed (prune), empty a kind (clear)",
}


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help already names one or there is none
    (argparse's ArgumentDefaultsHelpFormatter would also print "(default: None)" and "(default: False)")."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text.lower() or action.default in (None, False, [], argparse.SUPPRESS) \
                or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


# What other libraries print that says nothing to a user of the command line, silenced at its source:
# faiss logs at INFO which CPU build it tried (two ModuleNotFoundErrors before it loads the plain one),
# kaleido and choreographer log the browser they start and stop for each PNG, httpx logs every request's
# URL (an endpoint's address is nobody's business in a log); our own INFO lines ("reused its index") stay.
# transformers warns "Token indices sequence length is longer than ... (655 > 512)" when a chunk's tokens are
# counted: counting is not encoding (the encoder truncates or windows its input), so it is not shown; and
# its "Loading weights" bars go with Hugging Face's progress bars.
LIBRARY_ENV = {"TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def quiet_libraries() -> None:
    """Log INFO from rag_lab only (WARNING from everything else), and the library settings above."""
    for key, value in LIBRARY_ENV.items():
        os.environ.setdefault(key, value)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("rag_lab").setLevel(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab", description="rag_lab: structure-aware RAG lab")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = {}
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"rag_lab.cli.{name.replace('-', '_')}")
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text,
                                            formatter_class=DefaultsHelpFormatter))
    args = parser.parse_args(argv)
    quiet_libraries()
    try:
        return modules[args.command].run(args)
    except (*CLEAR, OSError, sqlite3.Error) as e:
        message = describe(e)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
