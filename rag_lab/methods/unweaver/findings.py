"""Notebook 02 in words: why the voting rules elect the same chunks in this run, and the findings
paragraph its comparison ends with, computed from the run.

- ``voting_classes``: one question's voting classes with the text each class embeds (its
  descriptions), whether those are sentences copied from the chunk, and how many voters share them.
- ``answer_classes``: where the classes named in the question's reference answer rank.
- ``rule_agreement``: on how many questions approval, PAV and CC elect the same list / the same set.
- ``agreement_sentence``: what those counts say about the rules' rows (identical, differ little, or not).
- ``why_rules_agree``: the sentence reading those three tables, with what an LLM reasoner would change.
- ``gold_passage_sentence``: which gold passages of the worked question each rule elects, and its recall.
- ``paragraph``: UnWeaver against VectorRAG (our naive) per data set, paired by question with 95%
  intervals, the paper's claim (at least as good) as a non-inferiority verdict, and the caveats
  (n, reasoner, judge, string-matching answer metrics, identical rules).
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...core.types import Retrieval
from ...evaluation.decisions import reason_of, relation, verdict_said
from ...evaluation.statistics import NON_INFERIORITY_MARGIN, SUPPORTED, format_ci, format_p
from ...evaluation.uncertainty import Units
from .classes import class_descriptions
from .paper import claim_family, claim_row, paper_fc_gap
from .views import NOT_ELECTED

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


def elected_by_rule(retriever, questions, k: int, rules: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """question id -> rule -> the chunk ids that rule elects on the same index."""
    variants = {r: retriever.variant(rule=r) for r in rules}
    return {q.id: {r: [h.chunk.id for h in v.retrieve(q.question, k).hits] for r, v in variants.items()}
            for q in questions}


def rule_agreement(elected: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, int]:
    """Questions on which every rule elects the same ranked list, the same set, and how many there are."""
    same_list = same_set = 0
    for by_rule in elected.values():
        lists = [list(v) for v in by_rule.values()]
        same_list += all(x == lists[0] for x in lists)
        same_set += all(set(x) == set(lists[0]) for x in lists)
    return {"questions": len(elected), "same list": same_list, "same set": same_set}


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
           f"and the {n} voters embed only {distinct} distinct texts and approve {approved} chunks between them, for "
           f"k = {k} seats"]
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
        out.append(f"The class the answer names that ranks best, {top['class']!r} ({top['mentions']} mentions in "
                   f"{top['chunks']} chunks), is #{top['rank']} of {top['of']} by similarity to the question: "
                   + ("among the voters." if inside else
                      f"not among the {n} voters, because its text concatenates sentences from all its chunks and is "
                      "nearer none of them than a class whose one sentence echoes the question."))
    if reasoner == "offline":
        example = (f"{answers.iloc[0]['class']}: what it is, in words of its own" if not answers.empty
                   else "what the entity is, in words of its own")
        out.append("Offline, each entity's description is the whole sentence it appears in, so a class is in effect "
                   "a sentence and the classes of one sentence vote as one bloc. An LLM reasoner writes a description "
                   f"of the entity itself ({example}), so classes from one sentence would "
                   "differ, a multi-chunk class would read as one idea, and the proportional rules would have "
                   "distinct voters to balance.")
    return " ".join(out)


def paragraph(results: Mapping[str, pd.DataFrame], k: int, answer_k: int, reasoner: str, judged: bool,
              agreement: Mapping[str, Mapping[str, int]] | None = None,
              units: Mapping[str, Units] | None = None) -> str:
    """The findings paragraph: per data set, UnWeaver minus naive on ctx_recall@k and doc_mrr@k and the
    non-inferiority verdict of the paper's claim, read from that data set's ``paper.claim_family`` (one
    declared family, Holm across it, clustered by document with ``units``: data set -> question units),
    then the caveats. ``agreement``: data set -> ``rule_agreement``."""
    out, widths, families = [], [], []
    for name, df in results.items():
        family = claim_family(df, k, answer_k, (units or {}).get(name), name)
        parts = [(c, d) for c in (f"ctx_recall@{k}", f"doc_mrr@{k}") if (d := claim_row(family, c)) is not None]
        if not parts:
            continue
        families.append(family)
        ns = [int(d["n"]) for _, d in parts]
        same = len(set(ns)) == 1       # one n for the data set, else each column says its own
        said = [f"{column} {format_ci(d['diff'], d['ci_low'], d['ci_high'])} ({'' if same else f'n = {int(d.n)}, '}"
                f"p = {format_p(d['p'])}, p Holm = {format_p(d['p_holm'])}, {relation(d['verdict'])} naive"
                + (f": {reason_of(d)}" if reason_of(d) else "") + ")" for column, d in parts]
        d = claim_row(family, f"ctx_recall@{k}", non_inferiority=True)
        claim = (f"{verdict_said(d)} (p against the margin = {format_p(d['p'])}, p Holm = {format_p(d['p_holm'])})"
                 if d is not None else "not tested")
        if d is not None and not np.isnan(d["ci_high"] - d["ci_low"]):
            widths.append(d["ci_high"] - d["ci_low"])
        units_n = int(parts[0][1]["units"])
        documents = f", {units_n} document{'s' if units_n != 1 else ''}" if units_n < ns[0] else ""
        out.append(f"On {name} ({f'n = {ns[0]} questions' if same else 'n per column'}{documents}) UnWeaver minus "
                   f"VectorRAG (naive): " + "; ".join(said)
                   + f"; at least as good as VectorRAG on context recall@{k} (margin {NON_INFERIORITY_MARGIN}): {claim}.")
    if not out:
        return "Findings: UnWeaver and naive were not both scored on any data set, so there is nothing to compare."
    sizes = sorted({int(f["family_size"].iloc[0]) for f in families})
    head = ("Findings, each difference paired by question (clustered by document where questions share one) with its "
            "95% interval (each "
            "comparison's own, unadjusted) and p; per data set one declared family of "
            f"{'/'.join(map(str, sizes))} comparisons (every metric scored and the paper's claim), Holm within it; "
            f"ahead or behind only when the Holm p is below 0.05, and the claim '{SUPPORTED}' only when its Holm p "
            "against the margin is below 0.05.")
    gap = float(paper_fc_gap().abs().max())
    span = (f"the context-recall intervals here are {min(widths):.2f} to {max(widths):.2f} wide" if widths
            else "there are too few questions for an interval")
    seen = "could not be told from zero" if widths and min(widths) > 2 * gap else "might be told from zero"
    caveats = [f"Caveats: {span}, so a difference the size of the paper-reported one (UnWeaver minus VectorRAG at "
               f"most {gap:.4f} in factual correctness, another metric) {seen} with this many questions"]
    if reasoner == "offline":
        caveats.append("the offline reasoner's entity descriptions are sentences copied from the chunks and its "
                       f"answers are extractive, so token F1 and ROUGE-L at {answer_k} score copied sentences by "
                       "string overlap with the reference, not generated answers")
    if not judged:
        caveats.append("the paper's measure, ragas' factual correctness, needs a judge and was not computed")
    caveats += [agreement_sentence(name, a) for name, a in (agreement or {}).items() if a.get("questions")]
    return " ".join([head, *out, "; ".join(caveats) + "."])
