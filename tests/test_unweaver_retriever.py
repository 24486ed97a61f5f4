"""The UnWeaver retriever end to end with a fake reasoner and a keyword embedder, so every
similarity, vote and cost below is worked out by hand."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rag_lab.evaluation import harness
from rag_lab.methods import get_retriever
from rag_lab.methods.unweaver.method import UnWeaverRetriever
from rag_lab.reasoning import Entity, Reasoner
from rag_lab.core.types import Cost, Document, Question
from rag_lab.methods.unweaver.views import gold_passage_sentence

VOCAB = ["saffron", "risotto", "abruzzo", "piedmont", "spice", "region", "rice"]
WORD = re.compile(r"\w+")


class KeywordEmbedder:
    """Counts of the VOCAB words (a final "s" ignored), L2-normalised; tokens = words."""

    dim = len(VOCAB)

    def tokenize_with_offsets(self, text):
        spans = [(m.start(), m.end()) for m in WORD.finditer(text)]
        return list(range(len(spans))), np.array(spans, dtype=np.int64).reshape(-1, 2)

    def count_tokens(self, texts):
        texts = [texts] if isinstance(texts, str) else texts
        return sum(len(WORD.findall(t)) for t in texts)

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in WORD.findall(t.lower()):
                w = w[:-1] if w.endswith("s") and w[:-1] in VOCAB else w
                if w in VOCAB:
                    out[i, VOCAB.index(w)] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def encode_one(self, text):
        return self.encode([text])[0]


TEXTS = {"d0": "Saffron colours the risotto", "d1": "Saffron grows in Abruzzo", "d2": "Risotto rice from Piedmont"}
ENTITIES = {
    TEXTS["d0"]: [Entity("Saffron", "spice", "a red spice"), Entity("risotto", "dish", "a creamy rice dish")],
    TEXTS["d1"]: [Entity("saffron", "spice", "a costly spice"), Entity("Abruzzo", "region", "a mountain region")],
    TEXTS["d2"]: [Entity("Risottos", "dish", "stirred slowly"), Entity("Piedmont", "region", "a northern region")],
}


class FakeReasoner(Reasoner):
    """Hand-written entities per chunk; each entities call costs 10 prompt + 4 completion tokens,
    each summary 20 + 5; summary = the first max_words words."""

    name = "fake"

    def entities(self, text):
        self.usage.add("entities", Cost(llm_prompt_tokens=10, llm_completion_tokens=4, llm_calls=1, seconds=5.0))
        return ENTITIES[text]

    def summarize(self, texts, max_words=100):
        self.usage.add("summarize", Cost(llm_prompt_tokens=20, llm_completion_tokens=5, llm_calls=1))
        return " ".join(" ".join(texts).split()[:max_words])

    def triples(self, text): raise NotImplementedError
    def query_entities(self, query): raise NotImplementedError
    def themes(self, text, n=5): raise NotImplementedError
    def answer(self, question, contexts): raise NotImplementedError
    def choose_next(self, query, gathered, candidates, similarities, candidate_ids=None): raise NotImplementedError


DOCS = [Document(k, v) for k, v in TEXTS.items()]
# Query "which region grows spice" embeds as (spice + region) / sqrt 2. Class texts and similarities:
#   Saffron  "Saffron: a red spice a costly spice"   saffron 1, spice 2 -> 2 / sqrt 10 = 0.632
#   risotto  "risotto: a creamy rice dish stirred slowly"            -> 0
#   Abruzzo  "Abruzzo: a mountain region"  abruzzo 1, region 1       -> 1/2
#   Piedmont "Piedmont: a northern region"                           -> 1/2 (ties Abruzzo, a later class)
QUERY = "which region grows spice"


def built(**params) -> UnWeaverRetriever:
    r = UnWeaverRetriever(reasoner=FakeReasoner(), embedder=KeywordEmbedder(), **params)
    r.name = "unweaver"
    return harness.build(r, DOCS)


def test_build_keeps_classes_matrices_and_costs():
    r = built()
    assert [c.id for c in r.chunks] == ["d0#fixed-0", "d1#fixed-0", "d2#fixed-0"]
    assert [(c.name, c.chunks) for c in r.classes] == [("Saffron", [0, 1]), ("risotto", [0, 2]), ("Abruzzo", [1]),
                                                       ("Piedmont", [2])]
    assert r.chunk_class.toarray().tolist() == [[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1]]
    assert r.incidence.shape == (6, 3) and len(r.selection) == 4 and r.class_vectors.shape == (4, 7)
    # 3 entities calls at 10 + 4 tokens; class texts have 7 + 7 + 4 + 4 = 22 words; the reasoner's
    # 5 s per call are not added (build time is measured around the whole build): added, they would make
    # at least 15 s (a structure check, not a timing one: a loaded machine may take a few real seconds)
    c = r.build_cost
    assert (c.llm_prompt_tokens, c.llm_completion_tokens, c.llm_calls, c.embedding_tokens) == (30, 12, 3, 22)
    assert c.seconds < 15
    assert r.planned_llm_calls(DOCS) == [("entities", t) for t in TEXTS.values()]


def test_description_cap_goes_through_the_reasoner():
    r = built(description_cap=3)
    # Saffron ("a red spice a costly spice") and risotto (6 words each) exceed 3 words -> 2 summaries
    assert [c.summarized for c in r.classes] == [True, True, False, False]
    assert r.classes[0].text == "Saffron: a red spice"
    assert (r.build_cost.llm_prompt_tokens, r.build_cost.llm_calls) == (30 + 40, 5)


def test_votes_and_rules_by_hand():
    r = built(top_n=2)
    # voters: Saffron (0.632) approves chunks d0, d1; Abruzzo (0.5) approves d1. Candidates in order of
    # summed similarity: d1 (1.132), d0 (0.632).
    pav = harness.retrieve(r, QUERY, 2)
    assert [c["name"] for c in pav.trace["classes"]] == ["Saffron", "Abruzzo"]
    assert pav.trace["classes"][0]["similarity"] == pytest.approx(2 / np.sqrt(10), abs=1e-6)
    assert pav.trace["approvals"] == {"d1#fixed-0": 2, "d0#fixed-0": 1}
    # PAV: d1 adds 1 + 1 = 2; then d0 adds 1/2 (Saffron's second approved chunk)
    assert [(h.chunk.id, h.score, h.via) for h in pav.hits] == [("d1#fixed-0", 2.0, "vote"), ("d0#fixed-0", 0.5, "vote")]
    assert pav.cost.embedding_tokens == 4 and pav.cost.llm_calls == 0
    # CC: d1 covers both voters; d0 adds nobody new
    assert [h.score for h in harness.retrieve(r.variant(rule="cc"), QUERY, 2).hits] == [2.0, 0.0]
    # Approval: 2 and 1 approvals
    assert [h.score for h in harness.retrieve(r.variant(rule="approval"), QUERY, 2).hits] == [2.0, 1.0]


def test_voters_widen_until_k_chunks_are_approved():
    r = built(top_n=2, rule="approval")
    # k = 3 but Saffron and Abruzzo approve only d0, d1: Piedmont (0.5, next by similarity) joins and
    # approves d2. d0 (0.632) ranks before d2 (0.5) among the one-approval chunks.
    ret = harness.retrieve(r, QUERY, 3)
    assert ret.trace["voters_used"] == 3
    assert [(h.chunk.id, h.score) for h in ret.hits] == [("d1#fixed-0", 2.0), ("d0#fixed-0", 1.0), ("d2#fixed-0", 1.0)]


def test_alignment_selection_and_variants():
    r = built(top_n=2)
    # R over candidates (d1, d0) x voters (Saffron, Abruzzo) = [[1, 1], [1, 0]], budgets 1, weights
    # w = (0.632, 0.5). Kelly: d0 holds only Saffron; both chunks full: x_S = 1 - x_A and the
    # prices give x_S = w_S / (l1 + l0), x_A = w_A / l1. If d0 is full, x_S = 1 and x_A = 0 —
    # impossible with a log utility, so d0 is slack (l0 = 0): x_S / x_A = w_S / w_A, x_S + x_A = 1.
    ret = harness.retrieve(r.variant(select="kelly"), QUERY, 2)
    w_s, w_a = 2 / np.sqrt(10), 0.5
    np.testing.assert_allclose(ret.trace["idea_strengths"], [w_s / (w_s + w_a), w_a / (w_s + w_a)], atol=1e-6)
    assert [h.chunk.id for h in ret.hits] == ["d1#fixed-0", "d0#fixed-0"] and ret.hits[0].via == "kelly"
    lsq = harness.retrieve(r.variant(select="bounded_lsq"), QUERY, 1)
    assert [h.chunk.id for h in lsq.hits] == ["d1#fixed-0"] and lsq.hits[0].via == "bounded_lsq"
    # The paper's constrained least squares: Saffron (nearest) demanded at 1 (its chunks' budget),
    # Abruzzo free: min (1 + x_A - 1)^2 + (1 - 1)^2 -> x_A = 0. Loads d1 = d0 = 1 tie exactly; the
    # tie goes to the chunk more similar to the query: d1 (0.632 + 0.5) before d0 (0.632).
    cls = harness.retrieve(r.variant(select="constrained_lsq"), QUERY, 2)
    np.testing.assert_allclose(cls.trace["idea_strengths"], [1, 0], atol=1e-12)
    assert cls.trace["demanded_voters"] == [0] and cls.trace["kkt_residual"] < 1e-12
    assert [(h.chunk.id, round(h.score, 9), h.via) for h in cls.hits] == [("d1#fixed-0", 1.0, "constrained_lsq"),
                                                                         ("d0#fixed-0", 1.0, "constrained_lsq")]
    # both demanded: Abruzzo at its similarity relative to Saffron's, 0.5 / 0.632; d1 carries both
    both = harness.retrieve(r.variant(select="constrained_lsq", demanded_ideas=2), QUERY, 2)
    np.testing.assert_allclose(both.trace["demand"], [1, 0.5 / w_s], atol=1e-6)
    assert [h.chunk.id for h in both.hits] == ["d1#fixed-0", "d0#fixed-0"] and both.hits[0].score > 1.7
    v = r.variant(name="unweaver-cc", rule="cc")
    assert v.name == "unweaver-cc" and v.build_cost == r.build_cost and r.config.rule == "pav" and v.config.rule == "cc"
    with pytest.raises(ValueError, match="variant can change only"):
        r.variant(description_cap=5)


def test_registered_and_validated():
    r = get_retriever("unweaver", rule="cc", top_n=3, reasoner=FakeReasoner(), embedder=KeywordEmbedder())
    assert isinstance(r, UnWeaverRetriever) and (r.config.rule, r.config.top_n, r.name) == ("cc", 3, "unweaver")
    with pytest.raises(ValueError, match="UnWeaverConfig.rule must be one of 'approval', 'pav', 'cc', got 'borda'"):
        UnWeaverRetriever(rule="borda")
    with pytest.raises(ValueError, match="top_n must be a positive number"):
        UnWeaverRetriever(top_n=0)
    with pytest.raises(ValueError, match="top_n must be an integer"):
        UnWeaverRetriever(top_n=2.5)
    with pytest.raises(ValueError, match="select must be one of"):
        UnWeaverRetriever(select="random")
    with pytest.raises(ValueError, match="demanded_ideas must be a positive number"):
        UnWeaverRetriever(demanded_ideas=0)
    with pytest.raises(ValueError, match="demanded_ideas must be an integer"):
        UnWeaverRetriever(demanded_ideas=1.5)
    with pytest.raises(RuntimeError, match="build"):
        harness.retrieve(UnWeaverRetriever(embedder=KeywordEmbedder()), "x", 1)


NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "02_unweaver.ipynb"


def run_cell(cell_id: str, **names) -> dict:
    """Notebook 02's code cell ``cell_id`` run on ``names`` (what its imports and earlier cells give it), with
    pandas, ``save_table`` and a silent ``display``: what the notebook's own lines make of a hand-worked input."""
    import json

    import pandas as pd
    from rag_lab.core.figures import save_table

    cell = next(c for c in json.loads(NOTEBOOK.read_text("utf-8"))["cells"] if c.get("id") == cell_id)
    namespace = {"pd": pd, "save_table": save_table, "display": lambda *shown: None, **names}
    exec("".join(cell["source"]), namespace)
    return namespace


