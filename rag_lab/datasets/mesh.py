"""The MeSH descriptor file (``desc20XX.xml`` from https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/)
as a GraLC-RAG concept vocabulary.

MeSH is a vocabulary, not a question set, so this module offers ``mesh_concepts`` (read by
``rag_lab.datasets.vocabulary.load_vocabulary`` for any ``.xml`` path) rather than a registered dataset. Per
descriptor: id = DescriptorUI, name = DescriptorName, synonyms = the entry terms of all its
concepts (permuted terms left out), semantic type = the MeSH tree category of its first tree
number (MeSH has no UMLS semantic types), and relations: ``is_a`` to the descriptor of each
parent tree number (``part_of`` in the Anatomy tree), ``is_a`` to each pharmacological
action (drug -> class) and ``associated_with`` for "see related" descriptors. Relations to
descriptors outside the file are dropped. The file is read incrementally (``iterparse``);
``.xml.gz`` works too. Without a path: ``$RAG_LAB_DATA_MESH``, else the newest ``desc*.xml`` in
``<data cache>/mesh`` (where ``python -m rag_lab download mesh`` puts it).
"""
from __future__ import annotations

import gzip
import os
import xml.etree.ElementTree as ET
from pathlib import Path

ENV = "RAG_LAB_DATA_MESH"
TREE_CATEGORIES = {
    "A": "Anatomy", "B": "Organisms", "C": "Diseases", "D": "Chemicals and Drugs",
    "E": "Analytical, Diagnostic and Therapeutic Techniques, and Equipment", "F": "Psychiatry and Psychology",
    "G": "Phenomena and Processes", "H": "Disciplines and Occupations",
    "I": "Anthropology, Education, Sociology, and Social Phenomena", "J": "Technology, Industry, and Agriculture",
    "K": "Humanities", "L": "Information Science", "M": "Named Groups", "N": "Health Care",
    "V": "Publication Characteristics", "Z": "Geographicals",
}


def _text(el, path: str) -> str:
    found = el.find(path)
    return " ".join(found.text.split()) if found is not None and found.text else ""


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_descriptor_records(path: str | Path) -> list[dict]:
    """Plain dicts (ui, name, terms, trees, actions, related) for every DescriptorRecord."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"MeSH descriptor file {path} not found; download desc20XX.xml from "
                                "https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/ "
                                f"and pass its path (or set {ENV})")
    records = []
    try:
        with _open(path) as fh:
            for _, el in ET.iterparse(fh, events=("end",)):
                if el.tag != "DescriptorRecord":
                    continue
                terms = [_text(t, "String") for t in el.iterfind("ConceptList/Concept/TermList/Term")
                         if t.get("IsPermutedTermYN", "N") != "Y"]
                records.append({
                    "ui": _text(el, "DescriptorUI"), "name": _text(el, "DescriptorName/String"), "terms": terms,
                    "trees": [t.text.strip() for t in el.iterfind("TreeNumberList/TreeNumber") if t.text],
                    "actions": [_text(a, "DescriptorReferredTo/DescriptorUI")
                                for a in el.iterfind("PharmacologicalActionList/PharmacologicalAction")],
                    "related": [_text(a, "DescriptorReferredTo/DescriptorUI")
                                for a in el.iterfind("SeeRelatedList/SeeRelatedDescriptor")],
                })
                el.clear()
    except ET.ParseError as e:
        raise ValueError(f"{path}: not well-formed MeSH XML ({e})") from None
    if not records:
        raise ValueError(f"{path}: no <DescriptorRecord> elements; expected the MeSH desc20XX.xml layout")
    for i, r in enumerate(records):
        if not r["ui"] or not r["name"]:
            raise ValueError(f"{path}: DescriptorRecord #{i + 1} lacks a DescriptorUI or DescriptorName/String")
    return records


def default_mesh_file() -> Path:
    """``$RAG_LAB_DATA_MESH``, else the newest ``desc*.xml`` (or ``.xml.gz``) in ``<data cache>/mesh``."""
    from .cache import dataset_dir, download_hint

    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    folder = dataset_dir("mesh")
    found = sorted(folder.glob("desc*.xml")) + sorted(folder.glob("desc*.xml.gz")) if folder.is_dir() else []
    if not found:
        raise FileNotFoundError(f"no MeSH descriptor file given and none in {folder}. {download_hint('mesh')}; or "
                                "download desc20XX.xml from "
                                "https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/ and pass its path or "
                                f"set {ENV}")
    return max(found, key=lambda p: p.name)


def mesh_concepts(path: str | Path | None = None) -> list[dict]:
    """Every descriptor as a concept in the project's JSONL form (``id, name, synonyms,
    semantic_type, relations: [{type, target}]``), which ``rag_lab.datasets.vocabulary`` reads."""
    records = read_descriptor_records(Path(path) if path else default_mesh_file())
    known = {r["ui"] for r in records}
    by_tree = {t: r["ui"] for r in records for t in r["trees"]}
    concepts = []
    for r in records:
        relations: dict[tuple[str, str], None] = {}
        for t in r["trees"]:
            parent = by_tree.get(t.rsplit(".", 1)[0]) if "." in t else None
            if parent and parent != r["ui"]:
                relations[("part_of" if t.startswith("A") else "is_a", parent)] = None
        for ui in r["actions"]:
            if ui in known and ui != r["ui"]:
                relations[("is_a", ui)] = None
        for ui in r["related"]:
            if ui in known and ui != r["ui"]:
                relations[("associated_with", ui)] = None
        synonyms = [t for t in dict.fromkeys(r["terms"]) if t and t != r["name"]]
        stype = TREE_CATEGORIES.get(r["trees"][0][0], "") if r["trees"] else ""
        concepts.append({"id": r["ui"], "name": r["name"], "synonyms": synonyms, "semantic_type": stype,
                         "relations": [{"type": t, "target": u} for t, u in relations]})
    return concepts
