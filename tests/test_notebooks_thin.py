"""Notebooks narrate; rag_lab computes. A code cell with more than ``MAX_STATEMENTS`` statements of
logic (imports, the parameters cell and bare strings aside; a call spread over several lines counts
once) is logic that belongs in a rag_lab function with a unit test; a notebook that uses more than
``MAX_NAMES`` of the package's names (each attribute of an imported rag_lab module counts) leans on
too many small helpers (issue 56: a thin package behind thin notebooks)."""
from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
MAX_STATEMENTS = 12
MAX_NAMES = 25


def logic_statements(source: str) -> int:
    """Statements in a cell, nested ones included, other than imports and bare strings; IPython
    magics and shell lines are left out."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    return sum(1 for node in ast.walk(ast.parse(code))
               if isinstance(node, ast.stmt) and not isinstance(node, (ast.Import, ast.ImportFrom))
               and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)))


def code_of(path: Path) -> str:
    """A notebook's code cells as one module, IPython magics and shell lines left out."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    source = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def package_names(source: str) -> set[str]:
    """The rag_lab names a notebook uses: each imported function, class or constant, and each attribute
    read off an imported rag_lab module (``from rag_lab.x import y`` with ``y`` a module counts ``y.f``)."""
    tree = ast.parse(source)
    modules, names = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rag_lab"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if is_module(full):
                    modules[alias.asname or alias.name] = full
                else:
                    names.add(full)
        elif isinstance(node, ast.Import):
            modules.update({alias.asname or alias.name: alias.name for alias in node.names
                            if alias.name.startswith("rag_lab")})
    names |= {f"{modules[node.value.id]}.{node.attr}" for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules}
    return names


def test_package_names_counts_imported_names_and_module_attributes():
    source = ("from rag_lab.evaluation import findings\nfrom rag_lab.evaluation.findings import finding_sentences\n"
              "import rag_lab.core.plots as plots\nimport pandas as pd\n"
              "findings.inside_said(1)\nfindings.inside_said(2)\nplots.save(pd.DataFrame())\n")
    assert package_names(source) == {"rag_lab.evaluation.findings.inside_said",
                                     "rag_lab.evaluation.findings.finding_sentences", "rag_lab.core.plots.save"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_notebook_uses_more_than_max_names(path):
    used = package_names(code_of(path))
    assert len(used) <= MAX_NAMES, (f"{path.name} uses {len(used)} of rag_lab's names (limit {MAX_NAMES}): "
                                    f"{sorted(used)}; give the package one function where the notebook calls "
                                    "several that always go together")


def test_the_count_leaves_out_imports_and_counts_nested_statements():
    assert logic_statements("import a\nfrom b import c\n'''text'''\n%matplotlib inline\n") == 0
    assert logic_statements("x = f(\n  1,\n  2)\nfor i in x:\n    if i:\n        print(i)\n") == 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_holds_logic(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    long = [(i, n) for i, cell in enumerate(cells) if cell["cell_type"] == "code"
            and "parameters" not in cell.get("metadata", {}).get("tags", [])
            and (n := logic_statements("".join(cell["source"]))) > MAX_STATEMENTS]
    assert not long, (f"{path.name}: code cells {[i for i, _ in long]} hold {[n for _, n in long]} statements of "
                      f"logic (limit {MAX_STATEMENTS}); move it into a rag_lab function with a unit test")
