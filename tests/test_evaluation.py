"""evaluate(): per-k queries, the contexts handed to the answering model, ID-based ragas metrics on
shipped data, provenance (attrs, CSV columns, sidecar JSON) and the command line that reuses it."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from rag_lab.evaluation import harness
from rag_lab.cli import main
from rag_lab.datasets import load_dataset
from rag_lab.evaluation.harness import answer_rows, combine, evaluate, run_queries
from rag_lab.evaluation.provenance import caption_reasoners, method_params, reasoners_label
from rag_lab.reasoning import Reasoner
from rag_lab.evaluation.retrievers import Method
from rag_lab.core.types import Chunk, Dataset, Document, Hit, Question, Retrieval


class Scripted(Method):
    """Returns a hand-written ranking of document ids for each k; records the k of every query."""

    def __init__(self, rankings: dict[int, list[str]], nested: bool = False):
        super().__init__()
        self.rankings, self.nested_ranking, self.calls = rankings, nested, []

    def build(self, documents):
        self.chunks = [Chunk(d.id, d.id, d.text, 0, len(d.text)) for d in documents]
        return self

    def retrieve(self, query, k):
        self.calls.append(k)
        by_id = {c.id: c for c in self.chunks}
        return Retrieval(query, [Hit(by_id[i], 1.0) for i in self.rankings[k][:k]])


def abc_dataset():
    docs = [Document(x, f"Text of {x}.") for x in "ABC"]
    return Dataset("abc", docs, [Question("q", "which?", gold_doc_ids=["B"])])


def value(df, method, metric, k):
    return df[(df.method == method) & (df.metric == metric) & (df.k == k)]["value"].item()


def test_each_k_is_scored_on_the_methods_own_list_unless_it_declares_nesting():
    # not nested: for k=1 the method returns [B], for k=3 [A, C, B] (B not first)
    own = Scripted({1: ["B"], 3: ["A", "C", "B"]})
    # declared nested: queried once at k=3, and k=1 is scored on the prefix [A]
    nested = Scripted({1: ["B"], 3: ["A", "C", "B"]}, nested=True)
    own.name, nested.name = "own", "nested"
    df = evaluate([own, nested], abc_dataset(), ks=(1, 3), progress=False)
    assert own.calls == [1, 3] and nested.calls == [3]
    assert value(df, "own", "doc_mrr", 1) == 1.0           # its own top 1 is the gold B
    assert value(df, "nested", "doc_mrr", 1) == 0.0        # the prefix of its top 3 is A
    assert value(df, "own", "doc_mrr", 3) == pytest.approx(1 / 3) == value(df, "nested", "doc_mrr", 3)
    assert df.attrs["methods"]["own"]["nested_ranking"] is False


def test_answers_come_from_the_retrieval_at_answer_k_only():
    r = Scripted({3: ["A", "C", "B"]})
    r.name = "r"
    data = abc_dataset()
    harness.build(r, data.documents)
    with pytest.raises(ValueError, match="more than answer_k=1"):
        answer_rows(run_queries({"r": r}, data, 3, progress=False), data, Recorder(), answer_k=1, progress=False)


class Recorder(Reasoner):
    """Answers with the last line of the first context and remembers every context list it was handed."""

    name = "recorder"

    def __init__(self):
        super().__init__()
        self.seen: dict[str, list[str]] = {}

    def answer(self, question, contexts):
        self.seen[question] = list(contexts)
        return contexts[0].splitlines()[-1] if contexts else ""

    def entities(self, text):
        raise NotImplementedError

    def triples(self, text):
        raise NotImplementedError

    def query_entities(self, query):
        raise NotImplementedError

    def themes(self, text, n=5):
        raise NotImplementedError

    def choose_next(self, query, gathered, candidates, similarities, candidate_ids=None):
        raise NotImplementedError

    def summarize(self, texts, max_words=100):
        raise NotImplementedError


@pytest.fixture(scope="module")
def cuisine():
    return load_dataset("italian_cuisine")


def test_sketch_and_kg_answers_carry_graph_facts(cuisine, monkeypatch):
    monkeypatch.delenv("RAG_LAB_LLM", raising=False)            # the methods index with the offline reasoner
    from rag_lab.methods import get_retriever

    methods = {n: get_retriever(n) for n in ("naive", "sketch", "kg")}
    recorders = {}
    for name, method in methods.items():
        recorders[name] = Recorder()
        df = evaluate({name: method}, cuisine, (3,), reasoner=recorders[name], answer_k=3, progress=False)
        assert df.attrs["methods"][name]["answer_reasoner"] == "recorder"
    assert df.attrs["methods"]["kg"]["index_reasoner"] == "offline"
    with_facts = {"sketch": 0, "kg": 0}
    for name in with_facts:
        for q in cuisine.questions:
            ret = harness.retrieve(methods[name], q.question, 3)
            seen = recorders[name].seen[q.question]
            assert methods[name].merged_context(ret) == "\n\n".join(seen)
            if ret.trace["facts"]:
                with_facts[name] += 1
                assert seen[0] == "Facts:\n" + "\n".join(ret.trace["facts"])
                assert seen[1:] == [h.chunk.text for h in ret.hits]
            else:
                assert seen == [h.chunk.text for h in ret.hits]
    print("questions whose answer contexts carry graph facts:", with_facts)
    assert min(with_facts.values()) >= len(cuisine.questions) // 2      # most questions reach the graph
    for q in cuisine.questions:                        # the default contract: the hits' texts only
        ret = harness.retrieve(methods["naive"], q.question, 3)
        assert recorders["naive"].seen[q.question] == [h.chunk.text for h in ret.hits]


def test_cli_eval_with_a_reasoner_writes_answer_rows_and_provenance(tmp_path, cuisine, capsys, monkeypatch):
    monkeypatch.delenv("RAG_LAB_LLM", raising=False)
    out = tmp_path / "r.csv"
    assert main(["eval", "--data", "italian_cuisine", "--methods", "naive,sketch", "--reasoner", "offline",
                 "--k", "1,3,5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "index built by: offline for sketch; without a reasoner for naive, answers by: offline, judge: none" in printed
    assert "token_f1@5" in printed and "ctx_recall@3" in printed
    df = pd.read_csv(out)
    n = len(cuisine.questions)
    for metric in ("ctx_recall", "doc_mrr", "token_f1", "rouge_l", "id_context_precision", "id_context_recall"):
        for method in ("naive", "sketch"):
            assert len(df[(df.metric == metric) & (df.method == method)]) >= n, (metric, method)
    assert set(df[df.method == "sketch"]["index_reasoner"]) == {"offline"}
    assert set(df[df.method == "naive"]["index_reasoner"]) == {"none"}
    assert set(df["answer_reasoner"]) == {"offline"}
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["dataset"] == {"name": "italian_cuisine", "documents": 3, "questions": n}
    assert record["answer_reasoner"] == "offline" and record["judge"] == "none"
    assert record["ks"] == [1, 3, 5] and record["answer_k"] == 5
    sketch = record["methods"]["sketch"]
    assert sketch["class"] == "rag_lab.methods.sketch.method:SketchRetriever"
    assert sketch["index_reasoner"] == "offline" and sketch["params"]["chunk_size"] == 100
    assert record["methods"]["naive"]["params"] == {"size": 128, "overlap": 16}
    assert len(record["git"]["commit"]) == 40 and record["packages"]["ragas"]
    assert record["rows"] == len(df)


SENTENCES = "Pesto comes from Genoa. Basil grows in Liguria. Pizza is baked in Naples. Risotto is from Milan."
#            c0 [0, 23)              c1 [24, 47)             c2 [48, 73)               c3 [74, 96)


class Sentences(Method):
    """One span chunk per sentence of SENTENCES; always returns c0, c1, c2 (in that order)."""

    def build(self, documents):
        (doc,) = documents
        bounds = [(0, 23), (24, 47), (48, 73), (74, 96)]
        self.chunks = [Chunk(f"c{i}", doc.id, doc.text[s:e], s, e) for i, (s, e) in enumerate(bounds)]
        return self

    def retrieve(self, query, k):
        return Retrieval(query, [Hit(c, 1.0) for c in self.chunks[:3][:k]])


def test_id_based_context_metrics_by_hand():
    # Gold "Genoa. Basil grows" (chars 17..35) overlaps c0 by "Genoa." (6 chars) and c1 by "Basil grows"
    # (11 chars); the rule asks for half the shorter span (18 / 2 = 9): c1 matches, c0 does not. Gold
    # "Risotto is from Milan." is c3 exactly. Reference ids: c1, c3. Retrieved c0, c1, c2: one of the three
    # is a reference (precision 1/3), one of the two references is retrieved (recall 1/2).
    doc = Document("d", SENTENCES)
    assert SENTENCES[17:35] == "Genoa. Basil grows" and SENTENCES[74:96] == "Risotto is from Milan."
    data = Dataset("s", [doc], [Question("q", "Where is pesto from?", "Genoa", ["d"],
                                         ["Genoa. Basil grows", "Risotto is from Milan."])])
    r = Sentences()
    r.name = "sentences"
    df = evaluate([r], data, (3,), reasoner=Recorder(), answer_k=3, progress=False)
    assert value(df, "sentences", "id_context_precision", 3) == pytest.approx(1 / 3)
    assert value(df, "sentences", "id_context_recall", 3) == pytest.approx(1 / 2)
    # the retrieval metrics use the same match rule: gold 1 found (by c1), gold 2 not; one hit of three matches
    assert value(df, "sentences", "ctx_recall", 3) == pytest.approx(1 / 2)
    assert value(df, "sentences", "ctx_precision", 3) == pytest.approx(1 / 3)


def overlap_references(chunks, question, documents):
    """The context-level match rule of docs/metrics.md, written out again for this test: a chunk is a
    reference when it overlaps a gold passage (found in its gold document) by at least half the
    shorter of the two spans."""
    spans = []
    for ctx in question.gold_contexts:
        doc = next(d for d in question.gold_doc_ids + list(documents) if ctx in documents[d].text)
        start = documents[doc].text.index(ctx)
        spans.append((doc, start, start + len(ctx)))

    def overlap(c, s, e):
        return min(c.end, e) - max(c.start, s)

    return {c.id for c in chunks for doc, s, e in spans
            if c.doc_id == doc and overlap(c, s, e) > 0 and overlap(c, s, e) >= 0.5 * min(c.end - c.start, e - s)}


def test_id_based_context_metrics_on_shipped_data_follow_the_overlap_rule(cuisine, monkeypatch):
    monkeypatch.delenv("RAG_LAB_LLM", raising=False)
    from rag_lab.methods import get_retriever

    naive = get_retriever("naive")
    df = evaluate([naive], cuisine, (3,), reasoner="offline", answer_k=3, progress=False)
    docs = {d.id: d for d in cuisine.documents}
    scored = 0
    for q in cuisine.questions:
        hits = {h.chunk.id for h in harness.retrieve(naive, q.question, 3).hits}
        refs = overlap_references(naive.chunks, q, docs)
        assert refs, f"{q.id}: its gold contexts match no chunk"
        found = len(hits & refs)
        assert value(df[df.question_id == q.id], "naive", "id_context_precision", 3) == pytest.approx(found / len(hits))
        assert value(df[df.question_id == q.id], "naive", "id_context_recall", 3) == pytest.approx(found / len(refs))
        scored += found > 0
    assert scored > 0                                  # not all zero: the metric sees real matches


class Knobs(Method):
    def __init__(self):
        super().__init__()
        self.size, self.alphas, self.store = 128, (0.5, 0.3), "networkx"
        self.index, self.model, self._embedder = object(), object(), object()


def test_method_params_prefer_config_and_skip_state():
    import dataclasses

    r = Knobs()
    assert method_params(r) == {"size": 128, "alphas": [0.5, 0.3], "store": "networkx"}
    r.chunks = [Chunk("c", "d", "x", 0, 1)]                       # state, not a parameter
    r.config = dataclasses.make_dataclass("C", [("top_k", int)])(5)
    assert method_params(r) == {"size": 128, "alphas": [0.5, 0.3], "store": "networkx", "top_k": 5}

    class Config:
        def as_dict(self):
            return {"size": 64}

    r.config = Config()                                          # a config with as_dict() is the whole answer
    assert method_params(r) == {"size": 64}


def test_captions_name_both_reasoners():
    assert reasoners_label("offline", "openai:gpt-4o-mini") == "index built by: offline, answers by: openai:gpt-4o-mini"
    assert reasoners_label({"naive": "none", "kg": "offline", "raptor": "offline"}, None, "none") == \
        "index built by: offline for kg, raptor; without a reasoner for naive, answers by: none, judge: none"
    # "built by: none" read as "no index was built"; no judge is spelled "judge: none" whatever it was given as
    assert reasoners_label("none", "offline", "") == "index built without a reasoner, answers by: offline, judge: none"
    assert reasoners_label({"naive": "none"}) == reasoners_label("none") == \
        "index built without a reasoner, answers by: none"
    a, b = Scripted({1: ["B"]}), Scripted({1: ["B"]})
    a.name, b.name = "a", "b"
    data = abc_dataset()
    both = combine([evaluate([a], data, (1,), progress=False), evaluate([b], data, (1,), progress=False)])
    assert set(both.attrs["methods"]) == {"a", "b"}
    assert caption_reasoners(both) == "index built without a reasoner, answers by: none, judge: none"
    with pytest.raises(ValueError, match="no provenance"):
        caption_reasoners(pd.DataFrame())


class Noting(Scripted):
    """Scripted, noting one near-tie in its build and one in every retrieval (core/ties.py)."""

    def build(self, documents):
        from rag_lab.core import ties
        super().build(documents)
        ties.note("build decision", "x", "y", 1e-5)
        return self

    def retrieve(self, query, k):
        from rag_lab.core import ties
        ties.note("retrieval decision", "A", "B", 1e-5)
        return super().retrieve(query, k)


def test_every_note_written_names_its_data_set_method_and_question_or_build_scope(tmp_path, monkeypatch):
    from rag_lab.core import ties

    sink = tmp_path / "near.jsonl"
    monkeypatch.setenv(ties.NEAR_TIES_ENV, str(sink))
    early = Noting({5: list("BAC")})
    early.name = "early"
    harness.build(early, abc_dataset().documents, reuse=False)       # outside the harness: no data set known yet
    assert ties.read_near_ties(sink) == []                  # a note naming no rows is not written
    late = Noting({5: list("ABC")})
    late.name = "late"
    evaluate({"early": early, "late": late}, abc_dataset(), ks=(5,), progress=False)
    labels = sorted((json.dumps(t.labels, sort_keys=True) for t in ties.read_near_ties(sink)))
    build = {"dataset": "abc", "step": "build", "questions": ""}
    assert labels == sorted(json.dumps(x, sort_keys=True) for x in (
        {**build, "method": "early"}, {**build, "method": "late"},
        {"dataset": "abc", "method": "early", "question": "q"}, {"dataset": "abc", "method": "late", "question": "q"}))
