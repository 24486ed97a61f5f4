"""Reading JATS files as they come from PubMed Central, and saying exactly what is wrong when
they cannot be read.

``xml.etree`` parses well-formed XML and ignores DOCTYPE declarations (no DTD is fetched), so
two things real PMC files hold still stop it: named HTML entities (``&nbsp;``, ``&ndash;``) that
only the JATS DTD defines, and namespace prefixes (``mml:``, ``xlink:``) used in a fragment cut
out of the element that declared them. Both are repaired — the entity becomes its numeric
character reference, the prefix gets a declaration — and the repair is logged and returned, so a
loader can count it. Anything else that is not well-formed gets an error naming the file, the
line and column, and what was expected there (for an unclosed tag: which element, opened on which
line). Own code: expat reports the position of an error but not which element was left open; a
second pass with a stack of open elements finds it.
"""
from __future__ import annotations

import html.entities
import logging
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from pathlib import Path

log = logging.getLogger(__name__)

XML_ENTITIES = {"amp", "lt", "gt", "quot", "apos"}
KNOWN_PREFIXES = {"xlink": "http://www.w3.org/1999/xlink", "mml": "http://www.w3.org/1998/Math/MathML",
                  "xsi": "http://www.w3.org/2001/XMLSchema-instance", "ali": "http://www.niso.org/schemas/ali/1.0/",
                  "xml": None}
_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]*);")
_PREFIX_USE = re.compile(rb"</?([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*|\s([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=")
_DECLARED = re.compile(rb"xmlns:([A-Za-z_][\w.-]*)\s*=")
_ROOT_TAG = re.compile(rb"<(?![?!/])[A-Za-z_][^\s>/]*")


def source_bytes(source: str | Path | bytes) -> tuple[bytes, str]:
    """The bytes to parse and a name for messages (the path, or ``<string>``)."""
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("<")):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"JATS file {path} does not exist")
        return path.read_bytes(), str(path)
    return (source.encode("utf-8") if isinstance(source, str) else source), "<string>"


def _numeric_entities(data: bytes) -> tuple[bytes, list[str]]:
    """Named HTML entities (not XML's five) as numeric references; the names replaced."""
    seen: list[str] = []

    def sub(m):
        name = m.group(1).decode("ascii")
        if name in XML_ENTITIES or name not in html.entities.name2codepoint:
            return m.group(0)
        if name not in seen:
            seen.append(name)
        return f"&#{html.entities.name2codepoint[name]};".encode("ascii")

    return _ENTITY.sub(sub, data), seen


def _declare_prefixes(data: bytes) -> tuple[bytes, list[str]]:
    """Declarations on the root element for prefixes used but never declared."""
    used = {(a or b).decode() for a, b in _PREFIX_USE.findall(data)}
    declared = {p.decode() for p in _DECLARED.findall(data)} | {"xmlns", "xml"}
    missing = sorted(used - declared)
    root = _ROOT_TAG.search(_skip_prolog(data))
    if not missing or root is None:
        return data, []
    offset = len(data) - len(_skip_prolog(data)) + root.end()
    decl = b"".join(f' xmlns:{p}="{KNOWN_PREFIXES.get(p) or "urn:rag-lab:undeclared:" + p}"'.encode() for p in missing)
    return data[:offset] + decl + data[offset:], missing


def _skip_prolog(data: bytes) -> bytes:
    """The bytes from the root element on (XML declaration, comments and DOCTYPE skipped)."""
    pos = 0
    while True:
        m = re.compile(rb"\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(\[.*?\]\s*)?>)", re.S).match(data, pos)
        if not m or m.end() == pos:
            return data[pos:]
        pos = m.end()


def parse_bytes(data: bytes, name: str) -> tuple[ET.Element, list[str]]:
    """The root element, and the repairs that were needed (empty when the file parsed as it is)."""
    repairs: list[str] = []
    for _ in range(3):
        try:
            root = ET.fromstring(data)
        except ET.ParseError as e:
            reason = str(e)
            if reason.startswith("undefined entity"):
                data, names = _numeric_entities(data)
                if names:
                    repairs.append("named entities " + ", ".join(f"&{n};" for n in names) + " read as characters")
                    continue
            if reason.startswith("unbound prefix"):
                data, prefixes = _declare_prefixes(data)
                if prefixes:
                    repairs.append("undeclared namespace prefixes " + ", ".join(prefixes) + " declared")
                    continue
            raise ValueError(describe_error(data, name, reason)) from None
        if repairs:
            log.warning("%s: %s", name, "; ".join(repairs))
        return root, repairs
    raise ValueError(describe_error(data, name, "still not well-formed after repairs"))


def describe_error(data: bytes, name: str, fallback: str = "") -> str:
    """Where the XML stops being well-formed and what was expected there."""
    parser = xml.parsers.expat.ParserCreate()
    stack: list[tuple[str, int]] = []
    parser.StartElementHandler = lambda tag, attrs: stack.append((tag, parser.CurrentLineNumber))
    parser.EndElementHandler = lambda tag: stack.pop() if stack else None
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        reason = xml.parsers.expat.ErrorString(e.code)
        where = f"{name}: not well-formed XML at line {e.lineno}, column {e.offset + 1}: {reason}"
        if reason == "mismatched tag" and stack:
            tag, line = stack[-1]
            return f"{where} (<{tag}> opened at line {line} is not closed: expected </{tag}> here)"
        if reason == "no element found" and stack:
            tag, line = stack[-1]
            return f"{where} (the file ends inside <{tag}> opened at line {line}: expected </{tag}>; truncated?)"
        if reason == "no element found":
            return f"{where} (the file is empty: expected a JATS <article>)"
        if reason == "undefined entity":
            line = data.splitlines()[e.lineno - 1] if e.lineno <= len(data.splitlines()) else b""
            m = _ENTITY.match(line, e.offset)
            entity = m.group(0).decode("ascii", "replace") + " " if m else ""
            return f"{where} ({entity}is no XML entity: expected a numeric character reference or an entity " \
                   "the file declares)"
        if reason == "junk after document element":
            return f"{where} (expected one root element, e.g. <article> or <pmc-articleset>)"
        return where
    return f"{name}: not well-formed XML ({fallback})"
