"""TREC runs and qrels (rag_lab/evaluation/trec.py) on hand-made rankings whose right answers are worked
out below: the document run (a document at its first chunk), scores written so every tool re-sorts
them into our order (ties), the reader's order and its refusals, outside runs joined as methods, what
``write_trec`` writes, and the two "Done when" commands of issue 47 on italian_cuisine."""
from __future__ import annotations

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import P, R, RR, nDCG

from rag_lab.core.types import Chunk, Dataset, Document, Hit, Question, Retrieval
from rag_lab.evaluation.metrics import document_metrics
from rag_lab.evaluation.trec import (OutsideRun, TREC_DIR_ENV, decreasing_scores, document_ranking, join_outside_runs,
                                     load_outside_run, outside_rows, parse_run_option, qrels_text, read_run,
                                     run_tag, run_text, score_text, trec_order, trusted_scores, write_from_environment,
                                     write_trec)


def chunk(cid: str, doc: str, start: int = 0, end: int = 5) -> Chunk:
    return Chunk(cid, doc, "x" * (end - start), start, end)


def retrieval(*hits: tuple[str, str, float]) -> Retrieval:
    return Retrieval("q", [Hit(chunk(c, d), s) for c, d, s in hits])


def tiny() -> Dataset:
    docs = [Document(d, f"text of {d} " * 3) for d in ("a", "b", "g", "x")]
    qs = [Question("q1", "one?", gold_doc_ids=["g"]), Question("q2", "two?", gold_doc_ids=["a", "b"]),
          Question("q3", "three?", gold_doc_ids=["b"]), Question("q4", "no gold?")]
    return Dataset("tiny", docs, qs)


# ---- the document run -------------------------------------------------------------------------

def test_a_document_stands_at_its_first_chunk_with_that_chunks_score():
    r = retrieval(("d1#1", "d1", 0.9), ("d2#1", "d2", 0.8), ("d1#2", "d1", 0.7), ("d3#1", "d3", 0.6))
    assert document_ranking(r) == [("d1", 0.9), ("d2", 0.8), ("d3", 0.6)]


def test_chunk_ranks_and_document_ranks_differ_only_by_unit_as_worked_by_hand(tmp_path):
    """Chunks [x, x, g] for gold g: ours (chunk ranks) MRR 1/3, precision 1/3, nDCG 1/log2(4) = 0.5;
    the document run [x, g]: RR 1/2, P@3 1/3, nDCG 1/log2(3); recall 1 in both."""
    from rag_lab.evaluation.metrics import retrieval_metrics

    q = Question("q1", "?", gold_doc_ids=["g"])
    r = retrieval(("x#1", "x", 0.9), ("x#2", "x", 0.8), ("g#1", "g", 0.7))
    ours = {m: v for m, _, v in retrieval_metrics([h.chunk for h in r.hits], q, {}, [3])}
    assert ours == pytest.approx({"doc_mrr": 1 / 3, "doc_recall": 1.0, "doc_precision": 1 / 3, "doc_ndcg": 0.5})
    run, qrels = tmp_path / "r.run", tmp_path / "q.qrels"
    run.write_text(run_text({"q1": document_ranking(r)}, "t"))
    qrels.write_text(qrels_text({"q1": ["g"]}))
    trusted = trusted_scores(run, qrels, [3]).set_index("metric")["value"].to_dict()
    assert trusted == pytest.approx({"doc_mrr": 0.5, "doc_recall": 1.0, "doc_precision": 1 / 3,
                                     "doc_ndcg": 1 / math.log2(3)}, abs=1e-12)
    same_code = {m: v for m, _, v in document_metrics(["x", "g"], ["g"], [3])}
    assert same_code == pytest.approx(trusted, abs=1e-12)


# ---- ties ---------------------------------------------------------------------------------------