def test_notebook_shows_the_index_it_built(tmp_path, monkeypatch):
    """Notebook 02's build, entities and matrices cells on the hand-worked index: the knobs left at None are
    not overrides, the build's counts and costs one row each, a chunk's entities with their classes (one row
    per description, its type where it is not a plain noun chunk, "→ class" where it joined another name),
    and the shapes and non-zeros of the appendix's matrices."""
    from types import SimpleNamespace

    from rag_lab.evaluation.provenance import reasoners_label

    cell = run_cell("ac41c0bc", rule=None, top_n=2, exact=None, description_cap=None, get_retriever=get_retriever, R=FakeReasoner(),
                    embedder=KeywordEmbedder(), data=SimpleNamespace(documents=DOCS), reasoners_label=reasoners_label,
                    build=lambda r, documents: harness.build(r, documents, reuse=False), out=tmp_path, dataset="toy")
    assert cell["knobs"] == {"top_n": 2} and cell["index_label"] == "index built by: fake, answers by: none"
    # by hand (test_build_keeps_classes_matrices_and_costs): 3 chunks, 6 mentions, 4 classes, 30 prompt tokens
    stats, shown = cell["stats"], cell["shown_stats"]["value"]
    assert stats.loc[["chunks", "mentions", "classes", "build_llm_prompt_tokens"], "value"].tolist() == [3, 6, 4, 30]
    assert shown[["chunks", "build_llm_prompt_tokens"]].tolist() == ["3", "30"] and shown["build_seconds"].endswith(" s")
    r = cell["uw"]
    # chunk 1 is d1, "Saffron grows in Abruzzo": saffron joins the class Saffron (named by d0's mention), Abruzzo its own
    cell = run_cell("c37393f2", uw=r, out=tmp_path, index_label="x")
    assert cell["chunk_index"] == 1
    assert cell["ents"][["name", "type", "key", "class"]].values.tolist() == [["saffron", "spice", "saffron", "Saffron"],
                                                                              ["Abruzzo", "region", "abruzzo", "Abruzzo"]]
    assert cell["by_description"].values.tolist() == [["a costly spice", "saffron (spice) → Saffron", 1],
                                                      ["a mountain region", "Abruzzo (region)", 1]]
    # one sentence describing both (as the offline reasoner describes them): one row, a noun chunk's type not shown
    monkeypatch.setitem(ENTITIES, TEXTS["d1"], [Entity("saffron", "CONCEPT", "one sentence"), Entity("Abruzzo", "GPE", "one sentence")])
    shared = harness.build(UnWeaverRetriever(reasoner=FakeReasoner(), embedder=KeywordEmbedder(), top_n=2), DOCS, reuse=False)
    by_description = run_cell("c37393f2", uw=shared, out=tmp_path, index_label="x")["by_description"]
    assert by_description.values.tolist() == [["one sentence", "saffron → Saffron, Abruzzo (GPE)", 2]]
    # the largest classes: Saffron and risotto span 2 chunks (2 mentions each; Saffron is the earlier class), then
    # Abruzzo and Piedmont 1; risotto's mentions go by "Risottos" (d2) and "risotto" (d0)
    big = run_cell("11046667", uw=r, out=tmp_path, index_label="x", dataset="toy")["big"]
    assert big[["class", "mentions", "chunks"]].values.tolist() == [["Saffron", 2, 2], ["risotto", 2, 2], ["Abruzzo", 1, 1],
                                                                   ["Piedmont", 1, 1]]
    assert big["surface forms"].tolist() == ["Saffron, saffron", "Risottos, risotto", "Abruzzo", "Piedmont"]
    assert big["words embedded"].tolist() == [7, 7, 4, 4] and not big["summarized"].any()
    # E: 6 mentions x 3 chunks, M: 6 mentions x 4 classes, A: 3 chunks x 4 classes (6 ones); P_k: classes of 2, 2, 1
    # and 1 mentions; V: each class text names two VOCAB words (Saffron: saffron, spice; risotto: risotto, rice; ...)
    mats = run_cell("445b6380", uw=r, out=tmp_path, index_label="x", dataset="toy")["mats"]
    assert mats["shape"].tolist() == ["6 x 3", "6 x 4", "3 x 4", "6 x |I_k|, |I_k| from 1 to 2", "4 x 7"]
    assert mats["non-zeros"].tolist() == [6, 6, 6, 6, 8]
    assert mats["density"].tolist()[:3] == [pytest.approx(6 / 18), pytest.approx(6 / 24), pytest.approx(6 / 12)]
    assert np.isnan(mats["density"][3]) and mats["density"][4] == pytest.approx(8 / 28)
    assert mats["matrix"][3] == "P_k  selection (4 classes)"


