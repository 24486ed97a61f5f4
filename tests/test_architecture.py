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
# Lowest first. The Retriever contract and evaluate() sit above reasoning because they resolve
# reasoner specs ("offline", "openai:...") into reasoners; everything else follows DESIGN.md.
LAYERS = [
    ("core", {"types", "io", "atomic", "chunking", "embedding", "index", "metrics", "figures", "plots", "runner",
              "grid", "answer_metrics", "configs", "provenance", "sqlite_cache", "metric_cache", "code_version", "progress", "report",
              "lab", "onnx_encoder"}),
    ("reasoning", {"reasoning"}),
    ("contract", {"retrievers", "evaluation", "langchain", "index_store"}),
    ("datasets", {"datasets"}),
    ("methods", {"methods"}),
    ("compare", {"compare", "explore", "explore_widget"}),
    ("cli", {"cli", "__main__", "presets"}),
]


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, (_, members) in enumerate(LAYERS):
        if top in members:
            return i
    raise AssertionError(f"module {module} belongs to no layer: add its top-level name to LAYERS")


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


def test_layers_import_only_downward():
    upward = []
    for path in source_files():
        module, _ = module_name(path)
        for target in imports_of(path):
            if target != "rag_lab" and layer_of(target) > layer_of(module):
                upward.append(f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                              f"({LAYERS[layer_of(target)][0]})")
    assert not upward, "\n".join(upward)


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


def test_no_loose_plot_or_report_modules_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name.startswith(("plots_", "report_")))
    assert not loose, f"paper-specific modules belong in their paper folder: {loose}"


@pytest.mark.parametrize("folder", PAPER_FOLDERS)
def test_every_paper_folder_has_the_same_roles(folder):
    missing = [role for role in PAPER_ROLES if not (PACKAGE / "methods" / folder / role).exists()]
    assert not missing, f"rag_lab/methods/{folder}/ lacks {missing}"
