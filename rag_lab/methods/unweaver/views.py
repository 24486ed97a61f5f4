"""Tables that show what a built UnWeaver index holds and what one query did (notebook 02), and the
sentences that read them: the three alignment solvers side by side,
which classes voted and what they embed, where the classes the answer names rank, on how many questions
the voting rules elect the same chunks and why. The gold-passage views (P1, P2 …, which rule elects a chunk
holding each) are the lab's one worked-example API, ``evaluation.worked``; the index's counts, entities,
largest classes and matrix shapes are a few lines of pandas in the notebook."""
from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...core.types import Retrieval
from ...evaluation.harness import retrieve
from .classes import class_descriptions
from ...evaluation.worked import NOT_ELECTED, chunks_holding, gold_passages, padded, worked_comparison
from .voting import RULES


SOLVERS = ("kelly", "constrained lsq", "bounded lsq")   # the paper's two forms, then ours


def alignment_report(R, w, c, chunks, ideas, k: int = 2, demanded: int = 1) -> dict[str, pd.DataFrame]:
    """The three alignment solvers on one problem (b = c for both least squares): idea strengths,
    chunk loads and prices, each solution's KKT residuals, the constrained form's KKT system, and
    the k chunks each selects (ties by the chunks' summed idea similarity, then order), the solvers' ends
    (``iterations``) and those in words (``said``, ``solvers_sentence``).

    kelly: proportional fairness (A.2, first form); constrained lsq: min ||R x - c||^2 s.t. C x = d
    with C, d from ``demand_constraints(R, w, c, demanded)`` (A.2, second form); bounded lsq: ours."""
    from .alignment import (bounded_least_squares, chunk_similarity, chunk_strengths, idea_upper_bounds,
                            kelly_allocation, kelly_kkt, lsq_kkt, select_chunks)
    from .constrained_lsq import constrained_least_squares, demand_constraints, kkt_system

    chunks, ideas = list(chunks), list(ideas)
    kelly = kelly_allocation(R, w, c)
    demand = demand_constraints(R, w, c, demanded)
    paper = constrained_least_squares(R, c, demand.C, demand.d)
    upper = idea_upper_bounds(R, c)
    ours = bounded_least_squares(R, c, 0.0, upper)
    x = dict(zip(SOLVERS, (kelly.x, paper.x, ours.x)))
    loads = {name: chunk_strengths(R, v) for name, v in x.items()}
    similarity = chunk_similarity(R, w)
    demanded_at = dict(zip(demand.demanded, demand.d))
    K, rhs = kkt_system(R, c, demand.C, demand.d)
    unknowns = [f"x {name}" for name in ideas] + [f"z {ideas[e]}" for e in demand.demanded]
    equations = [f"stationarity in x {name}" for name in ideas] + [f"x {ideas[e]} = d" for e in demand.demanded]
    nan = float("nan")
    kkt = pd.DataFrame({"kelly (price iteration)": kelly_kkt(R, w, c, kelly.x, kelly.prices).as_dict(),
                        "constrained lsq (KKT system)": {**paper.kkt.as_dict(), "dual_feasibility": nan,
                                                         "complementary_slackness": nan},
                        "bounded lsq (ours)": lsq_kkt(R, c, ours.x, ours.lower, ours.upper).as_dict()})
    iterations = pd.Series({"kelly iterations": kelly.iterations, "kelly converged": kelly.converged,
                            "demanded ideas": ", ".join(ideas[e] for e in demand.demanded),
                            "demanded for uniqueness": ", ".join(ideas[e] for e in demand.forced) or "none",
                            "bounded lsq status": ours.status})
    return {
        "ideas": pd.DataFrame({"weight w": w, "x kelly": kelly.x,
                               "demand d": [demanded_at.get(e, nan) for e in range(len(ideas))],
                               "x constrained lsq": paper.x, "upper bound": upper, "x bounded lsq": ours.x}, index=ideas),
        "chunks": pd.DataFrame({"budget c": c, "similarity": similarity, "price lam": kelly.prices,
                                **{f"load {name}": v for name, v in loads.items()}}, index=chunks),
        "kkt": kkt,
        "kkt_system": pd.DataFrame(np.vstack([np.column_stack([K, rhs]), np.append(np.concatenate([paper.x, paper.z]), nan)]),
                                   index=equations + ["solution [x; z]"], columns=unknowns + ["right-hand side"]),
        "selected": pd.DataFrame({name: padded([chunks[j] for j in select_chunks(v, k, similarity)], k)
                                  for name, v in loads.items()}, index=pd.RangeIndex(1, k + 1, name="rank")),
        "iterations": iterations,
        "said": solvers_sentence(iterations),
    }