def test_views_of_a_built_index():
    from rag_lab.evaluation.worked import chunks_holding, gold_passage_table, gold_passages, rule_comparison
    from rag_lab.methods.unweaver import views
    from rag_lab.methods.unweaver.alignment import EXAMPLE

    r = built(top_n=2)
    ret = harness.retrieve(r, QUERY, 2)
    # approvals and the elected order, as the votes figure reads them from the trace
    assert ret.trace["elected"] == ["d1#fixed-0", "d0#fixed-0"] and ret.trace["approvals"] == {"d1#fixed-0": 2, "d0#fixed-0": 1}
    # gold passages: P1 is the whole of d1; P2 the first two words of d2 (12 characters, all inside d2's
    # one chunk: overlap 12 >= half of 12). d0 is a gold document holding no gold passage.
    question = Question("q", QUERY, gold_doc_ids=["d0", "d1", "d2"], gold_contexts=[TEXTS["d1"], "Risotto rice"])
    golds = gold_passages(question, DOCS)
    assert [(g.doc_id, g.start, g.end) for g in golds] == [("d1", 0, 24), ("d2", 0, 12)]
    assert chunks_holding(r.chunks, golds) == {"d1#fixed-0", "d2#fixed-0"}
    by_rule = {"pav": ret, "one": harness.retrieve(r, QUERY, 1)}       # pav elects d1 then d0; "one" elects d1
    table = rule_comparison(by_rule, golds)
    assert table.values.tolist() == [["d1#fixed-0 ✓ P1", "d1#fixed-0 ✓ P1"], ["d0#fixed-0", ""]]   # d0: gold doc, no mark
    passages = gold_passage_table(by_rule, golds)
    assert passages.to_dict("index") == {
        "P1": {"document": "d1", "text": TEXTS["d1"], "pav": "rank 1", "one": "rank 1"},
        "P2": {"document": "d2", "text": "Risotto rice", "pav": "not elected", "one": "not elected"}}
    assert gold_passage_sentence(passages, 2) == (
        "Of the 2 gold passages: P1 is elected by all of the 2 rules; P2 is elected by none of the 2 rules — every "
        "rule's context recall@2 on this question is 0.50; no rule elects a chunk holding P2.")
    problem = r.alignment_problem(QUERY, 2)
    assert problem["chunks"] == ["d1#fixed-0", "d0#fixed-0"] and problem["ideas"] == ["Saffron", "Abruzzo"]
    assert problem["R"].tolist() == [[1, 1], [1, 0]]
    assert problem["demanded"] == 1
    report = views.alignment_report(**EXAMPLE, k=2)   # the worked examples of test_unweaver_alignment / _constrained_lsq
    assert report["selected"].values.tolist() == [["chunk 1"] * 3, ["chunk 3"] * 3]
    assert list(report["selected"].columns) == ["kelly", "constrained lsq", "bounded lsq"]
    assert (report["kkt"].max() < 1e-9).all()
    assert report["kkt"]["constrained lsq (KKT system)"].isna().tolist() == [False, False, True, True]
    np.testing.assert_allclose(report["ideas"]["x constrained lsq"], [1, 1 / 5, 13 / 20], atol=1e-12)
    assert report["ideas"]["demand d"].fillna(-1).tolist() == [1.0, -1, -1]
    system = report["kkt_system"]
    assert system.loc["x A = d"].tolist() == [1, 0, 0, 0, 1] and system.loc["solution [x; z]", "z A"] == pytest.approx(-0.4)
    assert report["iterations"]["demanded ideas"] == "A"
    on_query = views.alignment_report(**problem, k=2)
    assert on_query["selected"]["constrained lsq"].tolist() == ["d1#fixed-0", "d0#fixed-0"]


