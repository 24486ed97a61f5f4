"""The worked example's reading, on hand-made chunks and answers: gold passages (not documents) marked
and numbered, and the answer read against its reference and its context."""
import pytest

from rag_lab.core.types import Chunk, Document, Hit, Question, Retrieval
from rag_lab.evaluation.worked import answer_pieces, answer_reading, gold_passages_held, marked_text, worked_answer, worked_hits
from rag_lab.evaluation.metrics import locate_contexts

RICE = "Risotto alla milanese is coloured with saffron. Carnaroli rice keeps its bite. It is stirred for long."
PASTA = "Pesto comes from Genoa. It is made with basil."
DOCS = {"rice": Document("rice", RICE, "Rice"), "pasta": Document("pasta", PASTA, "Pasta")}
Q = Question("q", "Which spice colours risotto, and where is pesto from?", "saffron", ["rice", "pasta"],
             ["Risotto alla milanese is coloured with saffron.", "Pesto comes from Genoa."])


def test_gold_passages_are_marked_and_numbered_not_gold_documents():
    golds = locate_contexts(Q, DOCS)     # gold 1 = RICE[0:47], gold 2 = PASTA[0:23]
    first = Chunk("rice#0", "rice", RICE[:78], 0, 78)          # holds gold 1 whole
    second = Chunk("rice#1", "rice", RICE[48:], 48, len(RICE))  # the gold document, but none of its gold passage
    pesto = Chunk("pasta#0", "pasta", PASTA, 0, len(PASTA))    # holds gold 2
    assert gold_passages_held(first, golds) == [1] and gold_passages_held(second, golds) == [] \
        and gold_passages_held(pesto, golds) == [2]
    assert marked_text(first, golds) == "⟦Risotto alla milanese is coloured with saffron.⟧ Carnaroli rice keeps its bite."
    assert marked_text(second, golds) == RICE[48:]
    lines = worked_hits([second, first], Q, DOCS)
    assert lines[1].startswith("  P1 (rice; in rank 2): Risotto alla")
    assert lines[2].startswith("  P2 (pasta; NOT in the top 2): Pesto")
    assert lines[3] == f"\n#1 rice#1 — no gold passage (a gold document, other passages):\n{RICE[48:]}"
    assert lines[4].startswith("\n#2 rice#0 — holds P1:\n⟦Risotto")
    long = Chunk("rice#2", "rice", " ".join([RICE] * 4), 0, 4 * len(RICE) + 3)   # 4 x 102 + 3 = 411 characters
    text = worked_hits([long], Q, DOCS)[-1].split(":\n", 1)[1]
    assert max(map(len, text.split("\n"))) <= 120 and text.replace("\n", " ") == marked_text(long, golds)
    no_gold = Question("n", "?", None, [], [])
    assert worked_hits([first], no_gold, DOCS) == ["This question lists no gold passages: nothing to mark."]


def test_answer_reading_says_match_and_paste():
    contexts = ["Saffron colours risotto. It is yellow.", "Pesto comes from Genoa. Basil is its base."]
    # one sentence from each context: copied word for word and spliced. Token F1 by hand: the answer has
    # 7 normalised tokens (saffron colours risotto pesto comes from genoa), the reference 3 (genoa and
    # basil), 1 in common -> P 1/7, R 1/3, F1 = 2 * (1/21) / (1/7 + 1/3) = 0.20
    spliced = "Saffron colours risotto. Pesto comes from Genoa."
    assert [i for _, i in answer_pieces(spliced, contexts)] == [(0,), (1,)]
    said = answer_reading(spliced, "genoa and basil", contexts, ["naive#3", "naive#7"])
    assert said.startswith("The answer does not match the reference (exact match 0; token F1 against it 0.20)")
    assert "its 2 sentences are copied from naive#3 and naive#7 and spliced together" in said
    assert answer_reading("Saffron colours risotto.", "saffron colours risotto", contexts).startswith(
        "The answer matches the reference (exact match 1")
    assert "pasted word for word from context 1" in answer_reading("Saffron colours risotto. It is yellow.", None, contexts)
    held = answer_reading("Saffron colours risotto.", "saffron", contexts)
    assert held.startswith("The answer holds the reference's words in order but adds more (exact match 0; token F1 "
                           "against it 0.50)")          # P 1/3, R 1 -> F1 0.5
    assert answer_reading("Rice is boiled. It is yellow.", "x", contexts).endswith(
        "1 of its 2 sentences are copied word for word from context 1.")
    assert answer_reading("Rice is boiled.", "x", contexts).endswith(
        "none of its sentences appears word for word in the context.")
    assert answer_reading("", "x", contexts).startswith("No answer was given")
    # a sentence cut by a chunk boundary: "It is yellow" ends context 1 without its stop, "and bright."
    # opens context 2; the answer joins them at the space: both fragments found, one in each context
    cut = ["Saffron colours risotto. It is yellow", "and bright. Pesto comes from Genoa."]
    assert [i for _, i in answer_pieces("Saffron colours risotto. It is yellow and bright.", cut)] == [(0,), (0, 1)]
    said = answer_reading("Saffron colours risotto. It is yellow and bright.", "x", cut, ["a#1", "a#2"])
    assert said.endswith("it is pasted word for word: its 2 sentences are copied from a#1 and a#2 and spliced together; "
                         "one sentence joins the end of a#1 to the start of a#2: two separate contexts read as "
                         "one sentence.")
    # a fragment found inside a context but not at its end is not taken for a cut sentence
    assert answer_pieces("It is yellow and bright.", ["It is yellow. More", "and bright."]) == [("It is yellow and bright.", ())]
    with pytest.raises(ValueError, match="context_names"):
        answer_reading("a", "b", contexts, ["one"])


