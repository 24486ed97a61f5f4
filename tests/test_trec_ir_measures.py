"""Our document metrics against ir_measures (trec_eval's code) on the TREC files we write, for every
shipped data set and every registered method at the quality floor's small sizes (tests/quality_floor.py):

- on one ranking of documents (the run file) our metric code and ir_measures agree to 1e-9 on RR@k,
  R@k, P@k and nDCG@k, question by question;
- our reported doc_recall@k equals R@k on every question; doc_mrr@k, doc_precision@k and doc_ndcg@k
  equal RR@k, P@k and nDCG@k on every question whose top k chunks hold no document twice, and where
  they differ the top k does repeat a document (the one difference is the unit: chunks vs documents,
  rag_lab/evaluation/trec.py says why we keep chunks);
- where questions have gold passages, ctx_mrr@k and ctx_precision@k equal RR@k and P@k on the passage
  run and the method's passage qrels.
Each k is scored on the method's own ranking for k (a run file per k here), as our metrics are.
"""
from __future__ import annotations

import pytest

from conftest import INDEXES
from quality_floor import CASES, reusing
from rag_lab.evaluation.metrics import document_metrics
from rag_lab.evaluation.trec import (PASSAGE_METRICS, chunk_ranking, document_qrels, document_ranking, passage_qrels,
                                     qrels_text, run_text, trusted_scores)

pytestmark = [pytest.mark.heavy, pytest.mark.xdist_group(INDEXES),
              pytest.mark.timeout(900)]   # a hang guard, not a speed test: the first test builds every index
# (21 methods on 4 data sets, in the session store)
KS = (1, 3, 5)
TOL = 1e-9


def _cases():
    from rag_lab.evaluation.retrievers import available_methods
    from rag_lab.methods import get_retriever  # noqa: F401  (registers the lab's methods)

    methods = [m for m in available_methods()]
    return [(data, m) for data in CASES for m in methods]


@pytest.fixture(scope="module")
def evaluated():
    """data set -> (dataset, results table, retrievals k -> method -> question -> Retrieval, retrievers),
    each data set evaluated when its first test asks (so its builds fall in that test's setup). The indexes
    come from the session store where another test of the group may have built them (``reusing``): what
    is tested here is scoring, not building."""
    from rag_lab.datasets import load_dataset
    from rag_lab.evaluation.harness import evaluate
    from rag_lab.evaluation.retrievers import available_methods
    from rag_lab.methods import get_retriever

    class Evaluated(dict):
        def __missing__(self, name):
            case = CASES[name]
            with reusing():
                data = load_dataset(name, **case["load"])
                retrievers = {m: get_retriever(m, **case["methods"].get(m, {})) for m in available_methods()}
                keep = {}
                df = evaluate(retrievers, data, KS, progress=False, keep=keep)
            self[name] = (data, df, keep["retrievals"], keep["retrievers"])
            return self[name]

    return Evaluated()


def _ours(df, method, k):
    d = df[(df["method"] == method) & (df["k"] == k)]
    return {(q, m): v for q, m, v in zip(d["question_id"], d["metric"], d["value"])}


@pytest.mark.parametrize("data_name, method", _cases())
def test_document_metrics_equal_ir_measures(data_name, method, evaluated, tmp_path):
    data, df, retrievals, _ = evaluated[data_name]
    qrels = tmp_path / "doc.qrels"
    qrels.write_text(qrels_text(document_qrels(data)))
    gold = {q.id: q.gold_doc_ids for q in data.questions if q.gold_doc_ids}
    assert gold, f"{data_name} has no question with gold documents"
    for k in KS:
        by_q = retrievals[k][method]
        rankings = {q: document_ranking(by_q[q]) for q in gold}
        run = tmp_path / f"{method}.{k}.run"
        run.write_text(run_text(rankings, f"{method}@test"))
        trusted = {(r.question_id, r.metric): r.value for r in trusted_scores(run, qrels, [k]).itertuples()}
        ours = _ours(df, method, k)
        for qid, gold_docs in gold.items():
            docs = [d for d, _ in rankings[qid]]
            if not docs:                       # trec_eval scores no question the run does not rank; ours is 0
                assert all(ours[(qid, m)] == 0 for m in ("doc_mrr", "doc_recall", "doc_precision", "doc_ndcg"))
                continue
            same_code = {m: v for m, _, v in document_metrics(docs, gold_docs, [k])}
            chunk_docs = [h.chunk.doc_id for h in by_q[qid].hits]
            repeats = len(set(chunk_docs)) < len(chunk_docs)
            for metric in ("doc_mrr", "doc_recall", "doc_precision", "doc_ndcg"):
                where = f"{data_name} {method} {qid} {metric}@{k}"
                assert abs(same_code[metric] - trusted[(qid, metric)]) <= TOL, where
                differs = abs(ours[(qid, metric)] - trusted[(qid, metric)]) > TOL
                if metric == "doc_recall" or not repeats:
                    assert not differs, f"{where}: ours {ours[(qid, metric)]}, ir_measures {trusted[(qid, metric)]}"


@pytest.mark.parametrize("data_name, method", _cases())
def test_passage_metrics_equal_ir_measures_where_they_mean_the_same(data_name, method, evaluated, tmp_path):
    data, df, retrievals, retrievers = evaluated[data_name]
    judged = passage_qrels(retrievers[method], data)
    if not any(q.gold_contexts for q in data.questions):
        pytest.skip(f"{data_name} has no gold passages")
    qrels = tmp_path / "passage.qrels"
    qrels.write_text(qrels_text(judged))
    for k in KS:
        by_q = retrievals[k][method]
        run = tmp_path / f"{method}.{k}.passage.run"
        run.write_text(run_text({q.id: chunk_ranking(by_q[q.id]) for q in data.questions if q.gold_contexts},
                                f"{method}@test"))
        trusted = {(r.question_id, r.metric): r.value
                   for r in trusted_scores(run, qrels, [k], PASSAGE_METRICS).itertuples()}
        ours = _ours(df, method, k)
        for q in data.questions:
            if not q.gold_contexts:
                continue
            for metric in PASSAGE_METRICS:
                if q.id in judged and by_q[q.id].hits:
                    assert abs(ours[(q.id, metric)] - trusted[(q.id, metric)]) <= TOL, (data_name, method, q.id, metric, k)
                else:                          # no chunk of the method matches: trec_eval skips it, ours is 0
                    assert ours[(q.id, metric)] == 0, (data_name, method, q.id, metric, k)
