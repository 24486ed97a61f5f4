"""Knowledge-graph infusion: concept embeddings -> one GAT layer over G_k -> MLP -> added to
the token embeddings of each mention (h'_i = h_i + λ·MLP(u'_j)).

Own code in torch (a single-head GAT layer is a few lines; no graph library is needed).
The paper calls W "learnable" and λ a gate "initialised to 0.1" (§3.1.4) but gives no training
objective, data or schedule for W, a, the MLP or λ (§3.1.4 and the implementation notes of
§3.2.3 are silent), so ours stay at their seeded initialisation (Xavier-uniform): the infusion
is a fixed, random, concept-dependent perturbation of the mention tokens, scaled by λ.
``token_shift`` measures how far it moves them (the notebook's λ ablation). Concept embeddings come from the retriever's own
embedder by default (the names embedded as sentences); another model can be named, and its
vectors are projected with PCA to the token dimension when the sizes differ (the paper
projects 768-d SapBERT vectors to 384 this way).

Scale: sentence embeddings are unit-length while MiniLM's token states have norms near 5;
the paper's raw SapBERT vectors sit on the scale of token states. By default
(``concept_norm="tokens"``) concept vectors are therefore rescaled to the mean token norm of
the document before the GAT layer; ``"unit"`` keeps them unit-length, which makes the
infusion about five times weaker.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .concept_graph import node_text


def _torch():
    import torch
    return torch


def build_gat(in_dim: int, out_dim: int, seed: int = 0, negative_slope: float = 0.2):
    """A seeded single-head GAT layer (Veličković et al.), returned as a torch Module."""
    torch = _torch()

    class GATLayer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(seed)
            self.W = torch.nn.Parameter(torch.empty(out_dim, in_dim))
            self.a = torch.nn.Parameter(torch.empty(2 * out_dim, 1))
            torch.nn.init.xavier_uniform_(self.W, generator=g)
            torch.nn.init.xavier_uniform_(self.a, generator=g)
            self.negative_slope = negative_slope

        def forward(self, x, adjacency):
            """x (n, in_dim); adjacency (n, n) bool incl. self loops -> (u' (n, out_dim), alpha (n, n))."""
            wx = x @ self.W.T                                   # W u_k for every node
            d = wx.shape[1]
            left = wx @ self.a[:d]                              # a_1^T W u_j
            right = wx @ self.a[d:]                             # a_2^T W u_k
            e = torch.nn.functional.leaky_relu(left + right.T, self.negative_slope)
            e = e.masked_fill(~adjacency, float("-inf"))
            alpha = torch.softmax(e, dim=1)                     # over N(j), row j
            return torch.nn.functional.elu(alpha @ wx), alpha

    return GATLayer()


def build_mlp(in_dim: int, out_dim: int, seed: int = 0):
    """MLP: R^{d'} -> R^d (Linear, ReLU, Linear), seeded Xavier weights, zero biases."""
    torch = _torch()
    g = torch.Generator().manual_seed(seed + 1)
    mlp = torch.nn.Sequential(torch.nn.Linear(in_dim, out_dim), torch.nn.ReLU(), torch.nn.Linear(out_dim, out_dim))
    for layer in (mlp[0], mlp[2]):
        torch.nn.init.xavier_uniform_(layer.weight, generator=g)
        torch.nn.init.zeros_(layer.bias)
    return mlp


def adjacency_matrix(graph, nodes: Sequence[str]) -> np.ndarray:
    """Boolean adjacency over ``nodes`` with self loops (N(j) includes j, as in GAT)."""
    index = {n: i for i, n in enumerate(nodes)}
    adj = np.eye(len(nodes), dtype=bool)
    for a, b in graph.edges():
        adj[index[a], index[b]] = adj[index[b], index[a]] = True
    return adj


@dataclass(frozen=True)
class TokenShift:
    """How far infusion moved one document's token vectors (sums, so documents add up with ``+``).

    ``cosine_sum`` adds cos(h'_i, h_i) over the infused tokens (those inside a mention);
    ``relative_sum`` adds ‖h'_i − h_i‖ / ‖h_i‖ over the same tokens."""

    tokens: int = 0
    infused: int = 0
    cosine_sum: float = 0.0
    relative_sum: float = 0.0

    def __add__(self, other: "TokenShift") -> "TokenShift":
        return TokenShift(self.tokens + other.tokens, self.infused + other.infused,
                          self.cosine_sum + other.cosine_sum, self.relative_sum + other.relative_sum)

    @property
    def mention_cosine(self) -> float:
        """Mean cosine between infused and original vectors over the mention tokens (1.0 when none)."""
        return self.cosine_sum / self.infused if self.infused else 1.0

    @property
    def all_cosine(self) -> float:
        """The same mean over every token (tokens outside mentions are unchanged: cosine 1)."""
        return (self.cosine_sum + self.tokens - self.infused) / self.tokens if self.tokens else 1.0

    @property
    def relative_change(self) -> float:
        """Mean ‖h' − h‖ / ‖h‖ over the mention tokens (0.0 when none)."""
        return self.relative_sum / self.infused if self.infused else 0.0


def token_shift(original: np.ndarray, infused: np.ndarray, token_mentions: Sequence[tuple[int, int, str]]) -> TokenShift:
    """Compare one document's token vectors before and after infusion, over the tokens of its mentions
    (overlapping mentions count each token once)."""
    if original.shape != infused.shape:
        raise ValueError(f"original and infused token embeddings differ in shape: {original.shape} vs {infused.shape}")
    mask = np.zeros(len(original), dtype=bool)
    for a, b, _ in token_mentions:
        mask[a:b] = True
    h, h2 = original[mask].astype(np.float64), infused[mask].astype(np.float64)
    norms = np.maximum(np.linalg.norm(h, axis=1), 1e-12)
    cos = (h * h2).sum(axis=1) / (norms * np.maximum(np.linalg.norm(h2, axis=1), 1e-12))
    rel = np.linalg.norm(h2 - h, axis=1) / norms
    return TokenShift(len(original), int(mask.sum()), float(cos.sum()), float(rel.sum()))


class ConceptEmbeddings:
    """Vectors for concept and semantic-type nodes, by node text, computed once and memoised."""

    def __init__(self, embedder, dim: int, model: str | None = None, fit_texts: Sequence[str] = ()):
        self.dim = dim
        self.model = model
        if model is None:
            self.encoder = embedder
        else:
            from ...core.embedding import Embedder
            self.encoder = Embedder(model)
        self._vectors: dict[str, np.ndarray] = {}
        self._pca = None
        self.tokens = 0
        if model is not None and fit_texts:
            self._fit_projection(list(fit_texts))

    def _fit_projection(self, texts: list[str]) -> None:
        from sklearn.decomposition import PCA

        raw = self.encoder.encode(texts)
        self.tokens += self.encoder.count_tokens(texts)
        if raw.shape[1] != self.dim:
            if min(raw.shape) < self.dim:
                raise ValueError(f"concept model {self.model}: PCA to {self.dim} dimensions needs at least "
                                 f"{self.dim} vocabulary names, got {raw.shape[0]}")
            self._pca = PCA(n_components=self.dim, random_state=0).fit(raw)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            raw = self.encoder.encode(todo)
            self.tokens += self.encoder.count_tokens(todo)
            if raw.shape[1] != self.dim:
                if self._pca is None:
                    raise ValueError(f"concept model {self.model} gives {raw.shape[1]}-d vectors but tokens are "
                                     f"{self.dim}-d; fit the PCA projection on the vocabulary first")
                raw = self._pca.transform(raw).astype(np.float32)
                raw /= np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)
            self._vectors.update(zip(todo, raw))
        return np.stack([self._vectors[t] for t in texts]).astype(np.float32) if texts else \
            np.zeros((0, self.dim), np.float32)


