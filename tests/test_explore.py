"""The teaching explorer without a browser: gold highlighting worked out by hand, the view of a
question for several methods, index reuse for query-time knobs, and the widget's logic (its
default view is computed at once and offered as text/html for readers without a kernel)."""
from types import SimpleNamespace

import numpy as np
import pytest

from rag_lab.evaluation.worked import gold_segments
from rag_lab.explore.explorer import Explorer, ExplorerView, main_knob, trace_lines, MAIN_KNOBS
from rag_lab.evaluation.metrics import GoldSpan
from rag_lab.evaluation.retrievers import registered_config
from rag_lab.core.types import Chunk, Dataset, Document, Question

PASTA = "Pesto comes from Genoa. It is made with basil, pine nuts and pecorino cheese."
RICE = "Risotto alla milanese is coloured with saffron. Carnaroli rice keeps its bite."
PIZZA = "Neapolitan pizza is baked in a wood-fired oven for about ninety seconds."


def tiny() -> Dataset:
    docs = [Document("pasta", PASTA, "Pasta"), Document("rice", RICE, "Rice"), Document("pizza", PIZZA, "Pizza")]
    qs = [Question("q1", "Which spice colours risotto?", "saffron", ["rice"], ["Risotto alla milanese is coloured with saffron."]),
          Question("q2", "Where does pesto come from?", "Genoa", ["pasta"], ["Pesto comes from Genoa."])]
    return Dataset("tiny", docs, qs)


@pytest.fixture(scope="module")
def explorer(embedder):
    return Explorer(embedder=embedder, datasets=[]).keep(tiny())


# -- gold highlighting (offsets counted by hand) -------------------------------------------------

def test_span_chunk_marks_the_characters_it_shares_with_a_gold_span():
    chunk = Chunk("c", "pasta", PASTA, 0, len(PASTA))
    gold = GoldSpan("pasta", 0, 23, "Pesto comes from Genoa.")          # PASTA[0:23]
    assert gold_segments(chunk, [gold]) == [("Pesto comes from Genoa.", True), (PASTA[23:], False)]


def test_partial_chunk_marks_only_the_overlap_and_other_documents_nothing():
    # chunk = PASTA[17:46] "Genoa. It is made with basil,"; gold = PASTA[0:23]: overlap [17, 23) = 6
    # characters, the shorter span is 23 long: 6 < 0.5 * 23, not a match -> nothing marked
    chunk = Chunk("c", "pasta", PASTA[17:46], 17, 46)
    gold = GoldSpan("pasta", 0, 23, "Pesto comes from Genoa.")
    assert gold_segments(chunk, [gold]) == [(PASTA[17:46], False)]
    # with min_overlap 0.2 it matches (6 >= 4.6): the first six characters "Genoa." are marked
    assert gold_segments(chunk, [gold], min_overlap=0.2) == [("Genoa.", True), (PASTA[23:46], False)]
    other = Chunk("o", "rice", RICE, 0, len(RICE))
    assert gold_segments(other, [gold]) == [(RICE, False)]


def test_derived_chunk_marks_verbatim_copies_of_the_gold_text():
    summary = Chunk("raptor-L1-0", "pasta", "Summary. Pesto comes from Genoa. End.", -1, -1)
    gold = GoldSpan("pasta", 0, 23, "Pesto comes from Genoa.")
    assert gold_segments(summary, [gold]) == [("Summary. ", False), ("Pesto comes from Genoa.", True), (" End.", False)]


def test_overlapping_golds_merge_into_one_mark():
    chunk = Chunk("c", "rice", RICE, 0, len(RICE))
    golds = [GoldSpan("rice", 0, 47, RICE[:47]), GoldSpan("rice", 40, 60, RICE[40:60])]
    assert gold_segments(chunk, golds) == [(RICE[:60], True), (RICE[60:], False)]


# -- main knobs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method", sorted(MAIN_KNOBS) + ["ssg-query-traversal"])
def test_every_main_knob_is_a_knob_of_its_method_and_its_range_is_valid(method):
    knob, config = main_knob(method), registered_config(method)
    assert knob.name in config.knobs()
    cast = type(getattr(config, knob.name))
    for value in (knob.minimum, knob.maximum):
        config.replace(**{knob.name: cast(value)})     # raises when out of the config's range
    assert knob.minimum <= getattr(config, knob.name) <= knob.maximum


# -- views of real methods -----------------------------------------------------------------------

