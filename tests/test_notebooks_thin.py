"""Notebooks narrate; rag_lab computes. A code cell with more than ``MAX_STATEMENTS`` statements of
logic (imports, the parameters cell and bare strings aside; a call spread over several lines counts
once) is logic that belongs in a rag_lab function with a unit test."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
MAX_STATEMENTS = 12


def logic_statements(source: str) -> int:
    """Statements in a cell, nested ones included, other than imports and bare strings; IPython
    magics and shell lines are left out."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    return sum(1 for node in ast.walk(ast.parse(code))
               if isinstance(node, ast.stmt) and not isinstance(node, (ast.Import, ast.ImportFrom))
               and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)))


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