class KGInfuser:
    """Holds one seeded GAT layer and MLP; ``infuse`` applies them to one document."""

    def __init__(self, concept_embeddings: ConceptEmbeddings, token_dim: int, lam: float, seed: int,
                 hidden: int | None = None, concept_norm: str = "tokens"):
        if concept_norm not in ("tokens", "unit"):
            raise ValueError(f"concept_norm must be 'tokens' or 'unit', got {concept_norm!r}")
        self.concepts = concept_embeddings
        self.lam = lam
        self.concept_norm = concept_norm
        hidden = hidden or concept_embeddings.dim
        self.gat = build_gat(concept_embeddings.dim, hidden, seed)
        self.mlp = build_mlp(hidden, token_dim, seed)

    def concept_updates(self, graph, scale: float = 1.0) -> dict[str, np.ndarray]:
        """MLP(u'_j) for every node of the subgraph (u' from the GAT layer over scale·u)."""
        torch = _torch()
        nodes = list(graph.nodes)
        if not nodes:
            return {}
        u = torch.from_numpy(scale * self.concepts.vectors([node_text(graph, n) for n in nodes]))
        adj = torch.from_numpy(adjacency_matrix(graph, nodes))
        with torch.inference_mode():
            u_prime, _ = self.gat(u, adj)
            delta = self.mlp(u_prime).numpy()
        return dict(zip(nodes, delta))

    def infuse(self, embeddings: np.ndarray, token_mentions: Sequence[tuple[int, int, str]], graph) -> np.ndarray:
        """h'_i = h_i + λ·MLP(u'_j) for every token i inside the span (a, b) of a mention of concept j."""
        out = embeddings.copy()
        if not token_mentions or self.lam == 0:
            return out
        scale = float(np.linalg.norm(embeddings, axis=1).mean()) if self.concept_norm == "tokens" else 1.0
        updates = self.concept_updates(graph, scale)
        for a, b, concept_id in token_mentions:
            out[a:b] += self.lam * updates[concept_id]
        return out
