"""The house rules of rag_lab/, checked on the source: layers import only downward, no import
circles, no module over 400 lines, and the same file names for the same roles in every paper folder."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rag_lab"
MAX_LINES = 400
PAPER_FOLDERS = ("sketch", "unweaver", "ssg", "gralc")
PAPER_ROLES = ("method.py", "config.py", "paper.py", "plots.py")
# Lowest first; folders on one rank (methods and runs; compare and explore) do not import each other.
# Each folder's __init__ docstring states what it may import ("May import: ..."); the tests below hold
# the code to that sentence and the sentence to this order, so neither can rot.
LAYERS = [("caching",), ("core",), ("reasoning",), ("evaluation",), ("datasets",), ("methods", "runs"),
          ("compare", "explore"), ("cli",)]
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
ROOT_MODULES = {"__init__", "__main__"}   # the package's face and ``python -m rag_lab``; nothing else loose


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def folder_of(module: str) -> str:
    """The layer folder of ``rag_lab.<folder>...``; ``__main__`` counts as the command line."""
    top = module.split(".")[1] if "." in module else ""
    if top == "__main__":
        return "cli"
    assert top in RANK, f"module {module} is in no layer folder: move it into one (LAYERS lists them)"
    return top


def declared_imports(folder: str) -> set[str]:
    """The folders ``rag_lab/<folder>/__init__.py`` says it may import."""
    doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    lines = [line for line in doc.splitlines() if line.startswith("May import:")]
    assert len(lines) == 1, f"rag_lab/{folder}/__init__.py: its docstring needs one 'May import: ...' line"
    said = lines[0].removeprefix("May import:").strip().rstrip(".")
    return set() if said.startswith("nothing") else {name.strip() for name in said.split(",")}


def imports_of(path: Path) -> set[str]:
    """Every rag_lab module ``path`` imports, at module level or inside functions."""
    module, is_pkg = module_name(path)
    here = module.split(".") if is_pkg else module.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            if not base.startswith("rag_lab"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if _exists(candidate) else base)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("rag_lab")}
    return out


def _exists(module: str) -> bool:
    p = PACKAGE.parent / Path(*module.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def source_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def test_the_root_holds_only_the_package_face_and_layer_folders():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.stem not in ROOT_MODULES)
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert not loose, f"modules loose at the package root: {loose}; move each into its layer folder"
    assert sorted(RANK) == folders, f"layer folders {folders} differ from LAYERS {sorted(RANK)}"


@pytest.mark.parametrize("folder", sorted(RANK))
def test_each_folder_declares_only_lower_layers(folder):
    said = declared_imports(folder)
    assert said <= set(RANK), f"rag_lab/{folder}: 'May import' names unknown folders {sorted(said - set(RANK))}"
    higher = sorted(f for f in said if RANK[f] >= RANK[folder])
    assert not higher, f"rag_lab/{folder} may only import lower layers, but its docstring allows {higher}"


def test_layers_import_only_what_their_docstring_allows():
    breaches = []
    for path in source_files():
        module, _ = module_name(path)
        here = folder_of(module)
        allowed = declared_imports(here) | {here}
        for target in imports_of(path):
            if target != "rag_lab" and folder_of(target) not in allowed:
                breaches.append(f"{module} ({here}) imports {target} ({folder_of(target)}); "
                                f"rag_lab/{here} may import {sorted(allowed - {here})}")
    assert not breaches, "\n".join(breaches)


def test_no_import_circles():
    graph = nx.DiGraph()
    for path in source_files():
        module, is_pkg = module_name(path)
        if is_pkg:          # a package's __init__ re-exporting its modules is not a circle
            continue
        for target in imports_of(path):
            if target != module and not _exists_pkg(target):
                graph.add_edge(module, target)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c + [c[0]]) for c in cycles)


def _exists_pkg(module: str) -> bool:
    return (PACKAGE.parent / Path(*module.split(".")) / "__init__.py").exists()


@pytest.mark.parametrize("path", source_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_the_line_limit(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {n} lines; split it by role (limit {MAX_LINES})"


@pytest.mark.parametrize("folder", PAPER_FOLDERS)
def test_every_paper_folder_has_the_same_roles(folder):
    missing = [role for role in PAPER_ROLES if not (PACKAGE / "methods" / folder / role).exists()]
    assert not missing, f"rag_lab/methods/{folder}/ lacks {missing}"