LSQ_STATUS = {-1: "stopped: it could not make progress", 0: "stopped at its iteration limit",
              1: "converged (first-order optimality within tolerance)",
              2: "converged (cost change within tolerance)", 3: "found the unconstrained solution inside the bounds"}


def solvers_sentence(iterations: pd.Series) -> str:
    """``alignment_report``'s ``iterations`` in words: how each solver ended and which ideas were demanded."""
    kelly = (f"Kelly's price iteration {'converged' if iterations['kelly converged'] else 'did not converge'} after "
             f"{iterations['kelly iterations']} iterations")
    forced = iterations["demanded for uniqueness"]
    demanded = (f"the constrained form demands {iterations['demanded ideas']}"
                + (f" (of which {forced} only so that its solution stays unique)" if forced != "none" else ""))
    status = int(iterations["bounded lsq status"])
    bounded = f"the bounded form (scipy's lsq_linear) {LSQ_STATUS.get(status, f'ended with status {status}')}"
    return f"{kelly};\n{demanded};\n{bounded}."


def _body(cls) -> str:
    """The embedded text without its leading "name: "."""
    prefix = f"{cls.name}: "
    return cls.text[len(prefix):] if cls.text.startswith(prefix) else cls.text


def voting_classes(retriever, retrieval: Retrieval, width: int = 160) -> pd.DataFrame:
    """The voting classes of one query, nearest first: similarity, mentions, the chunks each approves,
    its description (the embedded text, cut to ``width`` characters), whether every description is
    copied word for word from its chunk, and how many of the voters embed the same descriptions."""
    voters = [retriever.classes[c["class"]] for c in retrieval.trace["classes"]]
    descs = [tuple(class_descriptions(v, retriever.mentions)) for v in voters]
    copied = [all(d in retriever.chunks[retriever.mentions[i].chunk_index].text
                  for i in v.mentions for d in [retriever.mentions[i].description] if d) for v in voters]
    rows = []
    for c, v, d, cp in zip(retrieval.trace["classes"], voters, descs, copied):
        body = _body(v)
        rows.append({"class": v.name, "similarity": round(float(c["similarity"]), 3), "mentions": v.size,
                     "approves": ", ".join(c["chunks"]),
                     "description (embedded)": body if len(body) <= width else body[:width - 1] + "…",
                     "copied from its chunk": cp, "voters with the same description": descs.count(d)})
    return pd.DataFrame(rows)


def answer_classes(retriever, question: str, answer: str, limit: int = 5) -> pd.DataFrame:
    """The classes whose name occurs (whole words, any case) in the reference ``answer``: their rank by
    similarity to ``question`` among all classes, similarity, mentions and chunks; best ranked first."""
    sims, _ = retriever.class_similarities(question)
    order = np.argsort(-sims, kind="stable")
    rank = {int(c): r + 1 for r, c in enumerate(order)}
    low = answer.casefold()
    named = [c for c in retriever.classes if len(c.key) > 2 and re.search(rf"\b{re.escape(c.name.casefold())}\b", low)]
    rows = sorted(({"class": c.name, "rank": rank[c.index], "of": len(retriever.classes),
                    "similarity": round(float(sims[c.index]), 3), "mentions": c.size, "chunks": len(c.chunks)}
                   for c in named), key=lambda r: r["rank"])[:limit]
    return pd.DataFrame(rows, columns=["class", "rank", "of", "similarity", "mentions", "chunks"])


