"""GraLC-RAG KG infusion: the GAT layer's attention and the token-level fusion."""
import networkx as nx
import numpy as np
import pytest
import torch

from rag_lab.evaluation import harness
from rag_lab.methods.gralc.infusion import ConceptEmbeddings, KGInfuser, adjacency_matrix, build_gat


def test_gat_attention_sums_to_one_per_node_and_matches_the_formula():
    g = nx.Graph([("a", "b"), ("b", "c")])
    nodes = ["a", "b", "c"]
    adj = torch.from_numpy(adjacency_matrix(g, nodes))
    x = torch.tensor([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.3, 0.3, 0.3]])
    layer = build_gat(3, 2, seed=7)
    out, alpha = layer(x, adj)
    a = alpha.detach().numpy()
    assert np.allclose(a.sum(axis=1), 1.0)
    assert a[0, 2] == 0 and a[2, 0] == 0 and (a[adj.numpy()] > 0).all()   # only over N(j), self included
    # Equation (2) by hand for node a: N(a) = {a, b}
    W, vec = layer.W.detach().numpy(), layer.a.detach().numpy()[:, 0]
    wx = x.numpy() @ W.T
    e = [np.concatenate([wx[0], wx[k]]) @ vec for k in (0, 1)]
    e = [v if v > 0 else 0.2 * v for v in e]
    expected = np.exp(e) / np.exp(e).sum()
    assert a[0, :2] == pytest.approx(expected, rel=1e-5)
    # Equation (3): u'_a = ELU(sum_k alpha_ak W u_k)
    h = expected[0] * wx[0] + expected[1] * wx[1]
    assert out[0].detach().numpy() == pytest.approx(np.where(h > 0, h, np.expm1(h)), rel=1e-5)
    # seeded: the same seed gives the same weights
    assert torch.equal(build_gat(3, 2, seed=7).W, layer.W)


class FakeEncoder:
    """Concept 'embeddings' fixed by name (unit vectors), no model needed."""

    VECS = {"alpha": [1.0, 0.0, 0.0, 0.0], "beta": [0.0, 1.0, 0.0, 0.0]}

    def encode(self, texts):
        return np.array([self.VECS[t] for t in texts], dtype=np.float32)

    def count_tokens(self, texts):
        return len(texts)


def test_fusion_adds_lambda_mlp_to_mention_tokens_only():
    g = nx.Graph()
    g.add_node("C1", name="alpha")
    g.add_node("C2", name="beta")
    g.add_edge("C1", "C2")
    infuser = KGInfuser(ConceptEmbeddings(FakeEncoder(), 4), token_dim=4, lam=0.1, seed=0, concept_norm="unit")
    h = np.ones((5, 4), dtype=np.float32)
    out = infuser.infuse(h, [(1, 3, "C1")], g)
    delta = infuser.concept_updates(g)["C1"]
    assert np.allclose(out[[0, 3, 4]], 1.0)                  # tokens outside the mention are unchanged
    assert np.allclose(out[1], 1.0 + 0.1 * delta) and np.allclose(out[2], out[1])
    assert np.linalg.norm(delta) > 0
    assert np.array_equal(KGInfuser(ConceptEmbeddings(FakeEncoder(), 4), 4, 0.0, 0).infuse(h, [(1, 3, "C1")], g), h)


def test_concept_model_of_another_size_is_projected_with_pca():
    # MiniLM stands in for "another model" (384-d) projected to 8 dimensions fitted on 10 names
    from rag_lab.core.embedding import default_model_path

    names = ["kidney", "heart", "liver", "metformin", "insulin", "statin", "stroke", "anemia", "gout", "asthma"]
    ce = ConceptEmbeddings(None, 8, model=default_model_path(), fit_texts=names)
    v = ce.vectors(["kidney", "heart failure"])
    assert v.shape == (2, 8) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="at least 400 vocabulary names"):
        ConceptEmbeddings(None, 400, model=default_model_path(), fit_texts=names)


def test_token_shift_by_hand():
    # token 1 turns from (0, 1) to (1, 1): cos = 1/sqrt(2), |h' - h| / |h| = 1; token 2 is in a mention but unchanged;
    # token 0 is outside every mention. Overlapping mentions count token 1 once.
    from rag_lab.methods.gralc.infusion import TokenShift, token_shift

    h = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]], dtype=np.float32)
    h2 = np.array([[5.0, 5.0], [1.0, 1.0], [3.0, 4.0]], dtype=np.float32)   # token 0 changed but is not a mention
    s = token_shift(h, h2, [(1, 2, "C"), (1, 3, "D")])
    assert (s.tokens, s.infused) == (3, 2)
    assert s.mention_cosine == pytest.approx((2 ** -0.5 + 1) / 2)
    assert s.all_cosine == pytest.approx((2 ** -0.5 + 1 + 1) / 3)
    assert s.relative_change == pytest.approx(0.5)
    both = s + token_shift(h, h, [])
    assert (both.tokens, both.infused) == (6, 2) and both.mention_cosine == pytest.approx(s.mention_cosine)
    assert TokenShift().mention_cosine == 1.0 and TokenShift().relative_change == 0.0
    with pytest.raises(ValueError, match="differ in shape"):
        token_shift(h, h[:2], [])


def test_infused_documents_record_their_token_shift(embedder):
    from rag_lab.methods import get_retriever
    from rag_lab.core.types import Document

    doc = Document("d", "Empagliflozin slowed chronic kidney disease in adults with type 2 diabetes mellitus.")
    shifts = {}
    for lam in (0.0, 0.1, 0.5):
        r = harness.build(get_retriever("gralc-kg", embedder=embedder, lam=lam, min_tokens=4, max_tokens=16), [doc])
        shifts[lam] = r.doc_info["d"]["shift"]
    assert shifts[0.0].infused > 0 and shifts[0.0].mention_cosine == pytest.approx(1.0)
    # a larger λ turns the mention tokens further (cosine falls) and moves them further
    assert 1.0 > shifts[0.1].mention_cosine > shifts[0.5].mention_cosine
    assert 0 < shifts[0.1].relative_change < shifts[0.5].relative_change