def test_solver_views():
    import pandas as pd
    from rag_lab.methods.unweaver import views
    from rag_lab.methods.unweaver.alignment import EXAMPLE

    r = built(top_n=2)
    assert r.config.as_dict()["top_n"] == 2 and r.config.as_dict()["rule"] == "pav"   # notebook 02 shows these, one row each
    said = views.solvers_sentence(pd.Series({"kelly iterations": 26, "kelly converged": True, "demanded ideas": "A, B",
                                             "demanded for uniqueness": "B", "bounded lsq status": 1}))
    assert said == ("Kelly's price iteration converged after 26 iterations;\nthe constrained form demands A, B (of which "
                    "B only so that its solution stays unique);\nthe bounded form (scipy's lsq_linear) converged "
                    "(first-order optimality within tolerance).")
    said = views.solvers_sentence(pd.Series({"kelly iterations": 500, "kelly converged": False, "demanded ideas": "A",
                                             "demanded for uniqueness": "none", "bounded lsq status": 7}))
    assert said == ("Kelly's price iteration did not converge after 500 iterations;\nthe constrained form demands A;\n"
                    "the bounded form (scipy's lsq_linear) ended with status 7.")
    # alignment_report says its own solvers' ends: the worked example demands A alone (test_unweaver_constrained_lsq)
    report = views.alignment_report(**EXAMPLE, k=2)
    assert report["said"] == views.solvers_sentence(report["iterations"])
    assert "\nthe constrained form demands A;\n" in report["said"]


