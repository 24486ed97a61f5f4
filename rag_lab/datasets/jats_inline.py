"""JATS mixed content -> one line of text, with the exact span of every ``<xref>``.

Element names are read without their namespace (``mml:math`` is ``math``). Floats (figures,
tables), graphics, footnotes and supplementary material inside a paragraph are left out of its
text (figures and tables become paragraphs of their own); a formula is written once, from its
TeX if it has one (PMC's LaTeX preamble removed; TeX keeps fractions and subscripts readable on
one line), else from the text of its MathML, so an ``<alternatives>`` group does not print the
same formula two or three times.
"""
from __future__ import annotations

import re

SKIP_INLINE = {"fig", "fig-group", "table-wrap", "table-wrap-group", "table", "graphic", "inline-graphic", "media",
               "supplementary-material", "fn", "object-id", "inline-supplementary-material"}
SPACED = {"list-item", "td", "th", "tr", "p", "title", "label", "def-item", "term", "def", "break"}
FORMULAS = {"inline-formula", "disp-formula"}
BRACKETED = re.compile(r"^[\d\s,\u2013\u2014\-–]+$")
_TEX_BODY = re.compile(r"\\begin\{document\}(.*?)\\end\{document\}", re.S)
_TEX_WRAPPER = re.compile(r"\\(mathrm|text|mathit|textrm|mbox|rm|it)\s*\{([^{}]*)\}")
_TEX_PREAMBLE = re.compile(r"\\(documentclass|usepackage|setlength)(\[[^\]]*\])?\{[^}]*\}(\{[^}]*\})?")


def tag(el) -> str:
    t = el.tag if isinstance(el.tag, str) else ""
    return t.rsplit("}", 1)[-1]


def children(el, name: str):
    return [c for c in el if tag(c) == name]


def first_child(el, name: str):
    found = children(el, name)
    return found[0] if found else None


def first(el, path: list[str]):
    """First descendant along a chain of tag names (namespace-agnostic)."""
    cur = [el]
    for name in path:
        nxt = [c for e in cur for c in e.iter() if c is not e and tag(c) == name]
        if not nxt:
            return None
        cur = nxt[:1]
    return cur[0]


def plain(el) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def tex_text(tex: str) -> str:
    """A ``<tex-math>`` as the formula alone: PMC wraps each one in a small LaTeX document."""
    m = _TEX_BODY.search(tex)
    body = m.group(1) if m else _TEX_PREAMBLE.sub(" ", tex)
    body = _TEX_WRAPPER.sub(r"\2", body)
    return " ".join(body.split()).strip("$ ")


def formula_text(el) -> str:
    """One rendering of a formula: TeX, else MathML text, else whatever text it holds."""
    tex = first(el, ["tex-math"]) if tag(el) != "tex-math" else el
    if tex is not None:
        return tex_text("".join(tex.itertext()))
    math = first(el, ["math"]) if tag(el) != "math" else el
    if math is not None:
        return " ".join("".join(math.itertext()).split())
    return " ".join(_text_without(el, SKIP_INLINE | {"label"}).split())


def _text_without(el, skip: set[str]) -> str:
    parts = [el.text or ""]
    for c in el:
        if tag(c) not in skip:
            parts.append(_text_without(c, skip))
        parts.append(c.tail or "")
    return "".join(parts)


class _Inline:
    """Characters are collected with a tag (the xref they belong to, or None); whitespace is
    then collapsed over the tagged characters, so the spans survive normalisation."""

    def __init__(self):
        self.chars: list[tuple[str, int | None]] = []
        self.xrefs: list[dict] = []

    def _put(self, text: str | None, ref: int | None) -> None:
        if text:
            self.chars.extend((ch, ref) for ch in text)

    def walk(self, el, ref: int | None = None, top: bool = True) -> None:
        name = tag(el)
        if not top:
            if name in SKIP_INLINE:
                self._put(el.tail, ref)
                return
            if name == "xref" and ref is None:
                self._xref(el)
                self._put(el.tail, ref)
                return
            if name in FORMULAS or name == "alternatives":
                label = plain(first_child(el, "label"))
                self._put(f" {formula_text(el)}{' ' + label if label else ''} ", ref)
                self._put(el.tail, ref)
                return
            if name in SPACED:
                self._put(" ", ref)
        self._put(el.text, ref)
        for child in el:
            self.walk(child, ref, top=False)
        if not top:
            if name in SPACED:
                self._put(" ", ref)
            self._put(el.tail, ref)

    def _xref(self, el) -> None:
        idx = len(self.xrefs)
        ref_type = el.get("ref-type", "")
        label = plain(el)
        self.xrefs.append({"ref_type": ref_type, "rid": el.get("rid", "")})
        prev = next((ch for ch, _ in reversed(self.chars) if not ch.isspace()), "")
        if ref_type == "bibr" and label and BRACKETED.match(label) and prev not in "[(":
            label = f"[{label}]"
        if not label:  # an empty <xref/> (the renderer would draw a marker): show its target id
            label = f"[{el.get('rid', '?')}]"
        self._put(label, idx)

    def result(self) -> tuple[str, list[dict]]:
        out: list[str] = []
        spans: dict[int, list[int]] = {}
        pending_space = False
        for ch, ref in self.chars:
            if ch.isspace():
                pending_space = bool(out)
                continue
            if pending_space:
                out.append(" ")
                pending_space = False
            if ref is not None:
                spans.setdefault(ref, [len(out), len(out)])
                spans[ref][1] = len(out) + 1
            out.append(ch)
        xrefs = []
        for i, x in enumerate(self.xrefs):
            if i in spans:
                xrefs.append({**x, "start": spans[i][0], "end": spans[i][1]})
        return "".join(out), xrefs


def render_inline(el) -> tuple[str, list[dict]]:
    """The element's text on one line (whitespace collapsed) and its cross-references with spans."""
    r = _Inline()
    if tag(el) in FORMULAS:
        label = plain(first_child(el, "label"))
        r._put(f"{formula_text(el)}{' ' + label if label else ''}", None)
    else:
        r.walk(el)
    return r.result()
