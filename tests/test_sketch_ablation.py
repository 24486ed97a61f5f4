"""SKETCH's graph radius ablation on a hand-made graph: a second hop reaches Milan through the
risotto, so the places document enters KG-only's ranking only at hops = 2."""
import pytest

from rag_lab.evaluation import harness
from rag_lab.core.types import Dataset, Question
from rag_lab.methods import get_retriever
from rag_lab.methods.sketch.ablation import hops_ablation
from rag_lab.reasoning import Triple
from sketch_fakes import TableReasoner
from test_sketch import DOCS, QUERY, TRIPLES

# as test_sketch's graph, plus risotto -[made_in]-> Milan (from the dishes document)
LINKED = {**TRIPLES, "Cooks in Milan": [Triple("risotto alla milanese", "made_in", "Milan")]}


def test_a_second_hop_reaches_the_places_document(embedder):
    reasoner = TableReasoner(LINKED, {QUERY: ["saffron"]})
    kg = harness.build(get_retriever("kg", reasoner=reasoner, embedder=embedder), DOCS, reuse=False)
    data = Dataset("toy", DOCS, [Question("q", QUERY, gold_doc_ids=["places"])])
    table = hops_ablation({"kg": kg}, data, (1, 2), k=3)
    one, two = table.loc[("kg", 1)], table.loc[("kg", 2)]
    # hops 1: saffron (distance 0) and its neighbours risotto, Abruzzo: dishes 1 + 1/2, spices 1 + 1/2,
    # places unreached -> recall 0; facts: the two saffron relations
    assert one["doc_recall"] == 0.0 and one["facts per question"] == 2 and one["graph chunks per question"] == 2
    # hops 2 adds Milan (distance 2, weight 1/3): dishes 1 + 1/2 + 1/3, spices 1.5, places 1/3 ->
    # places third: MRR 1/3, recall 1; the made_in relation is a third fact
    assert two["doc_recall"] == 1.0 and two["doc_mrr"] == pytest.approx(1 / 3)
    assert two["facts per question"] == 3 and two["graph chunks per question"] == 3
    assert two["top 3 changed vs hops = 1"] == 1.0 and one["top 3 changed vs hops = 1"] == 0.0
    # the variants share the built graph: nothing was rebuilt (3 triples calls, once)
    assert reasoner.usage.per_job["triples"].llm_calls == 3
    assert kg.config.hops == 1 and kg.config.radius_sentence().startswith("SKETCH and KG-only read the graph 1 hop(s) out")
    with pytest.raises(ValueError, match="variant can change only"):
        kg.variant(chunk_size=50)
    with pytest.raises(ValueError, match="distinct non-negative"):
        hops_ablation({"kg": kg}, data, (1, 1))
