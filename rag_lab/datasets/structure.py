"""A document's structure: units (section / subsection / paragraph), IMRaD roles and the
document structure graph G_s of GraLC-RAG.

Any Document works. With JATS-parsed sections the units are those sections; a Document
from the generic form without sections falls back to paragraphs (blocks separated by a
blank line), and a single-block text to sentences, which then play the paragraph role.
``fallback`` on the result says which level was used.

The graph (networkx ``MultiDiGraph``, one edge per relation type) has a ``document`` root,
``section``/``subsection``/``paragraph`` nodes and ``citation`` nodes (references of the
bibliography), and four edge types: ``hierarchical`` (parent -> child), ``sequential``
(consecutive siblings in reading order), ``citation`` (paragraph -> cited reference) and
``cross_reference`` (paragraph -> the figure/table caption it refers to).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..evaluation.metrics import LEVELS, section_for_span  # noqa: F401  (the core's chunk-to-section rule, re-exported)
from ..core.types import Document

STRUCTURAL_SCORES = {"section": 1.0, "subsection": 0.7, "paragraph": 0.4}
ROLE_PATTERNS = [  # first match wins; order matters ("results and discussion" -> results)
    ("abstract", r"^abstract|^summary$"),
    ("intro", r"intro|background|rationale"),
    ("methods", r"method|materials|patients and|study design|study population|experimental|procedures"),
    ("results", r"result|findings"),
    ("discussion", r"discussion|comment|interpretation"),
    ("conclusion", r"conclu"),
]
SEC_TYPE_ROLES = {"intro": "intro", "introduction": "intro", "background": "intro", "methods": "methods",
                  "materials|methods": "methods", "materials": "methods", "results": "results",
                  "discussion": "discussion", "conclusions": "conclusion", "conclusion": "conclusion",
                  "results|discussion": "results", "abstract": "abstract"}


@dataclass(frozen=True)
class Unit:
    id: str
    kind: str
    start: int
    end: int
    level: int
    parent: str | None
    title: str = ""


def _blocks(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    end = len(text) if end is None else end
    return [(start + m.start(), start + m.end())
            for m in re.finditer(r"\S(?:.*?\S)?(?=\n\s*\n|\s*\Z)", text[start:end], flags=re.S)]


def structure_units(doc: Document) -> tuple[list[Unit], str]:
    """Units in reading order, and the level they come from: "sections", "paragraphs" or "sentences"."""
    if doc.sections:
        ordered = sorted(doc.sections, key=lambda s: (s.start, -s.end, s.level))
        units: list[Unit] = []
        stack: list[Unit] = []
        for s in ordered:
            while stack and not (stack[-1].start <= s.start and s.end <= stack[-1].end and stack[-1].id != s.id):
                stack.pop()
            u = Unit(s.id, s.kind, s.start, s.end, s.level, stack[-1].id if stack else None, s.title)
            units.append(u)
            stack.append(u)
        if not any(u.kind == "paragraph" for u in units):
            units = _with_paragraphs(doc, units)
        return units, "sections"
    blocks = _blocks(doc.text)
    if len(blocks) > 1:
        return [Unit(f"{doc.id}:p{i}", "paragraph", s, e, 1, None) for i, (s, e) in enumerate(blocks, 1)], "paragraphs"
    from ..core.chunking import sentence_spans
    return [Unit(f"{doc.id}:sent{i}", "paragraph", s, e, 1, None)
            for i, (s, e) in enumerate(sentence_spans(doc.text), 1)], "sentences"


def _with_paragraphs(doc: Document, units: list[Unit]) -> list[Unit]:
    """Sections without paragraph children: blank-line blocks inside each leaf section become paragraphs."""
    parents = {u.parent for u in units}
    out = []
    for u in units:
        out.append(u)
        if u.id not in parents:
            for i, (s, e) in enumerate(_blocks(doc.text, u.start, u.end), 1):
                out.append(Unit(f"{u.id}.p{i}", "paragraph", s, e, u.level + 1, u.id))
    return out


def section_role(doc: Document, section_id: str) -> str | None:
    """IMRaD role of a section: from JATS ``sec-type`` when present, else from its title."""
    meta_roles = doc.meta.get("roles", {}) if isinstance(doc.meta, dict) else {}
    if section_id in meta_roles:
        return meta_roles[section_id]
    sec_type = (doc.meta.get("sec_types", {}) if isinstance(doc.meta, dict) else {}).get(section_id)
    if sec_type and sec_type.lower() in SEC_TYPE_ROLES:
        return SEC_TYPE_ROLES[sec_type.lower()]
    title = next((s.title for s in doc.sections if s.id == section_id), "")
    title = re.sub(r"^[\d.\sIVX]+\s", "", title.strip().lower())
    for role, pattern in ROLE_PATTERNS:
        if title and re.search(pattern, title):
            return role
    return None


def top_sections(doc: Document) -> list[Unit]:
    """The outermost units (no parent) of kind section, in reading order."""
    units, _ = structure_units(doc)
    return [u for u in units if u.parent is None and u.kind == "section"]


def sections_by_role(doc: Document) -> dict[str, list[Unit]]:
    out: dict[str, list[Unit]] = {}
    for u in top_sections(doc):
        role = section_role(doc, u.id)
        if role:
            out.setdefault(role, []).append(u)
    return out


def structure_graph(doc: Document):
    """The document structure graph G_s (networkx MultiDiGraph; edge key = edge type)."""
    import networkx as nx

    units, fallback = structure_units(doc)
    g = nx.MultiDiGraph(doc_id=doc.id, fallback=fallback)
    root = f"{doc.id}:document"
    g.add_node(root, kind="document", title=doc.title, start=0, end=len(doc.text))
    for u in units:
        g.add_node(u.id, kind=u.kind, title=u.title, start=u.start, end=u.end, level=u.level)
        g.add_edge(u.parent or root, u.id, key="hierarchical", type="hierarchical")
    children: dict[str, list[Unit]] = {}
    for u in units:
        children.setdefault(u.parent or root, []).append(u)
    for siblings in children.values():
        for a, b in zip(siblings, siblings[1:]):
            g.add_edge(a.id, b.id, key="sequential", type="sequential")
    meta = doc.meta if isinstance(doc.meta, dict) else {}
    references = meta.get("references", {})
    for c in meta.get("citations", []):
        node = f"{doc.id}:{c['rid']}"
        if node not in g:
            ref = references.get(c["rid"], {})
            g.add_node(node, kind="citation", title=ref.get("title", ""), citation=ref.get("citation", ""))
        source = c.get("paragraph") if c.get("paragraph") in g else _unit_at(units, c["start"])
        if source:
            g.add_edge(source, node, key="citation", type="citation")
    for x in meta.get("xrefs", []):
        target = x.get("target")
        source = x.get("paragraph") if x.get("paragraph") in g else _unit_at(units, x["start"])
        if target in g and source and source != target:
            g.add_edge(source, target, key="cross_reference", type="cross_reference", ref_type=x.get("ref_type", ""))
    return g


def _unit_at(units: list[Unit], pos: int) -> str | None:
    best = None
    for u in units:
        if u.start <= pos < u.end and (best is None or u.end - u.start < best.end - best.start):
            best = u
    return best.id if best else None


def edge_type_counts(graph) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, _, t in graph.edges(data="type"):
        out[t] = out.get(t, 0) + 1
    return out