def test_written_scores_fall_strictly_in_our_order_at_single_precision():
    f32 = lambda x: float(np.float32(x))                                           # noqa: E731
    step = lambda x: float(np.nextafter(np.float32(x), np.float32(-np.inf)))       # noqa: E731
    assert decreasing_scores([0.5, 0.5, 0.75, 0.25]) == [0.5, step(0.5), step(step(0.5)), 0.25]
    # a near-tie our ranking ordered by its key (the later one scores a hair higher)
    assert decreasing_scores([0.800001, 0.800005]) == [f32(0.800001), step(0.800001)]
    # two scores distinct in double precision but one single-precision value: a tie for trec_eval
    assert decreasing_scores([1.0, 1.0 - 1e-12]) == [1.0, step(1.0)]
    assert decreasing_scores([float("nan"), 1.0]) == [0.0, step(0.0)]
    assert decreasing_scores([]) == []
    assert score_text(0.25) == "0.25" and score_text(step(1.0)) == "0.99999994" and score_text(-3e-7) == "-3e-07"


def test_tied_scores_are_read_back_in_our_order_by_every_tool(tmp_path):
    """Ours: a before b, both 1.0, a relevant. Written as they are, trec_eval (docno descending) puts b
    first and P@1 would be 0, while ir_measures' RR@1 (docno ascending) says 1: the tools disagree.
    Written by ``run_text`` both read a first."""
    qrels = [ir_measures.Qrel("q1", "a", 1)]
    raw = [ir_measures.ScoredDoc("q1", "a", 1.0), ir_measures.ScoredDoc("q1", "b", 1.0)]
    assert ir_measures.calc_aggregate([P @ 1], qrels, raw)[P @ 1] == 0.0          # trec_eval: b first
    assert ir_measures.calc_aggregate([RR @ 1], qrels, raw)[RR @ 1] == 1.0        # MS MARCO code: a first
    path = tmp_path / "r.run"
    path.write_text(run_text({"q1": [("a", 1.0), ("b", 1.0)]}, "t"))
    written = list(ir_measures.read_trec_run(str(path)))
    assert [d.doc_id for d in written] == ["a", "b"] and written[0].score == 1.0 and written[1].score < 1.0
    for measure in (P @ 1, RR @ 1, nDCG @ 1):
        assert ir_measures.calc_aggregate([measure], qrels, written)[measure] == 1.0, measure
    assert [d for d, _ in read_run(path)["q1"]] == ["a", "b"]


def test_an_outside_run_is_ordered_as_trec_eval_orders_it(tmp_path):
    """Score descending, ties by docno descending; the rank column is ignored."""
    assert trec_order([("a", 1.0), ("c", 2.0), ("b", 1.0)]) == [("c", 2.0), ("b", 1.0), ("a", 1.0)]
    path = tmp_path / "o.run"
    path.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 c 3 2.0 t\nq1 Q0 b 2 1.0 t extra columns ignored\n\n")
    assert read_run(path) == {"q1": [("c", 2.0), ("b", 1.0), ("a", 1.0)]}


# ---- writing and reading -----------------------------------------------------------------------

def test_run_and_qrels_lines_are_as_the_format_says():
    text = run_text({"q1": [("d2", 0.5), ("d1", 0.25)], "q2": []}, "naive@cade393423")
    assert text == "q1 Q0 d2 1 0.5 naive@cade393423\nq1 Q0 d1 2 0.25 naive@cade393423\n"
    assert qrels_text({"q1": ["d1", "d1", "d2"]}) == "q1 0 d1 1\nq1 0 d2 1\n"
    with pytest.raises(ValueError, match="docno must be one word"):
        run_text({"q1": [("a b", 1.0)]}, "t")
    with pytest.raises(ValueError, match="tag must be one word"):
        run_text({"q1": [("a", 1.0)]}, "my run")


def test_the_tag_names_the_method_and_its_config_hash():
    from rag_lab.methods import get_retriever

    naive = get_retriever("naive")
    assert run_tag("naive", naive) == f"naive@{naive.config.config_id}"
    assert run_tag("naive", get_retriever("naive", size=64)) != run_tag("naive", naive)


@pytest.mark.parametrize("text, message", [
    ("q1 Q0 a 1 1.0\n", r"r.run:1: a TREC run line has six columns .* got 5"),
    ("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 high t\n", r"r.run:2: the score \(5th column\) must be a number, got 'high'"),
    ("q1 Q0 a 1 nan t\n", r"r.run:1: the score \(5th column\) must be finite"),
    ("q1 Q0 a 1 1.0 t\nq1 Q0 a 2 0.5 t\n", r"r.run:2: document 'a' is listed twice for question 'q1'"),
    ("\n\n", r"r.run: the TREC run file holds no lines"),
])
def test_a_bad_run_file_is_refused_by_line(tmp_path, text, message):
    path = tmp_path / "r.run"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_run(path)


