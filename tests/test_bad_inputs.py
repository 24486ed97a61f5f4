"""Every row of the bad-input table (tests/bad_inputs.py) tried, and docs/bad_inputs.md kept equal to
what the rows really print."""
from __future__ import annotations

import json
import tracemalloc

import pytest
from bad_inputs import CASES, DOC, document_text, observe, observe_all

from rag_lab.core.generic_form import read_dataset

RUNNABLE = [c for c in CASES if c.run is not None]


@pytest.mark.parametrize("case", RUNNABLE, ids=[c.id for c in RUNNABLE])
def test_each_bad_input_gets_its_message(case, tmp_path):
    seen = observe(case, tmp_path)
    last = seen.splitlines()[-1]
    if case.handling == "error":      # a raised error, or the command line's one line and exit code
        assert last.startswith(("DataFormatError: ", "ValueError: ", "CacheFileError: ", "exit 2, error: ")), seen
    else:
        assert not last.startswith(("DataFormatError", "ValueError", "KeyError", "TypeError")), seen
    missing = [part for part in case.expect if part not in seen]
    assert not missing, f"{case.id}: {missing} not in:\n{seen}"


def test_docs_table_is_the_observed_output():
    expected = document_text(observe_all())
    assert DOC.read_text(encoding="utf-8") == expected, \
        "docs/bad_inputs.md is stale: regenerate it with `PYTHONPATH=. python tests/bad_inputs.py --write`"


def test_every_issue_row_is_in_the_table():
    ids = {c.id for c in CASES}
    assert {"empty-documents", "empty-text", "whitespace-text", "duplicate-documents", "duplicate-questions",
            "gold-context-nowhere", "no-gold", "non-utf8-jsonl", "big-document", "jats-unclosed", "jats-no-body",
            "jats-untitled", "jats-deep", "section-outside-file", "k-over-chunks", "unknown-method",
            "unknown-dataset"} <= ids
    # issue 27: caches others can write, a planted pickle, permissions, full disks, secrets, a host override
    assert {"cache-others-can-write", "planted-pickle", "unwritable-download-folder", "unwritable-cache-file",
            "cache-disk-full", "download-disk-full", "ncbi-key-in-error", "base-url-override"} <= ids


# --- a 20 MB document: loads, and memory stays a small multiple of the file ----------------------

MB = 2 ** 20
BOUND = 2.5  # peak traced memory / file size: the longest line as bytes and as text, nothing more (2x)


def _peak_while_reading(folder) -> tuple[int, object]:
    tracemalloc.start()
    try:
        dataset = read_dataset(folder)
        return tracemalloc.get_traced_memory()[1], dataset
    finally:
        tracemalloc.stop()


def test_a_20_mb_document_loads_in_bounded_memory(tmp_path):
    sentence = "The basil is pounded with pine nuts, garlic and cheese. "
    text = (sentence * (20 * MB // len(sentence) + 1))[:20 * MB]
    jsonl, txt = tmp_path / "jsonl", tmp_path / "txt"
    jsonl.mkdir(), txt.mkdir()
    (jsonl / "documents.jsonl").write_text(json.dumps({"id": "big", "text": text, "sections": [
        {"id": "big-s1", "title": "All", "start": 0, "end": len(text)}]}) + "\n", encoding="utf-8")
    (txt / "big.txt").write_text("Pesto\n" + text.replace(". ", ".\n"), encoding="utf-8")
    del text
    for folder, name in ((jsonl, "documents.jsonl"), (txt, "big.txt")):
        size = (folder / name).stat().st_size
        peak, dataset = _peak_while_reading(folder)
        assert len(dataset.documents[0].text) >= 20 * MB
        assert peak < BOUND * size, f"{name}: peak {peak / MB:.0f} MB for a {size / MB:.0f} MB file"
        del dataset


def test_many_documents_are_read_one_line_at_a_time(tmp_path):
    """20 documents of 1 MB: the reader holds the parsed documents plus one line, not the whole file
    as text and again as a list of lines (worked out: parsed text ~= file size, one line 1/20 of it)."""
    body = "x" * MB
    (tmp_path / "documents.jsonl").write_text(
        "".join(json.dumps({"id": f"d{i}", "text": body}) + "\n" for i in range(20)), encoding="utf-8")
    size = (tmp_path / "documents.jsonl").stat().st_size
    peak, dataset = _peak_while_reading(tmp_path)
    assert len(dataset.documents) == 20
    assert peak < 1.5 * size, f"peak {peak / MB:.0f} MB for a {size / MB:.0f} MB file"