def test_shown_tokens_leaves_out_token_columns_nobody_filled():
    """Notebook 02's token table on a hand-made table in the paper's layout: the factual-correctness columns with no
    value (no judge) and the LLM columns 0 in every row (no LLM) are left out of the shown table and named in a
    line each; a column with a value somewhere stays."""
    import pandas as pd
    from rag_lab.methods.unweaver.paper import FC_COLUMNS, TOKEN_COLUMNS, shown_tokens

    def tokens(rows):
        index = pd.MultiIndex.from_tuples([("toy", "unweaver"), ("toy", "naive")], names=["dataset", "method"])
        table = pd.DataFrame(rows, index=index, columns=pd.MultiIndex.from_tuples(FC_COLUMNS + TOKEN_COLUMNS))
        return table.astype({c: "Int64" for c in TOKEN_COLUMNS})

    nan = float("nan")
    offline = tokens([[nan, nan, 0, 0, 0, 0, 120, 8], [nan, nan, 0, 0, 0, 0, 40, 8]])
    shown, said = shown_tokens(offline, None, "offline")
    assert list(shown.columns) == [("Embedder", "index"), ("Embedder", "query")]
    assert said == (
        "Left out above, with no score of ours in this run (judge: none): FC; the column stays in token_usage.csv.\n"
        "Left out above, 0 for every method with the offline reasoner: LLM prompt · index, LLM prompt · query, LLM "
        "completion · index, LLM completion · query; the next table estimates what an LLM reasoner would be sent.\n")
    # a judge scored FC (its spread stays empty) and the LLM was prompted while indexing one method
    judged = tokens([[0.4, nan, 90, 0, 30, 0, 120, 8], [0.3, nan, 0, 0, 0, 0, 40, 8]])
    shown, said = shown_tokens(judged, "openai:gpt-4o-mini", "openai:gpt-4o-mini")
    assert list(shown.columns) == [("FC", "mean"), ("LLM prompt", "index"), ("LLM completion", "index"),
                                   ("Embedder", "index"), ("Embedder", "query")]
    assert said == (
        "Left out above, with no score of ours in this run (judge: openai:gpt-4o-mini): FC; the column stays in "
        "token_usage.csv.\nLeft out above, 0 for every method with the openai:gpt-4o-mini reasoner: LLM prompt · query, "
        "LLM completion · query; the next table estimates what an LLM reasoner would be sent.\n")
    # every column filled somewhere: nothing left out, nothing said
    full = tokens([[0.4, 0.1, 90, 1, 30, 1, 120, 8], [0.3, 0.1, 0, 0, 0, 0, 40, 8]])
    shown, said = shown_tokens(full, "j", "r")
    assert list(shown.columns) == list(full.columns) and said == ""