def test_a_missing_run_file_and_a_bad_option_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no TREC run file at"):
        read_run(tmp_path / "none.run")
    assert parse_run_option("mine = runs/a.run") == ("mine", tmp_path.__class__("runs/a.run"))
    for bad in ("runs/a.run", "=a.run", "mine="):
        with pytest.raises(ValueError, match="--run takes NAME=FILE"):
            parse_run_option(bad)


# ---- outside runs ------------------------------------------------------------------------------

def test_unknown_questions_and_documents_are_refused_with_counts_and_three_examples(tmp_path):
    data = tiny()
    path = tmp_path / "o.run"
    path.write_text("".join(f"z{i} Q0 a 1 1.0 t\n" for i in range(5)) + "q1 Q0 g 1 1.0 t\n")
    with pytest.raises(ValueError, match=r"--run o: 5 of the 6 question ids in .* are not questions of 'tiny', "
                                         r"e\.g\. 'z0', 'z1', 'z2'$"):
        load_outside_run("o", path, data)
    path.write_text("q1 Q0 n1 1 3.0 t\nq1 Q0 n2 2 2.0 t\nq2 Q0 n3 1 1.0 t\nq2 Q0 n4 2 0.5 t\nq3 Q0 b 1 1.0 t\n")
    with pytest.raises(ValueError, match=r"--run o: 4 docnos in .* are not documents of 'tiny', "
                                         r"e\.g\. 'n1', 'n2', 'n3'$"):
        load_outside_run("o", path, data)


def test_a_run_covering_some_questions_is_scored_on_those_and_says_how_many(tmp_path):
    """q1 (gold g): [x, g] -> MRR 1/2, recall 1, P@2 1/2, nDCG 1/log2(3); q3 (gold b): [b] -> all 1 at k 1;
    q2 is not ranked (no rows); q4 has no gold (not counted)."""
    data = tiny()
    path = tmp_path / "o.run"
    path.write_text("q1 Q0 x 1 2.0 t\nq1 Q0 g 2 1.0 t\nq3 Q0 b 1 5.0 t\nq4 Q0 a 1 1.0 t\n")
    run = load_outside_run("mine", path, data)
    assert (run.covered, run.questions) == (2, 3)
    assert "scored on the 2 of 3 questions it ranks" in run.describe() and "document-level metrics only" in run.describe()
    rows = outside_rows(run, data, [1, 2])
    got = {(q, m, k): v for q, m, k, v in zip(rows["question_id"], rows["metric"], rows["k"], rows["value"])}
    assert set(rows["question_id"]) == {"q1", "q3"}
    assert got[("q1", "doc_mrr", 1)] == 0 and got[("q1", "doc_mrr", 2)] == 0.5
    assert got[("q1", "doc_precision", 2)] == 0.5 and got[("q1", "doc_ndcg", 2)] == pytest.approx(1 / math.log2(3))
    assert got[("q3", "doc_recall", 1)] == 1.0 and got[("q3", "doc_precision", 2)] == 0.5
    assert set(rows["index_reasoner"]) == {"none"}
    from rag_lab.evaluation.harness import COLUMNS
    assert list(rows.columns[:5]) == COLUMNS


def test_questions_left_out_by_a_limit_are_dropped_not_refused(tmp_path):
    full = tiny()
    limited = Dataset("tiny", full.documents, full.questions[:1])
    path = tmp_path / "o.run"
    path.write_text("q1 Q0 g 1 1.0 t\nq3 Q0 b 1 1.0 t\n")
    with pytest.raises(ValueError, match="1 of the 2 question ids"):
        load_outside_run("o", path, limited)
    run = load_outside_run("o", path, limited, [q.id for q in full.questions])
    assert run.covered == 1 and run.dropped == ["q3"] and "1 of its questions are not in this evaluation" in run.describe()


