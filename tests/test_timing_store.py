"""rag_lab/compare/timing_store.py: a measurement is reused only for the same name, parameters, code and machine,
always labelled with when and where it was measured; switched off by reuse=False or RAG_LAB_REUSE=0; an entry
that fails its signature is measured again, never unpickled."""
import json
import logging

import pytest

from rag_lab.compare import timing_store as ts


@pytest.fixture
def reuse_on(monkeypatch):
    monkeypatch.setenv("RAG_LAB_REUSE", "1")


def counting():
    calls = []

    def measure():
        calls.append(1)
        return {"seconds": 1.5 * len(calls)}
    return measure, calls


def test_a_second_run_reuses_and_says_when_and_where(tmp_path, reuse_on):
    measure, calls = counting()
    first = ts.measured_or_reused("costs", {"repeats": 2}, measure, cache_dir=tmp_path)
    again = ts.measured_or_reused("costs", {"repeats": 2}, measure, cache_dir=tmp_path)
    assert calls == [1] and first.value == again.value == {"seconds": 1.5}
    assert not first.reused and again.reused and again.when == first.when and again.where == ts.machine()
    assert "by this run" in first.label() and first.when in first.label()
    label = again.label()
    assert f"measured {first.when} on {ts.machine()['host']}" in label and "reused here" in label
    assert f"{ts.machine()['cores']} cores" in label
    # other parameters, another name: measured again
    assert ts.measured_or_reused("costs", {"repeats": 3}, measure, cache_dir=tmp_path).value == {"seconds": 3.0}
    assert ts.measured_or_reused("growth", {"repeats": 2}, measure, cache_dir=tmp_path).value == {"seconds": 4.5}
    assert len(calls) == 3


def test_another_machine_or_code_is_another_entry(tmp_path, reuse_on, monkeypatch):
    key = ts.entry_key("costs", {"r": 1})
    monkeypatch.setattr(ts, "machine", lambda: {"host": "elsewhere", "processor": "x", "cores": 64, "system": "Linux"})
    assert ts.entry_key("costs", {"r": 1}) != key
    monkeypatch.undo()
    monkeypatch.setattr(ts, "code_fingerprint", lambda: "0" * 16)
    assert ts.entry_key("costs", {"r": 1}) != key


def test_measure_again_when_told(tmp_path, reuse_on, monkeypatch):
    measure, calls = counting()
    ts.measured_or_reused("costs", {}, measure, cache_dir=tmp_path)
    fresh = ts.measured_or_reused("costs", {}, measure, reuse=False, cache_dir=tmp_path)
    assert len(calls) == 2 and not fresh.reused and fresh.value == {"seconds": 3.0}
    assert ts.measured_or_reused("costs", {}, measure, cache_dir=tmp_path).value == {"seconds": 3.0}   # the newer kept
    monkeypatch.setenv("RAG_LAB_REUSE", "0")
    assert not ts.measured_or_reused("costs", {}, measure, cache_dir=tmp_path).reused and len(calls) == 3


def test_an_entry_that_fails_its_signature_is_measured_again(tmp_path, reuse_on, caplog, monkeypatch):
    measure, calls = counting()
    ts.measured_or_reused("costs", {}, measure, cache_dir=tmp_path)
    (path,) = (tmp_path / "timings").glob("*.bin")
    head, _, payload = path.read_bytes().partition(b"\n")
    header = json.loads(head)
    header["when"] = "1999-01-01 00:00 UTC"                   # a changed header: the signature no longer fits
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    unpickled = []
    monkeypatch.setattr(ts.pickle, "loads", lambda blob: unpickled.append(blob))
    with caplog.at_level(logging.WARNING):
        again = ts.measured_or_reused("costs", {}, measure, cache_dir=tmp_path)
    assert not again.reused and len(calls) == 2 and unpickled == [] and "signature check failed" in caplog.text
    path.write_bytes(b"not json\n" + payload)
    assert not ts.measured_or_reused("costs", {}, measure, cache_dir=tmp_path).reused and len(calls) == 3


def test_bad_name_is_refused(tmp_path):
    with pytest.raises(ValueError, match="non-empty name"):
        ts.measured_or_reused("", {}, dict, cache_dir=tmp_path)


def test_the_notebook_parameter_is_reuse_or_measure():
    assert ts.reuse_choice("reuse") is True and ts.reuse_choice("measure") is False
    with pytest.raises(ValueError, match=r"timings must be one of \('reuse', 'measure'\).*got 'always'"):
        ts.reuse_choice("always")


def test_other_documents_under_the_same_name_are_measured_again(tmp_path, reuse_on):
    from rag_lab.core.types import Document

    measure, calls = counting()
    docs = [Document("a", "one text")]
    ts.measured_or_reused("costs", {"dataset": "x"}, measure, cache_dir=tmp_path, documents=docs)
    assert ts.measured_or_reused("costs", {"dataset": "x"}, measure, cache_dir=tmp_path, documents=docs).reused
    changed = [Document("a", "another text")]
    assert not ts.measured_or_reused("costs", {"dataset": "x"}, measure, cache_dir=tmp_path, documents=changed).reused
    assert len(calls) == 2
