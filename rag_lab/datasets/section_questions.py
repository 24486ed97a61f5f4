"""Template-based cross-section questions (the GraLC-RAG paper's benchmark construction).

Five templates, each tying two IMRaD sections of one article:

=====================  ==========================================================  ==================
template               question                                                    sections
=====================  ==========================================================  ==================
method_result          What results were obtained using [method X]?                methods -> results
intro_result           Does the data support the hypothesis that [hypothesis]?     intro -> results
result_discussion      How do the authors interpret the finding that [result Y]?   results -> discussion
method_discussion      What limitations of [method X] are discussed?               methods -> discussion
cross_study            How do the results compare to [cited prior work Z]?         results -> discussion
=====================  ==========================================================  ==================

Slots come from the parsed article: [method X] is a concept (procedure, drug, device or
research activity) linked in the Methods and also mentioned in the target section; the
hypothesis is the aim clause of the Introduction ("we hypothesized that …", "… whether …")
or, failing a clause, "<intervention> affects <outcome>" from the concepts of the aim
sentence; [result Y] is a Results sentence with a number and a concept the Discussion
discusses (statistics in parentheses removed); [cited prior work Z] is the title of a
reference cited in the Discussion. Each question names its article (``gold_doc_ids``), the
two top-level sections (``gold_section_ids``) and the paragraph of each that holds the
evidence (``gold_contexts``). Choices among candidates are drawn with a seeded RNG per
article and template, so a seed gives the same questions on every run.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

from ..core.types import Document, Question
from .linking import ConceptLinker
from .structure import Unit, sections_by_role, structure_units

TEMPLATES = {
    "method_result": ("What results were obtained using {slot}?", "methods", "results"),
    "intro_result": ("Does the data support the hypothesis that {slot}?", "intro", "results"),
    "result_discussion": ("How do the authors interpret the finding that {slot}?", "results", "discussion"),
    "method_discussion": ("What limitations of {slot} are discussed?", "methods", "discussion"),
    "cross_study": ("How do the results compare to {slot}?", "results", "discussion"),
}
METHOD_TYPES = {"Therapeutic or Preventive Procedure", "Diagnostic Procedure", "Laboratory Procedure",
                "Pharmacologic Substance", "Pharmacologic Class", "Medical Device", "Research Activity",
                "Chemicals and Drugs", "Analytical, Diagnostic and Therapeutic Techniques, and Equipment"}
INTERVENTION_TYPES = ["Pharmacologic Substance", "Therapeutic or Preventive Procedure", "Pharmacologic Class",
                      "Medical Device", "Diagnostic Procedure", "Chemicals and Drugs",
                      "Analytical, Diagnostic and Therapeutic Techniques, and Equipment"]
OUTCOME_TYPES = ["Laboratory or Test Result", "Clinical Attribute", "Finding", "Sign or Symptom",
                 "Quantitative Concept", "Disease or Syndrome", "Phenomena and Processes", "Diseases"]
HYPOTHESIS = re.compile(r"\bhypothesi[sz]ed that\s+(?P<c>[^.;]+)", re.I)
WHETHER = re.compile(r"\bwhether\s+(?P<c>.+?)(?=,\s*(?:and\s+)?(?:whether|to)\b|[.;]|$)", re.I)
PRONOUN_START = re.compile(r"^(it|they|this|these|those|that|he|she)\b", re.I)
AIM = re.compile(r"\b(hypothesi[sz]|whether|aim|sought|designed|conducted|to (?:test|assess|estimate|examine|"
                 r"evaluate|compare|determine))", re.I)
PARENS_WITH_DIGITS = re.compile(r"\s*[(\[][^()\[\]]*\d[^()\[\]]*[)\]]")
MAX_SLOT_WORDS = 30


@dataclass
class Paragraph:
    unit: Unit
    text: str
    concepts: list[str]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", text) if s.strip()]


def _clip(text: str, words: int = MAX_SLOT_WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:words]).rstrip(",;: ")


def _lower_first(text: str) -> str:
    if len(text) > 1 and text[0].isupper() and not text[1].isupper() and not text.split()[0].isupper():
        return text[0].lower() + text[1:]
    return text


class QuestionGenerator:
    """Cross-section questions for parsed articles (sections with IMRaD roles + linked concepts)."""

    def __init__(self, linker: ConceptLinker, seed: int = 0, per_template: int = 1):
        if per_template < 1:
            raise ValueError(f"per_template must be at least 1, got {per_template}")
        self.linker = linker
        self.vocabulary = linker.vocabulary
        self.seed = seed
        self.per_template = per_template

    # -- article views -----------------------------------------------------------------
    def paragraphs(self, doc: Document) -> dict[str, list[Paragraph]]:
        """Paragraphs (not captions' headings) of each IMRaD role, with their linked concepts."""
        units, _ = structure_units(doc)
        roles = sections_by_role(doc)
        out: dict[str, list[Paragraph]] = {}
        for role, tops in roles.items():
            for top in tops:
                for u in units:
                    if u.kind == "paragraph" and top.start <= u.start and u.end <= top.end and not u.title:
                        text = doc.text[u.start:u.end]
                        out.setdefault(role, []).append(Paragraph(u, text, self.linker.concepts_in(text)))
        return out

    def _rng(self, doc: Document, template: str) -> random.Random:
        return random.Random(f"{self.seed}:{doc.id}:{template}")

    def _name(self, concept_id: str) -> str:
        return self.vocabulary[concept_id].name

    # -- slot finders: each returns candidates (slot text, source paragraph, target paragraph) ----
    def _typed_pairs(self, src: list[Paragraph], dst: list[Paragraph], types: set[str]):
        """Concepts of ``src`` also mentioned in ``dst``: those of the wanted types, and the rest."""
        seen, typed, other = set(), [], []
        for p in src:
            for cid in p.concepts:
                if cid in seen:
                    continue
                target = next((q for q in dst if cid in q.concepts), None)
                if target is None:
                    continue
                seen.add(cid)
                (typed if self.vocabulary[cid].semantic_type in types else other).append(
                    (self._name(cid), p, target))
        return typed, other

    def _first_of_types(self, concepts: list[str], types: list[str]) -> str | None:
        ranked = [(types.index(self.vocabulary[c].semantic_type), i, c) for i, c in enumerate(concepts)
                  if self.vocabulary[c].semantic_type in types]
        return min(ranked)[2] if ranked else None

    def _best_match(self, concepts: Iterable[str], dst: list[Paragraph]) -> Paragraph | None:
        concepts = set(concepts)
        scored = [(len(concepts & set(q.concepts)), -i, q) for i, q in enumerate(dst)]
        best = max(scored, key=lambda t: (t[0], t[1]), default=None)
        return best[2] if best and best[0] > 0 else None

    def _hypotheses(self, src: list[Paragraph], dst: list[Paragraph]):
        out = []
        for p in src:
            for sent in _sentences(p.text):
                if not AIM.search(sent):
                    continue
                m = HYPOTHESIS.search(sent) or WHETHER.search(sent)
                concepts = self.linker.concepts_in(sent)
                if m and not PRONOUN_START.match(m.group("c").strip()):
                    slot = _clip(PARENS_WITH_DIGITS.sub("", m.group("c")))
                else:
                    action = self._first_of_types(concepts, INTERVENTION_TYPES)
                    outcome = self._first_of_types(concepts, OUTCOME_TYPES)
                    if action is None or outcome is None:
                        continue
                    slot = f"{self._name(action)} affects {self._name(outcome)}"
                target = self._best_match(concepts, dst)
                if target is not None and slot:
                    out.append((_lower_first(slot), p, target))
        return out[-3:]  # the aim comes at the end of the introduction

    def _findings(self, src: list[Paragraph], dst: list[Paragraph]):
        out = []
        for p in src:
            for sent in _sentences(p.text):
                if not re.search(r"\d", sent) or len(sent.split()) > 45:
                    continue
                concepts = self.linker.concepts_in(sent)
                target = self._best_match(concepts, dst)
                if target is None:
                    continue
                slot = _clip(PARENS_WITH_DIGITS.sub("", sent).rstrip("."))
                if len(slot.split()) >= 6:
                    out.append((_lower_first(slot), p, target))
        return out

    def _limitations(self, src: list[Paragraph], dst: list[Paragraph], doc: Document):
        limits = [q for q in dst if any(s.title.lower().startswith("limitation") for s in doc.sections
                                        if s.start <= q.unit.start < s.end and s.kind != "paragraph")]
        typed_limits, other_limits = self._typed_pairs(src, limits, METHOD_TYPES)
        typed_all, other_all = self._typed_pairs(src, dst, METHOD_TYPES)
        return typed_limits or typed_all or other_limits or other_all

    def _citations(self, doc: Document, by_role: dict[str, list[Paragraph]]):
        meta = doc.meta if isinstance(doc.meta, dict) else {}
        refs = meta.get("references", {})
        discussion = by_role.get("discussion", [])
        out = []
        for c in meta.get("citations", []):
            para = next((q for q in discussion if q.unit.start <= c["start"] < q.unit.end), None)
            title = refs.get(c["rid"], {}).get("title", "").rstrip(".")
            if para is None or not title:
                continue
            target = self._best_match(self.linker.concepts_in(title) or para.concepts, by_role.get("results", []))
            if target is not None:
                out.append((f"the prior study “{_clip(title)}”", target, para))
        return list({slot: (slot, a, b) for slot, a, b in out}.values())

    # -- generation ----------------------------------------------------------------------
    def candidates(self, doc: Document, template: str, by_role: dict[str, list[Paragraph]]):
        _, src_role, dst_role = TEMPLATES[template]
        src, dst = by_role.get(src_role, []), by_role.get(dst_role, [])
        if template == "cross_study":
            return self._citations(doc, by_role)
        if not src or not dst:
            return []
        if template == "method_result":
            typed, other = self._typed_pairs(src, dst, METHOD_TYPES)
            return typed or other
        if template == "intro_result":
            return self._hypotheses(src, dst)
        if template == "result_discussion":
            return self._findings(src, dst)
        return self._limitations(src, dst, doc)

    def for_document(self, doc: Document) -> list[Question]:
        by_role = self.paragraphs(doc)
        tops = sections_by_role(doc)
        out = []
        for template in TEMPLATES:
            text, src_role, dst_role = TEMPLATES[template]
            found = self.candidates(doc, template, by_role)
            if not found:
                continue
            picks = self._rng(doc, template).sample(found, min(self.per_template, len(found)))
            for n, (slot, src, dst) in enumerate(picks, 1):
                sections = [next(t.id for t in tops[role] if t.start <= para.unit.start < t.end)
                            for role, para in ((src_role, src), (dst_role, dst))]
                out.append(Question(
                    id=f"{doc.id}:{template}-{n}", question=text.format(slot=slot), gold_doc_ids=[doc.id],
                    gold_contexts=list(dict.fromkeys([src.text, dst.text])), gold_section_ids=sections,
                    meta={"template": template, "slot": slot, "source_section": sections[0],
                          "target_section": sections[1], "source_role": src_role, "target_role": dst_role}))
        return out

    def for_documents(self, docs: Iterable[Document]) -> list[Question]:
        return [q for d in docs for q in self.for_document(d)]