def test_an_outside_run_joins_the_table_as_a_method(tmp_path):
    data = tiny()
    df = pd.DataFrame([("m", "q1", "doc_mrr", 1, 1.0, "none", "none")],
                      columns=["method", "question_id", "metric", "k", "value", "index_reasoner", "answer_reasoner"])
    df.attrs = {"methods": {"m": {"index_reasoner": "none"}}}
    run = OutsideRun("o", tmp_path / "o.run", {"q1": [("g", 1.0)]}, 3)
    joined = join_outside_runs(df, [run], data, [1])
    assert set(joined["method"]) == {"m", "o"} and joined.attrs["methods"]["o"]["level"] == "document"
    assert joined.attrs["methods"]["o"]["params"]["questions_ranked"] == 1
    from rag_lab.evaluation.flips import flip_counts
    from rag_lab.evaluation.uncertainty import summary_with_ci
    # m finds q1's gold at rank 1, o finds it too: one tie, no flip; the summary has o's row with its n
    assert flip_counts(joined, "o", "m", 1) == {"wins": 0, "losses": 0, "ties": 1, "n": 1}
    summary = summary_with_ci(joined)
    assert summary[(summary["method"] == "o") & (summary["metric"] == "doc_recall@1")]["n"].tolist() == [1]
    with pytest.raises(ValueError, match="--run names must differ"):
        join_outside_runs(df, [OutsideRun("m", tmp_path / "o.run", {}, 3)], data, [1])


# ---- write_trec and the runner's folder --------------------------------------------------------

