"""The files public data sets ship, read as they come: one JSON document (a byte-order mark allowed), or
the rows of a parquet file (a Hugging Face copy) as plain Python values. The loaders share these so a
broken file is named the same way whichever data set it belongs to."""
from __future__ import annotations

import json
from pathlib import Path


def read_json(file: Path):
    """The parsed JSON of ``file``; a file that is not JSON is a ValueError naming it, what is wrong and where."""
    try:
        return json.loads(Path(file).read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{file}: not valid JSON ({e.msg} at line {e.lineno})") from None


def plain(value):
    """Parquet gives nested numpy arrays; turn them into lists (and leave scalars alone)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def parquet_rows(file: Path) -> list[dict]:
    """The rows of a parquet file as dicts of plain values."""
    import pandas as pd

    return [{k: plain(v) for k, v in row.items()} for row in pd.read_parquet(file).to_dict(orient="records")]