def test_the_worked_question_under_every_rule_and_why_they_agree():
    """Notebook 02's worked question on the hand-worked index (top 2 voters: Saffron approves d0, d1; Abruzzo d1):
    the chunk holding the gold passage, every rule's and solver's election, and why the rules agree."""
    from rag_lab.methods.unweaver.views import elected_by_rule, gold_chunks, rules_explained

    r = built(top_n=2)
    q = Question("q1", QUERY, answer="Saffron", gold_doc_ids=["d1"], gold_contexts=["Saffron grows in Abruzzo"])
    assert gold_chunks(r, q, DOCS) == {"d1#fixed-0"}
    by_rule, passages, elected, said = elected_by_rule(r, q, DOCS, 2)
    assert list(by_rule) == ["approval", "pav", "cc", "kelly", "constrained_lsq", "bounded_lsq"]
    # every rule and solver elects d1 first (test_votes_and_rules_by_hand, test_alignment_selection_and_variants)
    assert all(ret.hits[0].chunk.id == "d1#fixed-0" for ret in by_rule.values())
    assert passages.loc["P1", list(by_rule)].tolist() == ["rank 1"] * 6
    assert said == "Of the 1 gold passage: P1 is elected by all of the 6 rules — every rule's context recall@2 on this question is 1.00."
    assert elected.shape[0] == 2
    voters, named, why = rules_explained(r, q, harness.retrieve(r, QUERY, 2), [q], 2, by_rule, "fake")
    assert voters["class"].tolist() == ["Saffron", "Abruzzo"]
    # the answer names Saffron, the class nearest the query
    assert named[["class", "rank"]].values.tolist() == [["Saffron", 1]]
    # approval, PAV and CC all elect d1 then d0 on the one question
    assert why.startswith("Why approval, pav and cc elect the same chunks:")
    assert "Over 1 questions the rules elect the same set on 1 and the same ranked list on 1." in why


