"""rag_lab.datasets.upstream_files: the JSON and parquet readers the loaders share."""
import numpy as np
import pandas as pd
import pytest

from rag_lab.datasets.upstream_files import parquet_rows, plain, read_json


def test_read_json_takes_a_byte_order_mark_and_names_a_broken_file(tmp_path):
    good = tmp_path / "a.json"
    good.write_bytes(b'\xef\xbb\xbf{"x": [1, 2]}')
    assert read_json(good) == {"x": [1, 2]}
    bad = tmp_path / "b.json"
    bad.write_text('{"x":\n  [1, 2}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"b\.json: not valid JSON \(.* at line 2\)"):
        read_json(bad)


def test_plain_turns_nested_arrays_into_lists_and_leaves_scalars():
    value = {"a": np.array([np.array(["0a", "s"]), np.array(["0b", "t"])]), "b": "text", "c": 3}
    assert plain(value) == {"a": [["0a", "s"], ["0b", "t"]], "b": "text", "c": 3}
    assert plain((np.int64(2), None)) == [2, None]


def test_parquet_rows_are_dicts_of_plain_values(tmp_path):
    file = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["q1", "q2"], "documents": [["p1", "p2"], ["p3"]]}).to_parquet(file)
    assert parquet_rows(file) == [{"id": "q1", "documents": ["p1", "p2"]}, {"id": "q2", "documents": ["p3"]}]