def rule_agreement(retriever, questions, k: int, rules: Sequence[str]) -> dict[str, int]:
    """Questions on which every rule of ``rules`` (``retriever.variant(rule=...)``, the same index) elects the
    same ranked list of k chunks, the same set, and how many questions there are."""
    variants = [retriever.variant(rule=r) for r in rules]
    same_list = same_set = 0
    for q in questions:
        lists = [[h.chunk.id for h in retrieve(v, q.question, k).hits] for v in variants]
        same_list += all(x == lists[0] for x in lists)
        same_set += all(set(x) == set(lists[0]) for x in lists)
    return {"questions": len(questions), "same list": same_list, "same set": same_set}


def agreement_sentence(name: str, agreement: Mapping[str, int]) -> str:
    """What ``rule_agreement`` on one data set says about the rules' rows, read from its counts: identical
    when every question elects the same ranked list; equal on the set metrics (recall, precision) when
    every question elects the same set; "differ little" only when the same set is elected on most (more
    than half of the) questions; otherwise how many questions the rules elect different sets on."""
    n, same_set, same_list = agreement["questions"], agreement["same set"], agreement["same list"]
    if not 0 <= same_list <= same_set <= n or n < 1:
        raise ValueError(f"agreement for {name} must have 0 <= 'same list' <= 'same set' <= 'questions' >= 1, "
                         f"got {dict(agreement)}")
    head = f"on {name} approval, PAV and CC elect the same set on {same_set} of {n} questions"
    if same_list == n:
        return f"{head} (the same ranked list on all {n}), so their rows are identical"
    if same_set == n:
        return (f"{head} (the same ranked list on {same_list}), so their recall and precision are equal and only "
                "order-sensitive scores such as MRR and nDCG can differ")
    if 2 * same_set > n:
        return f"{head}, so their rows differ little (a different set on {n - same_set})"
    return (f"on {name} approval, PAV and CC elect the same set on only {same_set} of {n} questions and different "
            f"sets on {n - same_set}, so their rows can differ")


def gold_passage_sentence(table: pd.DataFrame, k: int) -> str:
    """``views.gold_passage_table`` in words: per gold passage, how many rules elect a chunk holding it, and
    each rule's context recall@k on this question (passages held / passages)."""
    if table.empty:
        return "This question lists no gold passages, so no elected chunk is marked and recall cannot be read here."
    rules = [c for c in table.columns if c not in ("document", "text")]
    n, parts = len(table), []
    for label, row in table.iterrows():
        by = [r for r in rules if row[r] != NOT_ELECTED]
        who = ("all" if len(by) == len(rules) else "none" if not by else f"{len(by)} ({', '.join(by)})")
        parts.append(f"{label} is elected by {who} of the {len(rules)} rules")
    recall = {r: float((table[r] != NOT_ELECTED).mean()) for r in rules}
    if len(set(recall.values())) == 1:
        said = f"every rule's context recall@{k} on this question is {next(iter(recall.values())):.2f}"
    else:
        said = f"context recall@{k} on this question: " + ", ".join(f"{r} {v:.2f}" for r, v in recall.items())
    missed = [label for label, row in table.iterrows() if all(row[r] == NOT_ELECTED for r in rules)]
    tail = f"; no rule elects a chunk holding {' or '.join(missed)}" if missed else ""
    return f"Of the {n} gold passage{'s' if n != 1 else ''}: " + "; ".join(parts) + f" — {said}{tail}."


