"""Questions from gold sentence groups written by an LLM reasoner (optional; the shipped
question set was written by hand).

The SSG paper hands each group to an LLM (DeepEval's synthesizer) to write a question and an
expected answer. Here one prompt asks for both as JSON; a reply that is still invalid after one
retry skips the group (counted in ``skipped``) rather than inventing a question.
"""
from __future__ import annotations

import logging
from typing import Sequence

from ...core.types import Question
from .graph import SimilarityGraph
from .grouping import GROUPING_STRATEGIES, GoldGroup, build_groups, group_question

log = logging.getLogger(__name__)

SYSTEM = "You write exam questions about a set of passages. You reply with JSON only."
TEMPLATE = (
    "Below are sentences taken from one or more encyclopedia articles. Write ONE question that can only be "
    "answered by combining information from several of these sentences, and a reference answer of two to "
    "four sentences that uses only what they say. Do not quote the sentences word for word in the question.\n\n"
    "SENTENCES:\n{sentences}\n\n"
    'Reply with a JSON object: {{"question": "...", "answer": "..."}}'
)
SCHEMA = {"type": "object", "required": ["question", "answer"],
          "properties": {"question": {"type": "string", "minLength": 10}, "answer": {"type": "string", "minLength": 10}}}


def generate_questions(reasoner, graph: SimilarityGraph, groups: Sequence[GoldGroup],
                       id_prefix: str = "gen-q") -> tuple[list[Question], int]:
    """(questions, number of groups skipped for invalid replies). ``reasoner`` must be an LLM reasoner."""
    if not hasattr(reasoner, "complete_json"):
        raise ValueError(f"question generation needs an LLM reasoner (a spec such as 'openai:gpt-4o-mini'); "
                         f"got {getattr(reasoner, 'name', reasoner)!r}, which cannot write questions")
    questions, skipped = [], 0
    for i, group in enumerate(groups, 1):
        sentences = "\n".join(f"- {t}" for t in group.texts(graph))
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": TEMPLATE.format(sentences=sentences)}]
        data = reasoner.complete_json("question", messages, SCHEMA)  # validated, one retry, None if still invalid
        if data is None:
            skipped += 1
            log.warning("group %d (%s): no valid question after a retry; skipped", i, group.strategy)
            continue
        q = group_question(graph, group, f"{id_prefix}{i:02d}", data["question"].strip(), data["answer"].strip())
        q.meta["written_by"] = getattr(reasoner, "name", "llm")
        questions.append(q)
    return questions, skipped


def fresh_questions(reasoner, graph: SimilarityGraph, per_strategy: int, seed: int = 0) -> tuple[list[Question], int]:
    """``generate_questions`` for ``per_strategy`` fresh groups of every grouping strategy (``grouping.build_groups``)."""
    groups = [g for s in GROUPING_STRATEGIES for g in build_groups(graph, s, per_strategy, seed)]
    return generate_questions(reasoner, graph, groups)


def teaching_questions(data, generate: bool, writer_spec: str, embedder, graph: SimilarityGraph, per_strategy: int,
                       seed: int = 0, limit: int | None = None):
    """Notebook 03's questions: ``data``'s own, or with ``generate`` fresh ones written by the reasoner
    ``writer_spec`` (``fresh_questions``, at most ``limit`` spread over the strategies); returned with the lines
    saying how many were written and where they differ from the paper's (``paper.questions_sentence``)."""
    from dataclasses import replace

    from ...reasoning import resolve_reasoner
    from .experiment import spread_limit
    from .paper import questions_sentence

    said, writer = [], None
    if generate:
        writer = resolve_reasoner(writer_spec, embedder)
        generated, skipped = fresh_questions(writer, graph, per_strategy, seed)
        said.append(f"{len(generated)} questions written by {writer.name}, {skipped} groups skipped (invalid replies)")
        data = spread_limit(replace(data, questions=generated), limit)
    said.append(questions_sentence(data.questions, data.name, writer.name if writer else None))
    return data, said