def test_naive_view_ranks_the_gold_document_first_and_marks_the_gold_passage(explorer):
    v = explorer.view("tiny", "naive", "q1", k=2)
    top = v.hits[0]
    assert (top.doc_id, top.gold_doc, top.gold_context) == ("rice", True, True)   # one chunk per tiny document
    assert top.segments == [("Risotto alla milanese is coloured with saffron.", True), (RICE[47:], False)]
    assert v.answer == "saffron" and v.gold_doc_ids == ["rice"] and v.knob == ("size", 128)
    html = v.to_html()
    assert "<mark" in html and "Which spice colours risotto?" in html and "What naive did" in html


def test_typed_question_has_no_gold_and_bad_question_ids_are_named(explorer):
    v = explorer.view("tiny", "naive", "q1", text="wood-fired oven", k=1)
    assert v.question_id is None and v.hits[0].doc_id == "pizza" and not v.hits[0].gold_doc
    with pytest.raises(ValueError, match="no question 'q9'"):
        explorer.view("tiny", "naive", "q9")


def test_index_time_knob_builds_once_per_value(explorer):
    first = explorer.view("tiny", "naive", "q2", k=1, knob_value=32)
    again = explorer.view("tiny", "naive", "q2", k=1, knob_value=32.0)     # a slider may send a float
    assert not first.reused_index and again.reused_index and again.knob == ("size", 32)


def test_query_time_knob_reuses_the_built_sketch_graph(explorer):
    one = explorer.view("tiny", "sketch", "q2", k=2)
    two = explorer.view("tiny", "sketch", "q2", k=2, knob_value=2)
    assert two.reused_index and (one.knob, two.knob) == (("hops", 1), ("hops", 2))
    built, _, _ = explorer.retriever("sketch", "tiny")
    shifted, _, _ = explorer.retriever("sketch", "tiny", 2)
    assert shifted.graph is built.graph and built.config.hops == 1 and shifted.config.hops == 2
    what = dict(two.trace)
    assert {"query entities", "matched graph nodes", "graph facts (2 hop(s))", "merge"} <= set(what)


def test_unweaver_and_ssg_traces(explorer):
    u = explorer.view("tiny", "unweaver", "q1", k=2)
    assert "voting classes (similarity)" in dict(u.trace) and all(h.note.endswith("vote(s)") for h in u.hits)
    s = explorer.view("tiny", "ssg-query-traversal", "q1", k=2, knob_value=3)
    assert s.knob == ("max_sentences", 3) and dict(s.trace)["path"].startswith(dict(s.trace)["anchor window"])


def test_gralc_lines_place_hits_among_their_documents_chunks():
    # two chunks of "d" cut at char 10; a structure trace with boundary token 2 scoring 0.75
    chunks = [Chunk("d#0", "d", "x" * 10, 0, 10), Chunk("d#1", "d", "y" * 5, 10, 15)]
    trace = SimpleNamespace(score=np.array([0.1, 0.2, 0.75, 0.3]), boundaries=[2])
    retriever = SimpleNamespace(chunks=chunks, traces={"d": trace})
    hit = SimpleNamespace(chunk_id="d#1", doc_id="d", note="")
    lines = dict(trace_lines("gralc-structure", retriever, {"query_concepts": ["C1"]}, [hit]))
    assert hit.note == "chunk 2 of 2, chars 10–15"
    assert lines["boundaries in d"] == "1 cuts at chars 10; boundary scores at the cut tokens: 0.75"
    assert lines["query concepts"] == "C1"



def test_hybrid_hits_say_their_rank_in_each_fused_list_and_a_plugins_ranking_is_named():
    retriever = SimpleNamespace(chunks=[Chunk(f"d#{i}", "d", "x", i, i + 1) for i in range(3)])
    hits = [SimpleNamespace(chunk_id="d#0", note=""), SimpleNamespace(chunk_id="d#2", note="")]
    lines = dict(trace_lines("hybrid", retriever, {"vector_ranks": [1, None], "bm25_ranks": [2, 1]}, hits))
    assert [h.note for h in hits] == ["rank 1 by cosine, 2 by BM25", "rank - by cosine, 1 by BM25"]
    assert lines["ranking"] == "reciprocal rank fusion (cosine and BM25) over each of 3 chunks"
    assert dict(trace_lines("bm25", retriever, {}, []))["ranking"] == "BM25 of the query's words in each of 3 chunks"
    assert dict(trace_lines("mmr", retriever, {"pool": 3}, []))["ranking"] == "mmr's score of each of 3 chunks"

