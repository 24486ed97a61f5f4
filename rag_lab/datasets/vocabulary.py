"""A concept vocabulary in the shape of MeSH/UMLS: ids, preferred names, synonyms, a semantic
type and typed relations between concepts.

Two sources feed it: the project's ``data/biomed_concepts/concepts.jsonl`` (``from_jsonl``)
and the real MeSH descriptor XML (``load_mesh_descriptors``, parsed by ``rag_lab.datasets.mesh``).
GraLC-RAG links text against the names and synonyms and walks the relations for the 1-hop
neighbourhood of every linked concept.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

RELATION_TYPES = ("is_a", "part_of", "may_treat", "causes", "associated_with")


@dataclass(frozen=True)
class Concept:
    id: str
    name: str
    synonyms: tuple[str, ...] = ()
    semantic_type: str = ""
    relations: tuple[tuple[str, str], ...] = ()  # (relation type, target concept id)

    @property
    def surface_forms(self) -> list[str]:
        return list(dict.fromkeys([self.name, *self.synonyms]))


@dataclass
class ConceptVocabulary:
    """Concepts by id, with a reverse index so 1-hop neighbourhoods include incoming edges."""

    concepts: dict[str, Concept]
    source: str = ""
    _incoming: dict[str, list[tuple[str, str]]] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for c in self.concepts.values():
            for rel, target in c.relations:
                if target not in self.concepts:
                    raise ValueError(f"vocabulary {self.source or '<memory>'}: concept {c.id!r} has a {rel!r} "
                                     f"relation to unknown concept {target!r}")
                self._incoming.setdefault(target, []).append((rel, c.id))

    def __len__(self) -> int:
        return len(self.concepts)

    def __getitem__(self, concept_id: str) -> Concept:
        return self.concepts[concept_id]

    def __contains__(self, concept_id: str) -> bool:
        return concept_id in self.concepts

    def neighbours(self, concept_id: str) -> list[tuple[str, str]]:
        """(relation, other concept id) for every edge touching the concept, either direction."""
        c = self.concepts[concept_id]
        return list(c.relations) + self._incoming.get(concept_id, [])

    @classmethod
    def from_concepts(cls, concepts: Iterable[Concept], source: str = "") -> "ConceptVocabulary":
        out: dict[str, Concept] = {}
        for c in concepts:
            if c.id in out:
                raise ValueError(f"vocabulary {source or '<memory>'}: duplicate concept id {c.id!r}")
            out[c.id] = c
        return cls(out, source)

    @classmethod
    def from_jsonl(cls, path: str | Path) -> "ConceptVocabulary":
        """Read the project's concept file: one JSON object per line with id, name, synonyms,
        semantic_type and relations [{type, target}]."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"concept vocabulary {path} does not exist")
        concepts = []
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{i}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: invalid JSON ({e.msg})") from None
            concepts.append(concept_from_dict(obj, where))
        if not concepts:
            raise ValueError(f"{path}: no concepts (the file is empty)")
        return cls.from_concepts(concepts, str(path))


def concept_from_dict(obj: dict, where: str) -> Concept:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("id", "name"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise ValueError(f"{where}: field {key!r} must be a non-empty string")
    synonyms = obj.get("synonyms", [])
    if not isinstance(synonyms, list) or not all(isinstance(s, str) for s in synonyms):
        raise ValueError(f"{where}: field 'synonyms' must be a list of strings")
    relations = []
    for j, r in enumerate(obj.get("relations", [])):
        if not isinstance(r, dict) or not isinstance(r.get("type"), str) or not isinstance(r.get("target"), str):
            raise ValueError(f"{where}: relations[{j}] must be an object with string fields 'type' and 'target'")
        relations.append((r["type"], r["target"]))
    return Concept(obj["id"], obj["name"], tuple(s for s in synonyms if s.strip()),
                   str(obj.get("semantic_type", "")), tuple(relations))


def default_vocabulary_path() -> Path:
    from . import DATA_DIR
    return DATA_DIR / "biomed_concepts" / "concepts.jsonl"


def load_vocabulary(source: str | Path | ConceptVocabulary | None = None) -> ConceptVocabulary:
    """A vocabulary from a ``.jsonl`` file (project form), a MeSH ``desc*.xml`` file, or the shipped default."""
    if isinstance(source, ConceptVocabulary):
        return source
    path = Path(source) if source is not None else default_vocabulary_path()
    if not path.exists():
        raise FileNotFoundError(f"concept vocabulary {path} does not exist (expected a concepts .jsonl "
                                "or a MeSH desc*.xml file)")
    return _load_file(str(path.resolve()), path.stat().st_mtime_ns)


@lru_cache(maxsize=4)
def _load_file(path: str, mtime_ns: int) -> ConceptVocabulary:
    """Parsed once per process and file version (the MeSH XML takes a while to read)."""
    if path.lower().endswith((".xml", ".xml.gz")):
        return load_mesh_descriptors(path)
    return ConceptVocabulary.from_jsonl(path)


def load_mesh_descriptors(path: str | Path | None = None) -> ConceptVocabulary:
    """A vocabulary from the MeSH descriptor XML (``desc20XX.xml``; None: ``$RAG_LAB_DATA_MESH``, else the
    downloaded file in the data cache)."""
    from .mesh import default_mesh_file, mesh_concepts

    path = path or default_mesh_file()
    concepts = mesh_concepts(path)
    where = str(path)
    return ConceptVocabulary.from_concepts([concept_from_dict(c, f"{where}: {c['id']}") for c in concepts], where)
