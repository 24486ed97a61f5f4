"""The shipped Fenwold gazetteer (data/fenwold_gazetteer): its files are what build.py writes, every gold
context is a verbatim sentence of its gold documents inside its gold sections, the question kinds are
those the README counts, and ``load_dataset(..., documents=N)`` keeps only questions the first N answer."""
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rag_lab.core.types import Dataset, Document, Question
from rag_lab.datasets import load_dataset

FOLDER = Path(__file__).resolve().parents[1] / "data" / "fenwold_gazetteer"
KINDS = {"single", "multi_passage", "multi_hop", "entity", "theme_group", "sequential_group", "section"}


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_regenerating_gives_the_committed_files(tmp_path):
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, str(FOLDER / "build.py"), str(tmp_path)], check=True, cwd=root,
                   env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    for name in ("documents.jsonl", "questions.jsonl"):
        assert (tmp_path / name).read_bytes() == (FOLDER / name).read_bytes(), f"{name} differs from build.py's output"


def test_gold_is_verbatim_in_its_documents_and_sections():
    docs = {d["id"]: d for d in rows(FOLDER / "documents.jsonl")}
    sections = {s["id"]: (d["id"], s) for d in docs.values() for s in d["sections"]}
    for q in rows(FOLDER / "questions.jsonl"):
        assert q["gold_doc_ids"] and q["gold_contexts"] and q["gold_section_ids"] and q["answer"], q["id"]
        for ctx in q["gold_contexts"]:
            homes = [g for g in q["gold_doc_ids"] if ctx in docs[g]["text"]]
            assert homes, f"{q['id']}: {ctx!r} is in none of its gold documents"
            # the context lies inside one of the question's gold sections of that document
            assert any(sections[s][0] in homes and docs[sections[s][0]]["text"].find(ctx) >= sections[s][1]["start"]
                       and docs[sections[s][0]]["text"].find(ctx) + len(ctx) <= sections[s][1]["end"]
                       for s in q["gold_section_ids"]), f"{q['id']}: {ctx!r} lies in none of its gold sections"
        assert set(q["gold_section_ids"]) <= set(sections), q["id"]
        assert {sections[s][0] for s in q["gold_section_ids"]} == set(q["gold_doc_ids"]), q["id"]


def test_documents_have_headed_sections_that_tile_the_text():
    docs = rows(FOLDER / "documents.jsonl")
    assert len(docs) == 44 and len({d["id"] for d in docs}) == 44
    for d in docs:
        assert d["text"].startswith(d["title"] + "\n\n") and 4 <= len(d["sections"]) <= 6, d["id"]
        for s in d["sections"]:
            assert d["text"][s["start"]:s["end"]].startswith(s["title"] + "\n\n"), s["id"]
            assert s["id"].startswith(d["id"] + ":s")


def test_kind_counts_match_the_readme():
    questions = rows(FOLDER / "questions.jsonl")
    counts = collections.Counter(q["meta"]["kind"] for q in questions)
    assert set(counts) == KINDS and len(questions) >= 240 and min(counts.values()) >= 30
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    for kind, n in counts.items():
        assert re.search(rf"\| `{kind}` \| {n} \|", readme), f"README does not count {n} {kind} questions"
    assert f"{len(questions)} questions" in readme
    for q in questions:   # the SSG groups are stored as the SSG questions store them
        if q["meta"]["kind"] in ("theme_group", "sequential_group"):
            group = q["meta"]["group"]
            assert group["strategy"] == q["meta"]["strategy"] in ("theme_based", "sequential_multi_hop")
            assert len(group["sentence_ids"]) == len(q["gold_contexts"]) and group["path"]
            assert {s.split("#")[0] for s in group["sentence_ids"]} == set(q["gold_doc_ids"])


def test_group_sentence_ids_name_the_gold_sentences():
    from rag_lab.core.chunking import sentence_spans

    docs = {d["id"]: d for d in rows(FOLDER / "documents.jsonl")}
    for q in rows(FOLDER / "questions.jsonl"):
        for sid, ctx in zip(q["meta"].get("group", {}).get("sentence_ids", []), q["gold_contexts"]):
            doc, j = sid.split("#s")
            s, e = sentence_spans(docs[doc]["text"])[int(j)]
            assert docs[doc]["text"][s:e] == ctx, sid


def test_first_documents_keeps_only_questions_they_answer():
    a, b, c = (Document(x, f"text {x}.") for x in "abc")
    qs = [Question("1", "?", gold_doc_ids=["a"]), Question("2", "?", gold_doc_ids=["a", "c"]),
          Question("3", "?", gold_doc_ids=["b"]), Question("4", "?")]
    sub = Dataset("d", [a, b, c], qs).first_documents(2)
    assert [d.id for d in sub.documents] == ["a", "b"] and [q.id for q in sub.questions] == ["1", "3"]
    with pytest.raises(ValueError, match="documents: expected a positive whole number"):
        Dataset("d", [a], qs).first_documents(0)


def test_load_dataset_documents_option():
    small = load_dataset("fenwold_gazetteer", documents=12)
    full = load_dataset("fenwold_gazetteer")
    assert len(small.documents) == 12 and len(full.documents) == 44 and len(full.questions) == len(rows(FOLDER / "questions.jsonl"))
    kept = {d.id for d in small.documents}
    assert small.questions and all(set(q.gold_doc_ids) <= kept for q in small.questions)
    assert len(small.questions) == sum(set(q.gold_doc_ids) <= kept for q in full.questions)
    with pytest.raises(TypeError, match="takes only documents=N"):
        load_dataset("fenwold_gazetteer", articles=2)