# -- the widget's logic (no browser: observers run in Python) -------------------------------------

def test_widget_shows_its_default_view_and_follows_its_controls(explorer):
    from rag_lab.explore.widget import explorer_widget

    box = explorer_widget(explorer, "tiny", "naive", k=2)
    c = box.controls
    assert "Which spice colours risotto?" in box.view_html and box.view_html.count("<tr>") == 3   # header + 2 hits
    bundle = box._repr_mimebundle_()
    assert bundle["text/html"] == box.view_html and "application/vnd.jupyter.widget-view+json" in bundle
    c["k"].value = 1
    assert c["view"].value.count("<tr>") == 2
    c["question"].value = "q2"
    assert "Where does pesto come from?" in c["view"].value
    c["text"].value = "wood-fired oven"
    assert "wood-fired oven" in c["view"].value and "reference answer" not in c["view"].value
    c["method"].value = "sketch"
    assert c["knob"].children[0].description == "graph hops" and "What sketch did" in c["view"].value


def test_explore_opens_the_widget_on_a_dataset_reusing_what_is_built(embedder):
    from rag_lab.evaluation.harness import build
    from rag_lab.explore.widget import explore
    from rag_lab.methods import get_retriever

    naive = build(get_retriever("naive", embedder=embedder), tiny().documents)
    box = explore(tiny(), naive, embedder=embedder, method="naive", k=1)
    # the first question, one hit (header + 1 row), from the index built above, not built again
    assert "Which spice colours risotto?" in box.view_html and box.view_html.count("<tr>") == 2
    assert "index reused" in box.view_html and "tiny" in box.controls["dataset"].options


def test_widget_first_view_is_made_without_its_output_area(explorer, monkeypatch):
    """Writing through an Output widget while the cell runs can hang papermill (explore_widget's
    docstring), so the first view must not touch it; later changes still use it."""
    import ipywidgets

    from rag_lab.explore.widget import explorer_widget

    entered = []
    monkeypatch.setattr(ipywidgets.Output, "__enter__", lambda self: entered.append("enter"))
    monkeypatch.setattr(ipywidgets.Output, "clear_output", lambda self, *a, **k: entered.append("clear"))
    box = explorer_widget(explorer, "tiny", "naive", k=2)
    assert entered == [] and "Which spice colours risotto?" in box.view_html
    box.controls["k"].value = 1
    assert entered == ["clear", "enter", "clear"] and box.view_html.count("<tr>") == 2

def test_widget_reports_what_cannot_run_instead_of_raising(explorer, embedder):
    from rag_lab.explore.widget import explorer_widget

    ex = Explorer(embedder=embedder, datasets=[]).keep(Dataset("empty", tiny().documents, []))
    box = explorer_widget(ex, "empty", "naive")
    assert "has no questions: type a query" in box.view_html
    box.controls["text"].value = "pizza"
    assert "pizza" in box.view_html and "<mark" not in box.view_html


def test_failed_view_renders():
    html = ExplorerView.failed("d", "m", 3, "", "ValueError: nope").to_html()
    assert "ValueError: nope" in html and "index reused" not in html


def test_flipped_questions_and_the_widget_that_opens_them(embedder):
    """naive ranks each tiny question's gold document first; a semantic index whose rankings are turned
    upside down ranks it last, so at k = 1 both questions flip, each found by naive only."""
    from rag_lab.core.types import Retrieval
    from rag_lab.explore.widget import ALL_QUESTIONS, explorer_widget

    explorer = Explorer(embedder=embedder, datasets=[]).keep(tiny())
    upside_down, _, _ = explorer.retriever("semantic", "tiny")
    ranked = upside_down.retrieve
    upside_down.retrieve = lambda query, k: Retrieval(query, list(reversed(ranked(query, 3).hits))[:k])
    flipped = explorer.flipped("tiny", "naive", "semantic", k=1)
    assert [(q, winner) for q, winner, _ in flipped] == [("q1", "naive"), ("q2", "naive")]
    assert flipped[0][2] == "Which spice colours risotto?"
    assert explorer.flipped("tiny", "naive", "naive", k=1) == []
    box = explorer_widget(explorer, "tiny", "naive", k=1)
    c = box.controls
    assert c["flipped"].value == ALL_QUESTIONS and len(c["question"].options) == 2
    c["flipped"].value = "semantic"
    assert [label for label, _ in c["question"].options][0].startswith("[naive finds gold] q1: Which spice")
    c["question"].value = "q2"
    assert "Where does pesto come from?" in c["view"].value
