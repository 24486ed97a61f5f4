"""Every registered method as a LangChain retriever inside an LCEL chain with a fake chat model."""
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LangChainDocument
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough

from rag_lab.evaluation import harness
from rag_lab.evaluation.langchain import as_langchain_retriever
from rag_lab.evaluation.retrievers import answer_contexts, context_blocks
from rag_lab.methods import available_methods, get_retriever
from rag_lab.core.types import Document

DOCS = [
    Document("pesto", "Pesto comes from Genoa in Liguria. It is made with basil, pine nuts, garlic and Pecorino "
                      "cheese. Cooks in Genoa pound the basil in a marble mortar.", title="Pesto"),
    Document("risotto", "Risotto alla milanese is coloured with saffron. Carnaroli rice keeps its bite when stirred "
                        "slowly with broth. Milan serves it with ossobuco.", title="Risotto"),
    Document("pizza", "Neapolitan pizza is baked in a wood-fired oven for about ninety seconds. Naples protects the "
                      "recipe with San Marzano tomatoes and mozzarella.", title="Pizza"),
]
QUESTION = "Which cheese goes into pesto from Genoa?"
ANSWER = "Pecorino."
K = 3


@pytest.fixture(scope="module")
def built():
    """Every registered method built once on the three documents (offline reasoner; a few seconds)."""
    return {name: harness.build(get_retriever(name), DOCS) for name in available_methods()}


class Recorder(BaseCallbackHandler):
    """Keeps what the retriever returned and the messages the chat model was sent."""

    def __init__(self):
        self.documents, self.prompts = [], []

    def on_retriever_end(self, documents, **kwargs):
        self.documents.extend(documents)

    def on_chat_model_start(self, serialized, messages, **kwargs):
        self.prompts.extend(m.content for batch in messages for m in batch)


def format_docs(docs):
    return "\n\n".join(d.page_content for d in docs)


@pytest.mark.parametrize("name", list(available_methods()))
def test_every_method_answers_inside_an_lcel_chain(built, name):
    retriever = as_langchain_retriever(built[name], k=K)
    assert isinstance(retriever, BaseRetriever)
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from the context only.\n\n{context}"),
                                               ("human", "{question}")])
    chain = ({"context": retriever | format_docs, "question": RunnablePassthrough()}
             | prompt | FakeListChatModel(responses=[ANSWER]) | StrOutputParser())
    seen = Recorder()
    assert chain.invoke(QUESTION, config={"callbacks": [seen]}) == ANSWER

    own = harness.retrieve(built[name], QUESTION, K)                   # the method's own ranking, asked directly
    expected = own.hits
    assert expected, f"{name} retrieved nothing for the question"
    blocks = context_blocks(built[name], own)                 # SKETCH's and KG-only's graph facts come first
    assert [d.page_content for d in seen.documents[:len(blocks)]] == [text for _, text in blocks]
    assert all(d.metadata["kind"] == d.metadata["via"] == kind and d.metadata["rank"] == 0
               for d, (kind, _) in zip(seen.documents, blocks))
    # what the chain was handed is what rag_lab's answers are handed
    assert [d.page_content for d in seen.documents] == answer_contexts(built[name], own)
    docs = seen.documents[len(blocks):]
    assert all(isinstance(d, LangChainDocument) for d in docs)
    assert [d.metadata["chunk_id"] for d in docs] == [h.chunk.id for h in expected]
    assert [d.metadata["rank"] for d in docs] == list(range(1, len(expected) + 1))
    for doc, hit in zip(docs, expected):
        assert doc.page_content == hit.chunk.text and doc.metadata["doc_id"] == hit.chunk.doc_id
        assert doc.metadata["score"] == pytest.approx(hit.score) and doc.metadata["via"] == hit.via
        assert doc.metadata["method"] == name
        if hit.chunk.is_span:   # spans point back into their document
            d = next(x for x in DOCS if x.id == doc.metadata["doc_id"])
            assert d.text[doc.metadata["start"]:doc.metadata["end"]] == doc.page_content
            assert "section_id" in doc.metadata
    # the chunk texts reached the prompt the chat model was given, with the question after them
    system, human = seen.prompts
    assert all(d.page_content in system for d in seen.documents) and human == QUESTION


@pytest.mark.parametrize("name", ["sketch", "kg"])
def test_graph_methods_hand_a_chain_their_facts(built, name):
    docs = as_langchain_retriever(built[name], k=K).invoke(QUESTION)
    facts = harness.retrieve(built[name], QUESTION, K).trace["facts"]
    assert facts, f"{name}: the question reaches no graph facts on these documents"
    first = docs[0]
    assert first.metadata["kind"] == "graph facts" and first.page_content == "Facts:\n" + "\n".join(facts)
    assert first.metadata["source_chunk_ids"] == harness.retrieve(built[name], QUESTION, K).trace["graph_chunk_ids"]
    assert all(d.metadata["rank"] >= 1 for d in docs[1:]) and len(docs) == 1 + len(docs[1:])


def test_unbuilt_retriever_and_bad_k_are_refused(built):
    with pytest.raises(RuntimeError, match="not built; build it"):
        as_langchain_retriever(get_retriever("naive"))
    with pytest.raises(ValueError, match="positive whole number"):
        as_langchain_retriever(built["naive"], k=0)


def test_retriever_works_through_batch_and_async(built):
    import asyncio

    retriever = as_langchain_retriever(built["naive"], k=2)
    batch = retriever.batch([QUESTION, "What colours risotto?"])
    assert [len(docs) for docs in batch] == [2, 2]
    assert batch[1][0].metadata["doc_id"] == "risotto"     # "risotto" and "coloured" appear only there
    docs = asyncio.run(retriever.ainvoke(QUESTION))
    assert [d.metadata["chunk_id"] for d in docs] == [d.metadata["chunk_id"] for d in batch[0]]
