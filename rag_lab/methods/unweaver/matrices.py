"""The matrices of UnWeaver's appendix, as scipy.sparse, so the extraction steps are literal products.

With m mentions (every entity the reasoner listed, chunk by chunk), n chunks and K classes:

- ``incidence`` E (m x n): E[i, j] = 1 iff mention i was extracted from chunk j. Each mention comes
  from exactly one chunk, so each row holds one 1.
- ``selection`` P_k (m x |I_k|): the columns of the m x m identity picked by the class's mention
  indices I_k — the paper's permutation submatrix. P_k^T picks the class's descriptions out of the
  description list, and E^T P_k 1 marks the chunks it occurs in.
- ``membership`` M (m x K): column k is P_k 1 (the class indicator), so all classes at once.
- ``chunk_class`` A (n x K): A[j, k] = 1 iff class k occurs in chunk j, i.e. (E^T M > 0).
- the class embedding matrix V (K x d) is dense (embeddings are dense); it lives on the retriever.

Retrieval keeps the columns of A for the top classes: the retrieval matrix R = A[:, top].
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def entity_chunk_incidence(chunk_of_mention: Sequence[int], n_chunks: int):
    """E as CSR int8: one row per mention with a 1 in its chunk's column."""
    from scipy import sparse

    chunk_of_mention = np.asarray(chunk_of_mention, dtype=np.int64)
    if chunk_of_mention.size and (chunk_of_mention.min() < 0 or chunk_of_mention.max() >= n_chunks):
        raise ValueError(f"mention chunk indices must lie in [0, {n_chunks}), got range "
                         f"[{chunk_of_mention.min()}, {chunk_of_mention.max()}]")
    m = len(chunk_of_mention)
    return sparse.csr_matrix((np.ones(m, dtype=np.int8), (np.arange(m), chunk_of_mention)), shape=(m, n_chunks))


def selection_matrix(mention_indices: Sequence[int], n_mentions: int):
    """P_k as CSC int8: the identity's columns ``mention_indices`` (in that order)."""
    from scipy import sparse

    idx = np.asarray(mention_indices, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n_mentions):
        raise ValueError(f"mention indices must lie in [0, {n_mentions}), got {idx.tolist()}")
    return sparse.csc_matrix((np.ones(len(idx), dtype=np.int8), (idx, np.arange(len(idx)))),
                             shape=(n_mentions, len(idx)))


def class_membership(classes_mentions: Sequence[Sequence[int]], n_mentions: int):
    """M (m x K) as CSR int8: column k = P_k 1. Every mention must belong to exactly one class."""
    from scipy import sparse

    rows = np.fromiter((i for members in classes_mentions for i in members), dtype=np.int64)
    cols = np.fromiter((k for k, members in enumerate(classes_mentions) for _ in members), dtype=np.int64)
    if len(rows) != n_mentions or len(set(rows.tolist())) != n_mentions:
        raise ValueError(f"classes must partition the {n_mentions} mentions; got {len(rows)} memberships "
                         f"over {len(set(rows.tolist()))} distinct mentions")
    return sparse.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)),
                             shape=(n_mentions, len(classes_mentions)))


def chunk_class_matrix(incidence, membership):
    """A = (E^T M > 0) as CSR int8 (n x K)."""
    counts = (incidence.T.astype(np.int32) @ membership.astype(np.int32)).tocsr()
    counts.data = (counts.data > 0).astype(np.int8)
    counts.eliminate_zeros()
    return counts.astype(np.int8)


def retrieval_matrix(chunk_class, class_indices: Sequence[int]):
    """R = A[:, top]: the chunk-class matrix restricted to the retrieved classes (CSC, n x len(top))."""
    return chunk_class.tocsc()[:, list(class_indices)]