def why_rules_agree(voters: pd.DataFrame, agreement: Mapping[str, int], answers: pd.DataFrame, k: int,
                    rules: Sequence[str], reasoner: str, keyword: str = "",
                    elected: Mapping[str, Sequence[str]] | None = None) -> str:
    """Why the rules elect the same chunks (or, when ``elected`` — rule -> the chunk ids it elects on the
    worked question — shows different sets, what their voters share), from ``voting_classes``,
    ``rule_agreement`` and ``answer_classes`` of the worked question."""
    if voters.empty:
        return "No class voted for this question, so there is no election to explain."
    n = len(voters)
    copied = int(voters["copied from its chunk"].sum())
    distinct = voters["description (embedded)"].nunique()
    approved = len({c for cell in voters["approves"] for c in cell.split(", ") if c})
    named = f"{', '.join(rules[:-1])} and {rules[-1]}"
    sets = {frozenset(v) for v in (elected or {}).values()}
    differ = len(sets) > 1
    opening = (f"{named} elect different chunks here ({len(frozenset().union(*sets))} distinct chunks between them) "
               "although" if differ else f"Why {named} elect the same chunks:")
    out = [f"{opening} {copied} of the {n} voting classes embed descriptions copied word for word from their chunk, "
           f"and the {n} voters embed only {distinct} distinct text{'s' * (distinct != 1)} and approve {approved} "
           f"chunk{'s' * (approved != 1)} between them, for k = {k} seats"]
    if differ:
        out[0] = out[0][0].upper() + out[0][1:] + " — the proportional rules still found voters left unrepresented to favour."
    elif approved <= k:
        out[0] += " — every approved chunk is elected whatever the rule, so the rules have nothing to trade off."
    else:
        out[0] += (f" — with so few distinct ballots, the proportional rules find few voters left unrepresented to "
                   "favour.")
    if agreement.get("questions"):
        out.append(f"Over {agreement['questions']} questions the rules elect the same set on {agreement['same set']} "
                   f"and the same ranked list on {agreement['same list']}.")
    if answers.empty:
        out.append(f"No class is named in the reference answer{f' (e.g. {keyword!r})' if keyword else ''}.")
    else:
        top = answers.iloc[0]
        inside = top["rank"] <= n
        m, c = int(top["mentions"]), int(top["chunks"])
        out.append(f"The class the answer names that ranks best, {top['class']!r} ({m} mention{'s' * (m != 1)} in "
                   f"{c} chunk{'s' * (c != 1)}), is #{top['rank']} of {top['of']} by similarity to the question: "
                   + ("among the voters." if inside else
                      f"not among the {n} voters, because its text concatenates sentences from all its chunks and is "
                      "nearer none of them than a class whose one sentence echoes the question."))
    if reasoner == "offline":
        example = (f"{answers.iloc[0]['class']}: what it is, in words of its own" if not answers.empty
                   else "what the entity is, in words of its own")
        out.append("Offline, each entity's description is the whole sentence it appears in, so a class is in effect "
                   "a sentence and the classes of one sentence vote as one bloc.\nAn LLM reasoner writes a description "
                   f"of the entity itself ({example}), so classes from one sentence would "
                   "differ, a multi-chunk class would read as one idea, and the proportional rules would have "
                   "distinct voters to balance.")
    return "\n".join(out)     # a sentence a line


def gold_chunks(retriever, question, documents) -> set[str]:
    """Ids of the index's chunks that hold a gold passage of ``question`` (found and matched as ctx_recall does)."""
    return chunks_holding(retriever.chunks, gold_passages(question, documents))


def elected_by_rule(retriever, question, documents, k: int) -> tuple[dict[str, Retrieval], pd.DataFrame, pd.DataFrame, str]:
    """The worked question under every voting rule and every alignment solver, on the same index: the
    retrievals, ``worked_comparison``'s gold passages and elected chunks, and ``gold_passage_sentence``."""
    by_rule = {r: retriever.variant(rule=r).retrieve(question.question, k) for r in RULES}
    by_rule.update({s: retriever.variant(select=s).retrieve(question.question, k)
                    for s in ("kelly", "constrained_lsq", "bounded_lsq")})
    passages, elected = worked_comparison(by_rule, question, documents)
    return by_rule, passages, elected, gold_passage_sentence(passages, k)


def rules_explained(retriever, question, retrieval: Retrieval, questions, k: int, by_rule: Mapping[str, Retrieval],
                    reasoner: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Why the rules agree on the worked question: its ``voting_classes``, the ``answer_classes`` of its reference
    answer, and ``why_rules_agree`` read from them and from ``rule_agreement`` over ``questions``."""
    voters = voting_classes(retriever, retrieval)
    named = answer_classes(retriever, question.question, question.answer or "")
    agreement = rule_agreement(retriever, questions, k, RULES)
    elected = {r: [h.chunk.id for h in by_rule[r].hits] for r in RULES}
    return voters, named, why_rules_agree(voters, agreement, named, k, list(RULES), reasoner, elected=elected)