def test_evaluation_runs_every_rule_on_every_data_set_and_says_its_findings(monkeypatch):
    """``paper.evaluation`` on two hand-made data sets (the first reuses the built index, the second gets a fresh
    one with the same knobs), and ``paper.findings`` read from it."""
    from rag_lab.core.types import Dataset
    from rag_lab.methods.unweaver import paper

    class Answering(FakeReasoner):
        def answer(self, question, contexts):
            return contexts[0]      # the first elected chunk, word for word

    q = Question("q1", QUERY, answer="Saffron grows in Abruzzo", gold_doc_ids=["d1"], gold_contexts=["Saffron grows in Abruzzo"])
    toy, again = Dataset("toy", DOCS, [q]), Dataset("again", DOCS, [q])
    monkeypatch.setattr(paper, "load_available", lambda names, limit, rows: ([toy, again], ["x: skipped"]))
    r = built(top_n=2)
    ev = paper.evaluation(["toy", "again"], r, "toy", ["no-such-method"], Answering(), KeywordEmbedder(), [1, 2],
                          None, 2)
    assert ev.notes == ["x: skipped"] and ev.missing == ["no-such-method"]
    assert ev.runs["toy"]["retrievers"]["unweaver"] is r
    fresh = ev.runs["again"]["retrievers"]["unweaver"]
    assert fresh is not r and fresh.config == r.config and [c.name for c in fresh.classes] == [c.name for c in r.classes]
    assert list(ev.runs["toy"]["retrievers"]) == ["unweaver", "unweaver-approval", "unweaver-cc"]
    # the retrieval metrics at k = 2, then the answer metrics scored without a judge (no factual correctness)
    assert ev.columns == ["doc_mrr@2", "ctx_mrr@2", "ctx_recall@2", "ctx_precision@2", "ctx_ndcg@2", "token_f1@2",
                          "rouge_l@2", "string_similarity@2", "nonllm_context_recall@2"]
    # d1, the gold document, is elected first by every rule: MRR 1; the answer is its text, the reference: F1 1
    assert ev.summaries["again"].loc["unweaver", "doc_mrr@2"] == 1.0
    assert ev.summaries["toy"].loc["unweaver-approval", "token_f1@2"] == 1.0
    ci = ev.intervals["toy"].set_index(["method", "metric"])
    assert ci.loc[("unweaver-cc", "ctx_recall@2"), "mean"] == 1.0 and ci.loc[("unweaver-cc", "ctx_recall@2"), "n"] == 1
    assert ev.units == {"toy": {"q1": "d1"}, "again": {"q1": "d1"}} and len(ev.estimands) == 2
    said = paper.findings(ev, ["again"], 2, "fake", False)
    # no naive baseline ran: no family to decide, so the described data set and the caveats are all that is said
    assert said[0] == ("Not decided on toy (not in decide_on: too few documents to decide); their means are in the "
                       "evaluation table.")
    assert not any(line.startswith("On again (n = ") for line in said)
    assert said[1].startswith("Caveats: no context-recall comparison here can be decided")
    assert "On again approval, PAV and CC elect the same set on 1 of 1 questions" in "\n".join(said)


