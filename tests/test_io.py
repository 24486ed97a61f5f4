import json

import pytest

from rag_lab.datasets import load_dataset
from rag_lab.core.generic_form import DataFormatError, read_dataset, write_dataset
from rag_lab.core.types import Dataset, Document, Question, Section


def write_lines(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")


def make_folder(tmp_path, docs, questions=None):
    write_lines(tmp_path / "documents.jsonl", docs)
    if questions is not None:
        write_lines(tmp_path / "questions.jsonl", questions)
    return tmp_path


def test_round_trip(tmp_path):
    ds = Dataset("t", [Document("a", "Hello there. Second part.", "A", [Section("a-s1", "Intro", "section", 0, 12)],
                                {"year": 2020})],
                 [Question("q1", "Hello?", "there", ["a"], ["Hello there."], ["a-s1"])])
    write_dataset(ds, tmp_path)
    back = read_dataset(tmp_path)
    assert back.documents == ds.documents and back.questions == ds.questions


@pytest.mark.parametrize("docs, message", [
    (['{"id": "a", "text": "x"', ], "documents.jsonl:1: invalid JSON"),
    ([{"id": "a"}], "documents.jsonl:1: missing field 'text'"),
    ([{"id": "a", "text": "   "}], "document 'a' has no text"),
    ([{"id": "a", "text": 5}], "field 'text' must be str, got int"),
    ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], "documents.jsonl:2: duplicate document id 'a' (first on line 1)"),
    ([{"id": "a", "text": "xy", "sections": [{"id": "s", "title": "", "start": 0, "end": 9}]}], "end <= len(text)=2"),
    ([{"id": "a", "text": "xy", "sections": [{"id": "s", "kind": "chapter", "start": 0, "end": 1}]}], "kind' must be one of"),
    ([], "no documents"),
])
def test_document_errors_name_line_and_field(tmp_path, docs, message):
    make_folder(tmp_path, docs)
    with pytest.raises(DataFormatError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        read_dataset(tmp_path)


def test_question_errors(tmp_path):
    make_folder(tmp_path, [{"id": "a", "text": "x"}], [{"id": "q", "question": "?", "gold_doc_ids": ["zz"]}])
    with pytest.raises(DataFormatError, match=r"questions.jsonl:1: question 'q' names gold_doc_ids \['zz'\]"):
        read_dataset(tmp_path)
    make_folder(tmp_path, [{"id": "a", "text": "x"}], [{"id": "q", "question": "?", "gold_contexts": "x"}])
    with pytest.raises(DataFormatError, match="field 'gold_contexts' must be list"):
        read_dataset(tmp_path)


def test_non_utf8_file_is_named(tmp_path):
    (tmp_path / "documents.jsonl").write_bytes(b'{"id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(DataFormatError, match="not UTF-8"):
        read_dataset(tmp_path)


def test_text_folder_and_registry(tmp_path):
    (tmp_path / "one.txt").write_text("Title One\n\nBody text.", encoding="utf-8")
    ds = load_dataset(tmp_path)
    assert [d.id for d in ds.documents] == ["one"] and ds.documents[0].title == "Title One"
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="empty.txt: document 'empty' has no text"):
        load_dataset(tmp_path)
    with pytest.raises(ValueError, match="unknown dataset 'no-such-thing'"):
        load_dataset("no-such-thing")


def test_shipped_italian_cuisine_gold_contexts_are_exact():
    ds = load_dataset("italian_cuisine")
    assert len(ds.documents) == 3 and len(ds.questions) >= 12
    for q in ds.questions:
        assert q.answer and q.gold_doc_ids and len(q.gold_contexts) >= 2
        for ctx in q.gold_contexts:
            assert any(ctx in ds.document(d).text for d in q.gold_doc_ids), (q.id, ctx)
