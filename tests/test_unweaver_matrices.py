"""The appendix's matrices on a three-chunk example worked by hand."""
from __future__ import annotations

import numpy as np
import pytest

from rag_lab.methods.unweaver.classes import form_classes, mentions_from_entities
from rag_lab.methods.unweaver.matrices import (chunk_class_matrix, class_membership, entity_chunk_incidence,
                                               retrieval_matrix, selection_matrix)
from rag_lab.reasoning import Entity

# chunk 0: Saffron, risotto      chunk 1: saffron, Abruzzo      chunk 2: Risottos, Piedmont, the Piedmont
PER_CHUNK = [[Entity("Saffron"), Entity("risotto")], [Entity("saffron"), Entity("Abruzzo")],
             [Entity("Risottos"), Entity("Piedmont"), Entity("the Piedmont")]]


@pytest.fixture()
def example():
    mentions, _ = mentions_from_entities(PER_CHUNK)
    return mentions, form_classes(mentions)


def test_incidence_by_hand(example):
    mentions, _ = example
    E = entity_chunk_incidence([m.chunk_index for m in mentions], 3)
    # one row per mention m0..m6, a single 1 in the column of its chunk
    assert E.toarray().tolist() == [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1]]
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        entity_chunk_incidence([0, 3], 3)


def test_selection_membership_and_chunk_class_by_hand(example):
    mentions, classes = example
    # classes: saffron {m0, m2}, risotto {m1, m4}, abruzzo {m3}, piedmont {m5, m6}
    assert [c.mentions for c in classes] == [[0, 2], [1, 4], [3], [5, 6]]
    E = entity_chunk_incidence([m.chunk_index for m in mentions], 3)
    P0 = selection_matrix(classes[0].mentions, len(mentions))
    # P_0 = columns 0 and 2 of the 7x7 identity
    assert P0.toarray().tolist() == [[1, 0], [0, 0], [0, 1], [0, 0], [0, 0], [0, 0], [0, 0]]
    # E^T P_0 1 marks the chunks saffron occurs in: chunks 0 and 1
    assert (E.T @ P0 @ np.ones(2)).tolist() == [1, 1, 0]
    M = class_membership([c.mentions for c in classes], len(mentions))
    assert M.toarray().tolist() == [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0],
                                    [0, 0, 0, 1], [0, 0, 0, 1]]
    # E^T M would count Piedmont twice in chunk 2 (two mentions); A keeps 1
    A = chunk_class_matrix(E, M)
    assert (E.T @ M).toarray()[2].tolist() == [0, 1, 0, 2]
    assert A.toarray().tolist() == [[1, 1, 0, 0],    # chunk 0: saffron, risotto
                                    [1, 0, 1, 0],    # chunk 1: saffron, abruzzo
                                    [0, 1, 0, 1]]    # chunk 2: risotto, piedmont
    # retrieval matrix for top classes (piedmont, saffron): columns 3 then 0
    assert retrieval_matrix(A, [3, 0]).toarray().tolist() == [[0, 1], [0, 1], [1, 0]]


def test_membership_must_partition_the_mentions():
    with pytest.raises(ValueError, match="partition"):
        class_membership([[0, 1], [1]], 2)
    with pytest.raises(ValueError, match="partition"):
        class_membership([[0]], 2)