def test_compare_with_baselines_reports_missing_methods():
    from rag_lab.methods.unweaver.paper import compare_with_baselines
    from rag_lab.core.types import Dataset, Question

    data = Dataset("toy", DOCS, [Question("q1", QUERY, gold_doc_ids=["d1"])])
    r = UnWeaverRetriever(reasoner=FakeReasoner(), embedder=KeywordEmbedder(), top_n=2)
    r.name = "unweaver"
    out = compare_with_baselines(data, r, ["no-such-method"], ks=[1, 2], other_rules=["cc"])
    assert out["missing"] == ["no-such-method"] and list(out["retrievers"]) == ["unweaver", "unweaver-cc"]
    res = out["results"]
    mrr = res[(res.metric == "doc_mrr") & (res.k == 1)].set_index("method")["value"]
    assert mrr.to_dict() == {"unweaver": 1.0, "unweaver-cc": 1.0}      # d1's chunk is elected first
    assert out["tokens"].loc[("toy (1 questions)", "unweaver"), ("Embedder", "query")] == 4   # "which region grows spice"


def test_semantic_merge_in_the_build():
    # class names embed as one-hot keyword vectors (Saffron, risotto, Abruzzo, Piedmont: orthogonal)
    apart = built(semantic_threshold=0.5)
    assert len(apart.classes) == 4 and apart.build_stats["syntactic_classes"] == 4
    # names cost 4 embedder tokens on top of the 22 of the class texts
    assert apart.build_cost.embedding_tokens == 22 + 4
    # a threshold of -1 joins every pair: one class over all three chunks, described by all six mentions
    merged = built(semantic_threshold=-1.0)
    assert [(c.mentions, c.chunks) for c in merged.classes] == [([0, 1, 2, 3, 4, 5], [0, 1, 2])]
    assert merged.chunk_class.toarray().tolist() == [[1], [1], [1]]


def test_first_places_are_ties_order_with_its_notes():
    """The voters' order from a numpy pre-selection is ``ties.order``'s, near-ties noted alike: scores on a
    grid of 4e-6 (exact ties, gaps within ``NOISE`` of ``TIE_TOL``, plain gaps), each m, seeded."""
    from rag_lab.core import ties
    from rag_lab.methods.unweaver.method import first_places

    rng = np.random.default_rng(3)
    for trial in range(60):
        n = int(rng.integers(1, 80))
        scores = (rng.integers(0, 40 if trial % 2 else 4000, size=n) * 4e-6).astype(np.float32)
        for m in (1, 3, 10, n + 2):
            with ties.collecting() as ours:
                got = first_places(scores, m, what="w", names=lambda i: f"c{i}")
            with ties.collecting() as theirs:
                want = ties.order(scores, k=m, what="w", names=lambda i: f"c{i}")
            assert got == want and ours == theirs
    # by hand: 0.5 and 0.5 - 5e-6 tie (to the earlier), 0.4 follows
    assert first_places(np.array([0.4, 0.5 - 5e-6, 0.5], dtype=np.float32), 2) == [1, 2]
