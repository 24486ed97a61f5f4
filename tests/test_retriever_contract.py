"""The Retriever contract is four members: ``name``, ``config``, ``build(documents)``, ``retrieve(query, k)``.
A class with those four and no base class, registered like a plugin, runs through ``evaluate`` and gives the
metric rows worked out by hand below; one missing a member is refused with an error naming it; the harness (not
the class) times, checks and labels; the optional abilities are asked for with isinstance."""
import re
from dataclasses import dataclass

import pytest

from rag_lab.core.configs import Config
from rag_lab.core.types import Chunk, Cost, Dataset, Document, Hit, Question, Retrieval
from rag_lab.evaluation import harness, retrievers
from rag_lab.evaluation.retrievers import (BatchedQueries, ContextBlocks, DocumentWork, PlannedCalls, Retriever,
                                           answer_contexts, nested, planned_llm_calls)


@dataclass(frozen=True)
class OverlapConfig(Config):
    min_shared: int = 1      # a document sharing fewer words with the query is not returned


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


class WordOverlap:
    """Ranks whole documents by the number of distinct words they share with the query, ties by document id."""

    name = "word-overlap"

    def __init__(self, config: OverlapConfig | None = None):
        self.config = config or OverlapConfig()

    def build(self, documents):
        self.chunks = [Chunk(d.id, d.id, d.text, 0, len(d.text)) for d in documents]
        return self

    def retrieve(self, query, k):
        shared = {c.id: len(words(c.text) & words(query)) for c in self.chunks}
        ranked = sorted((c for c in self.chunks if shared[c.id] >= self.config.min_shared),
                        key=lambda c: (-shared[c.id], c.id))
        return Retrieval(query, [Hit(c, float(shared[c.id]), "words") for c in ranked[:k]], {}, Cost())


DOCS = [Document("pesto", "Pesto comes from Genoa."), Document("ragu", "Ragu comes from Bologna."),
        Document("risotto", "Risotto is yellow.")]
# q1 "Where does pesto come from?": pesto shares {pesto, from} (2), ragu {from} (1), risotto none -> [pesto, ragu]
# q2 "Does pesto come from Bologna?": pesto {pesto, from} (2), ragu {from, bologna} (2): the tie goes to the
#    smaller id -> [pesto, ragu], the gold ragu second
DATA = Dataset("three_dishes", DOCS, [Question("q1", "Where does pesto come from?", gold_doc_ids=["pesto"]),
                                      Question("q2", "Does pesto come from Bologna?", gold_doc_ids=["ragu"])])


@pytest.fixture
def registered(monkeypatch):
    """``word-overlap`` registered as a plugin registers a method; the lab's registry is left as it was."""
    monkeypatch.setattr(retrievers, "REGISTRY", dict(retrievers.REGISTRY))
    retrievers.register("word-overlap", "test_retriever_contract:WordOverlap", "shared words", OverlapConfig())


def value(df, metric, k):
    """question id -> the value of ``metric`` at ``k``."""
    return df[(df.metric == metric) & (df.k == k)].set_index("question_id")["value"].to_dict()


def test_a_four_member_class_with_no_base_runs_through_evaluate(registered):
    made = retrievers.get_retriever("word-overlap")
    assert isinstance(made, WordOverlap) and isinstance(made, Retriever) and made.config == OverlapConfig()
    df = harness.evaluate(["word-overlap"], DATA, ks=(1, 2), progress=False)
    assert value(df, "doc_mrr", 1) == {"q1": 1.0, "q2": 0.0}
    assert value(df, "doc_mrr", 2) == {"q1": 1.0, "q2": 0.5}
    assert value(df, "doc_recall", 1) == {"q1": 1.0, "q2": 0.0}
    assert value(df, "doc_recall", 2) == {"q1": 1.0, "q2": 1.0}
    assert value(df, "doc_precision", 2) == {"q1": 0.5, "q2": 0.5}     # one gold document in two hits
    costs = df[df.k.isna()].set_index(["question_id", "metric"])["value"]
    assert (costs.xs("latency_seconds", level="metric") > 0).all()        # timed by the harness, not the class
    assert (costs.xs("query_llm_tokens", level="metric") == 0).all()
    assert set(df["method"]) == {"word-overlap"} and df.attrs["methods"]["word-overlap"]["nested_ranking"] is False


def test_a_knob_given_to_the_registry_reaches_the_class(registered):
    strict = retrievers.get_retriever("word-overlap", min_shared=2)
    harness.build(strict, DOCS)
    # q1 with two shared words required: only pesto (2) is left, ragu (1) is not returned
    assert [h.chunk.id for h in harness.retrieve(strict, "Where does pesto come from?", 2).hits] == ["pesto"]


def test_the_harness_times_the_build_and_knows_it_cannot_store_this_index():
    built = harness.build(WordOverlap(), DOCS)
    assert built.build_cost.seconds > 0 and built.index_reuse == {"reused": False, "key": None, "entry": None}
    table = harness.build_costs({"word-overlap": built}).set_index("metric")["value"]
    assert table["chunks"] == 3.0 and table["build_llm_calls"] == 0.0


def test_the_harness_checks_the_query_for_every_method():
    built = harness.build(WordOverlap(), DOCS)
    with pytest.raises(ValueError, match="word-overlap: the query must be a non-empty string"):
        harness.retrieve(built, "  ", 2)
    with pytest.raises(ValueError, match="word-overlap: k must be positive, got 0"):
        harness.retrieve(built, "pesto", 0)


class NoRetrieve:
    name = "half"
    config = None

    def build(self, documents):
        return self


def test_a_class_missing_a_member_is_refused_naming_it():
    with pytest.raises(TypeError, match=r"'half' \(NoRetrieve\) does not honour the Retriever contract .* "
                                        r"missing retrieve\(\)$"):
        harness.evaluate([NoRetrieve()], DATA, ks=(1,), progress=False)
    with pytest.raises(TypeError, match=r"missing retrieve\(\)$"):
        harness.build(NoRetrieve(), DOCS)
    assert not isinstance(NoRetrieve(), Retriever)

    class Nameless:
        def build(self, documents):
            return self

        def retrieve(self, query, k):
            return Retrieval(query, [])

    with pytest.raises(TypeError, match=r"'Nameless' \(Nameless\) .* missing name, config$"):
        harness.build(Nameless(), DOCS)


def test_optional_abilities_fall_back_for_a_method_without_them():
    built = harness.build(WordOverlap(), DOCS)
    assert not any(isinstance(built, p) for p in (DocumentWork, BatchedQueries, PlannedCalls, ContextBlocks))
    found = harness.retrieve(built, "Where does pesto come from?", 2)
    assert answer_contexts(built, found) == ["Pesto comes from Genoa.", "Ragu comes from Bologna."]   # its hits' texts
    assert planned_llm_calls(built, DOCS) == [] and nested(built) is False


def test_the_labs_methods_have_the_abilities_they_declare():
    sketch, bm25 = retrievers.get_retriever("sketch"), retrievers.get_retriever("bm25")
    assert isinstance(sketch, Retriever) and isinstance(bm25, Retriever)
    assert all(isinstance(sketch, p) for p in (DocumentWork, BatchedQueries, PlannedCalls, ContextBlocks))
    assert not any(isinstance(bm25, p) for p in (DocumentWork, BatchedQueries, PlannedCalls, ContextBlocks))
    assert nested(bm25) and not nested(sketch)
