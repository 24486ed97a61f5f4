"""datasets.data_source: every notebook's data parameter read the same way (a registered name, a generic-form
folder, a loader with arguments), anything else refused by name, never dropped."""
from pathlib import Path

import pytest

from rag_lab.core.generic_form import write_dataset
from rag_lab.datasets import DataSource, data_source, load_dataset

FIX = Path(__file__).parent / "fixtures"


def test_a_registered_name_a_folder_and_a_loader_with_arguments(tmp_path):
    assert data_source("italian_cuisine") == DataSource("italian_cuisine", "italian_cuisine")
    shipped = load_dataset("italian_cuisine")
    write_dataset(shipped, tmp_path / "my_set")
    source = data_source(str(tmp_path / "my_set"))
    assert source.label == "my_set" and source.key == str((tmp_path / "my_set").resolve())
    mine = source.load(limit=2)
    assert len(mine.questions) == 2 and [d.text for d in mine.documents] == [d.text for d in shipped.documents]
    loader = data_source({"loader": "covidqa", "path": str(FIX / "covidqa")})
    assert (loader.label, loader.arguments) == ("covidqa", {"path": str(FIX / "covidqa")})
    assert [d.id for d in loader.load({"max_documents": 1}).documents] == ["9001"]    # options over the value's own
    assert data_source(loader) is loader


@pytest.mark.parametrize("value, says", [
    ("nowhere", r"data set 'nowhere': not a registered name and no folder at .*nowhere"),
    (42, r"data set 42: expected a registered data set name, a folder in the generic form"),
    ("", r"data set '': expected"),
    ({"loader": "nope"}, r"'loader' must name a registered data set \(.*covidqa"),
    ({"path": "x"}, r"'loader' must name a registered data set"),
])
def test_anything_else_is_refused_by_name(value, says):
    with pytest.raises(ValueError, match=says):
        data_source(value)


def test_a_folder_without_questions_is_refused(tmp_path):
    write_dataset(load_dataset("italian_cuisine"), tmp_path / "docs_only")
    (tmp_path / "docs_only" / "questions.jsonl").unlink()
    with pytest.raises(ValueError, match=r"docs_only holds no documents.jsonl or \*.txt and questions.jsonl"):
        data_source(str(tmp_path / "docs_only"))