class Fake:
    """A built retriever: its chunks and a config hash."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.config = type("C", (), {"config_id": "abc1234567"})()


def test_write_trec_writes_runs_qrels_and_passage_files(tmp_path):
    docs = [Document("a", "alpha beta gamma delta"), Document("b", "one two three four")]
    ca, cb = Chunk("a#0", "a", "alpha beta", 0, 10), Chunk("b#0", "b", "one two", 0, 7)
    data = Dataset("my set", docs, [Question("q1", "?", gold_doc_ids=["a"], gold_contexts=["alpha beta"])])
    by_q = {"m": {"q1": Retrieval("?", [Hit(cb, 0.5), Hit(ca, 0.5)])}}
    written = write_trec(tmp_path / "t", data, {"m": Fake([ca, cb])}, by_q)
    assert sorted(p.name for p in written) == ["my_set.m.passage.qrels", "my_set.m.passage.run", "my_set.m.run",
                                               "my_set.qrels"]
    assert (tmp_path / "t" / "my_set.qrels").read_text() == "q1 0 a 1\n"
    assert (tmp_path / "t" / "my_set.m.passage.qrels").read_text() == "q1 0 a#0 1\n"
    lines = (tmp_path / "t" / "my_set.m.run").read_text().splitlines()
    assert lines == ["q1 Q0 b 1 0.5 m@abc1234567", "q1 Q0 a 2 0.49999997 m@abc1234567"]
    assert not list((tmp_path / "t").glob("*.tmp*"))
    with pytest.raises(ValueError, match="m: no retrieval for 1 question"):
        write_trec(tmp_path / "u", data, {"m": Fake([ca])}, {"m": {}})


def test_evaluate_writes_its_rankings_where_the_runner_says(tmp_path, monkeypatch):
    from rag_lab.evaluation.harness import evaluate

    data = tiny()
    data = Dataset("tiny", data.documents, data.questions[:2])
    monkeypatch.setenv(TREC_DIR_ENV, str(tmp_path / "trec" / "00_nb"))
    evaluate(["bm25"], data, [1, 2], progress=False)
    assert sorted(p.name for p in (tmp_path / "trec" / "00_nb").iterdir()) == ["tiny.bm25.run", "tiny.qrels"]
    bad = Dataset("bad", [Document("a b", "text")], [Question("q1", "?", gold_doc_ids=["a b"])])
    assert write_from_environment(bad, {}, {}) == []          # "a b" cannot be a docno: warned, not raised
    monkeypatch.delenv(TREC_DIR_ENV)
    evaluate(["bm25"], Dataset("other", data.documents, data.questions), [1], progress=False)
    assert not (tmp_path / "trec" / "00_nb" / "other.qrels").exists()


def test_the_report_links_a_notebooks_trec_folder(tmp_path):
    from rag_lab.runs.report import _notebook_section

    entry = {"notebook": "00_quickstart", "status": "ok", "trec": ["trec/00_quickstart/a.qrels",
                                                                    "trec/00_quickstart/a.m.run"]}
    html = _notebook_section(entry, tmp_path, None, "")
    assert 'href="trec/00_quickstart/"' in html and "TREC runs and qrels (2 files)" in html


# ---- issue 47's "Done when" --------------------------------------------------------------------

@pytest.fixture(scope="module")
def written(tmp_path_factory):
    from rag_lab.cli import main

    folder = tmp_path_factory.mktemp("trec")
    assert main(["eval", "--data", "italian_cuisine", "--methods", "naive,bm25", "--k", "5", "--trec", str(folder),
                 "--out", str(folder / "ours.csv")]) == 0
    return folder


def test_eval_trec_writes_two_runs_and_the_qrels_that_ir_measures_scores_as_we_do(written):
    runs = sorted(p.name for p in written.glob("*.run") if ".passage." not in p.name)
    assert runs == ["italian_cuisine.bm25.run", "italian_cuisine.naive.run"]
    assert (written / "italian_cuisine.qrels").is_file()
    ours = pd.read_csv(written / "ours.csv")
    for method in ("naive", "bm25"):
        trusted = trusted_scores(written / f"italian_cuisine.{method}.run", written / "italian_cuisine.qrels", [5])
        trusted = trusted.set_index(["question_id", "metric"])["value"]
        mine = ours[(ours["method"] == method) & (ours["k"] == 5)].set_index(["question_id", "metric"])["value"]
        assert len(trusted.xs("doc_recall", level="metric")) == 20
        assert (mine.xs("doc_recall", level="metric") - trusted.xs("doc_recall", level="metric")).abs().max() <= 1e-9
        assert abs(mine.xs("doc_recall", level="metric").mean() - trusted.xs("doc_recall", level="metric").mean()) <= 1e-9
        # RR@5 equals doc_mrr@5 on every question but one of bm25's, whose top 5 chunks hold a
        # non-gold document twice above the first gold one (chunk rank 3, document rank 2): trec.py
        differs = (mine.xs("doc_mrr", level="metric") - trusted.xs("doc_mrr", level="metric")).abs() > 1e-9
        assert int(differs.sum()) == (1 if method == "bm25" else 0), differs[differs]


def test_an_outside_run_of_bm25s_file_joins_beside_naive_with_its_interval_and_paired_difference(written, capsys):
    from rag_lab.cli import main

    out = written / "outside.csv"
    assert main(["eval", "--data", "italian_cuisine", "--methods", "naive", "--k", "5", "--run",
                 f"outside={written / 'italian_cuisine.bm25.run'}", "--baseline", "naive",
                 "--family", "doc_recall@5,doc_mrr@5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "outside: outside TREC run" in printed and "scored on the 20 of 20 questions" in printed
    rows = pd.read_csv(out)
    summary = pd.read_csv(written / "outside.summary.csv").set_index(["method", "metric"])
    diffs = pd.read_csv(written / "outside.differences.csv").set_index(["method", "metric"])
    ours = pd.read_csv(written / "ours.csv")
    trusted = trusted_scores(written / "italian_cuisine.bm25.run", written / "italian_cuisine.qrels", [5])
    outside = rows[rows["method"] == "outside"].set_index(["question_id", "metric"])["value"]
    # the outside run's rows are bm25's document run as ir_measures scores it, every metric, every question
    assert (outside - trusted.set_index(["question_id", "metric"])["value"]).abs().max() <= 1e-9
    # and bm25's own doc_recall@5, question by question; hence the same paired difference against naive
    bm25 = ours[(ours["method"] == "bm25") & (ours["metric"] == "doc_recall")].set_index("question_id")["value"]
    naive = ours[(ours["method"] == "naive") & (ours["metric"] == "doc_recall")].set_index("question_id")["value"]
    assert (outside.xs("doc_recall", level="metric") - bm25).abs().max() <= 1e-9
    assert summary.loc[("outside", "doc_recall@5"), "mean"] == pytest.approx(bm25.mean(), abs=1e-9)
    assert not math.isnan(summary.loc[("outside", "doc_recall@5"), "ci_low"])
    assert diffs.loc[("outside", "doc_recall@5"), "diff"] == pytest.approx((bm25 - naive).mean(), abs=1e-9)
    assert diffs.loc[("outside", "doc_recall@5"), "n"] == 20