def test_worked_answer_names_a_block_by_its_kind_and_hits_by_id():
    from types import SimpleNamespace

    from rag_lab.core.types import Hit, Retrieval

    rice = Chunk("rice#0", "rice", RICE[:47], 0, 47)
    retrieval = Retrieval("q", [Hit(rice, 0.9, "vector")])

    class Facts:                      # a retriever handing a facts block before its hits (as SKETCH does)
        def context_blocks(self, r):
            return [("graph facts", "Facts:\nrisotto colour saffron")]

        def answer_contexts(self, r):
            return ["Facts:\nrisotto colour saffron", *(h.chunk.text for h in r.hits)]

    echo = SimpleNamespace(answer=lambda q, contexts: contexts[1])   # pastes the chunk back
    answer, said = worked_answer(Facts(), echo, Q, retrieval)
    assert answer == RICE[:47] and said.endswith("it is pasted word for word from rice#0.")
    assert said.startswith("The answer holds the reference's words in order but adds more")   # reference "saffron"
    echo_facts = SimpleNamespace(answer=lambda q, contexts: contexts[0])
    assert worked_answer(Facts(), echo_facts, Q, retrieval)[1].endswith("pasted word for word from the graph facts block.")


def test_worked_comparison_sets_retrievals_side_by_side_with_gold_passages_numbered():
    from rag_lab.core.types import Hit, Retrieval
    from rag_lab.evaluation.worked import NOT_ELECTED, worked_comparison

    doc = Document("d", "First gold sentence here. Filler text. Second gold sentence there.", "D")
    question = Question("q", "?", gold_doc_ids=["d"],
                        gold_contexts=["First gold sentence here.", "Second gold sentence there."])
    first = Chunk("d#0", "d", "First gold sentence here.", 0, 25)
    filler = Chunk("d#1", "d", "Filler text.", 26, 38)
    second = Chunk("d#2", "d", "Second gold sentence there.", 39, 66)
    retrievals = {"a": Retrieval("?", [Hit(filler, 0.9), Hit(first, 0.8)]), "b": Retrieval("?", [Hit(second, 0.7)])}
    passages, hits = worked_comparison(retrievals, question, [doc])
    # worked by hand: P1 is held by a's rank 2 only, P2 by b's rank 1 only
    assert passages.loc["P1", "a"] == "rank 2" and passages.loc["P1", "b"] == NOT_ELECTED
    assert passages.loc["P2", "a"] == NOT_ELECTED and passages.loc["P2", "b"] == "rank 1"
    assert list(hits["a"]) == ["d#1", "d#0 ✓ P1"] and list(hits["b"]) == ["d#2 ✓ P2", ""]


def test_answer_prompt_is_the_answer_job_over_what_the_method_hands_over():
    from types import SimpleNamespace
    from rag_lab.evaluation.worked import answer_prompt

    retriever = SimpleNamespace(context_blocks=lambda retrieval: [("graph facts", "FACTS: pesto - comes from - Genoa")])
    retrieval = Retrieval("q", [Hit(Chunk("c", "d", "x" * 400, 0, 400), 1.0)])
    prompt = answer_prompt(retriever, Q, retrieval, context_chars=50)   # the block, then the hit
    assert "[1] FACTS: pesto - comes from - Genoa" in prompt and "[2] " + "x" * 49 + "…" in prompt
    assert prompt.index("CONTEXTS:") < prompt.index("QUESTION: Which spice colours risotto") and '"answer"' in prompt
