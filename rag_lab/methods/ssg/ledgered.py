"""SSG's decided tables, clustered and filed alike in notebooks 03 and 10: clustered by each question's
document (``experiment.units_of``), filed under the setting a table speaks of (the own stopping points, or the
equal sentence budget) and the registry's names (``ssg-…``), as notebook 10 names them. Notebook 03's two
families: every algorithm against basic_retrieval (``versus_basic``) and the leader against the rest
(``leader_pairs``); ``evaluation.findings`` says them."""
from __future__ import annotations

import pandas as pd

from ...evaluation.decisions import estimand_of, side
from ...evaluation.findings import finding_sentences
from ...evaluation.ledger import record
from ...evaluation.uncertainty import paired_differences, pairwise_differences
from .experiment import SSGRun, results_table, tidy, units_of
from .method import method_name


OWN_STOP, EQUAL_BUDGET = "own stopping point", "equal sentence budget"   # the ledger's setting of each table


def setting_of(label: str) -> str:
    """The ledger setting a notebook label names: the equal sentence budget, else the own stopping points."""
    return EQUAL_BUDGET if "equal" in label.lower() else OWN_STOP


def recorded_algorithms(table: pd.DataFrame, scores: pd.DataFrame, label: str, other: str = "baseline") -> pd.DataFrame:
    """Record a decided table of algorithms in the ledger under the registry's names (``ssg-…``, as notebook
    10 names them) and its setting; returns ``table`` unchanged."""
    if len(table) and "dataset" in scores.columns:
        named = table.assign(method=table["method"].map(method_name), setting=setting_of(label),
                             **{other: table[other].map(method_name)})
        record(named, str(scores["dataset"].iloc[0]))
    return table


def versus_basic(scores: pd.DataFrame, column: str, judged: pd.DataFrame | None = None,
                 label: str = "") -> pd.DataFrame:
    """Every algorithm minus basic_retrieval on ``column``, paired by question (clustered by document:
    ``units_of``), with its 95% interval, Holm across the algorithms (one declared family, named with its
    setting from ``label``), and the side its verdict puts it on: ``above`` / ``below`` (Holm p < 0.05),
    or the undecided verdict word itself; recorded in the run's ledger."""
    table = paired_differences(tidy(scores, judged), "basic_retrieval", metrics=[column], units=units_of(scores),
                               family=f"every algorithm minus basic_retrieval on {column} ({setting_of(label)})")
    table["side"] = [side(v, "above", "below") for v in table["verdict"]]
    return recorded_algorithms(table, scores, label)


def leader_pairs(scores: pd.DataFrame, column: str, judged: pd.DataFrame | None = None, label: str = "") -> pd.DataFrame:
    """Whether the questions can tell the algorithm with the highest mean ``column`` from the others: every
    pair paired by question (clustered by document: ``units_of``), Holm across the pairs
    (``uncertainty.pairwise_differences``: one declared family, recorded in the run's ledger whole); returned,
    the leader's rows (the leader first in each, ``below`` the other)."""
    table = recorded_algorithms(pairwise_differences(tidy(scores, judged), column, units=units_of(scores)), scores, label,
                                "below")
    return table[table["method"] == table["method"].iloc[0]] if len(table) else table


def findings(decider, ran: SSGRun, threshold: float, label: str) -> list[str]:
    """What notebook 03's run found on the data it decides on: its estimand, then for recall and precision, at the own
    stopping points and at the equal sentence budget, every algorithm against basic_retrieval (``versus_basic``) and
    the leader against the rest (``leader_pairs``), said by ``evaluation.findings``, with what the paper reports
    (``paper.reported_beats``); last, the sentences each algorithm gathered."""
    from .paper import reported_beats

    out = [estimand_of(decider)]
    for metric in ("recall", "precision"):
        column = f"llm_context_{metric}" if ran.judged is not None else f"gold_sentence_{metric}"   # ours beside the paper's
        n = len(decider.questions)
        for at, per_q in ((f" ({n} questions, {label}), own stopping points", ran.scores), (", at the equal sentence budget", ran.equal)):
            means = results_table(per_q, ran.judged, threshold)[column]
            out.append("\n  ".join([f"{decider.name}{at}, {column} minus basic_retrieval's ({means['basic_retrieval']:.2f}), "
                                    "paired by question:", *finding_sentences(versus_basic(per_q, column, ran.judged, at))]))
            leads = leader_pairs(per_q, column, ran.judged, at)   # the highest mean against every other algorithm
            leader = leads["method"].iloc[0]
            out.append("\n  ".join([f"{decider.name}{at}: highest mean {column}: {leader} ({means[leader]:.2f}), against each "
                                    f"other algorithm (Holm within \"{leads['family'].iloc[0]}\", {int(leads['family_size'].iloc[0])} "
                                    "pairs):", *finding_sentences(leads, family=False)]))
        out += reported_beats(metric)
    gathered = results_table(ran.scores, ran.judged, threshold)["sentences"]
    out.append(f"Sentences gathered on average at the own stopping points on {decider.name}: "
               + ", ".join(f"{a} {n:.1f}" for a, n in gathered.items()) + ".")
    return out
