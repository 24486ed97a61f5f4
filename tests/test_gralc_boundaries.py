"""GraLC-RAG boundary detection on hand-made traces: signals, peaks over τ, size limits."""
import numpy as np
import pytest

from rag_lab.methods.gralc.boundaries import combine, entity_signal, select_boundaries, semantic_signal, \
    spans_from_boundaries, structural_signal
from rag_lab.datasets.structure import Unit


def trace():
    s = np.zeros(20)
    s[5], s[7], s[12], s[15], s[2] = 0.8, 0.9, 0.5, 0.2, 0.95
    return s


def test_peaks_over_tau_with_minimum_size():
    # Peaks above τ=0.3: 2 (0.95), 7 (0.9), 5 (0.8), 12 (0.5); 15 (0.2) is below τ.
    # min 4: 2 is too close to the start; 7 accepted; 5 is 2 from 7 (rejected); 12 is 5 from 7 and
    # 8 from the end (accepted). Chunks 0-7, 7-12, 12-20 are all <= max 8.
    assert select_boundaries(trace(), tau=0.3, min_tokens=4, max_tokens=8) == [7, 12]


def test_maximum_size_splits_at_the_best_admissible_position():
    # min 3, max 6: peaks give [7, 12] as above (5 is 2 from 7; 2 is 2 from the start).
    # 0-7 is 7 > 6: split in [3, 4] at the highest score there (both 0 -> the first, 3).
    # 12-20 is 8 > 6: split in [15, 17]: 15 (0.2) is the highest. Sizes: 3, 4, 5, 3, 5.
    cuts = select_boundaries(trace(), tau=0.3, min_tokens=3, max_tokens=6)
    assert cuts == [3, 7, 12, 15]
    sizes = [b - a for a, b in spans_from_boundaries(20, cuts)]
    assert sizes == [3, 4, 5, 3, 5] and all(3 <= s <= 6 for s in sizes)


def test_short_text_is_one_chunk_and_limits_are_checked():
    assert select_boundaries(np.array([0, 1.0, 0, 0]), 0.3, 2, 4) == []   # the peak at 1 is < min from the start
    with pytest.raises(ValueError, match="max_tokens >= 2 \\* min_tokens"):
        select_boundaries(trace(), 0.3, 5, 8)


def test_signals_by_hand():
    # structural: tokens start at chars 0, 4, 8, 12; a section starts at char 8, a paragraph at char 4,
    # a subsection also at char 8 (the section's 1.0 wins), a unit at char 0 is never a boundary.
    offsets = np.array([[0, 3], [4, 7], [8, 11], [12, 15]])
    units = [Unit("a", "section", 0, 15, 1, None), Unit("b", "paragraph", 4, 7, 2, "a"),
             Unit("c", "section", 8, 15, 1, None), Unit("d", "subsection", 8, 15, 2, "c")]
    assert structural_signal(offsets, units).tolist() == [0.0, 0.4, 1.0, 0.0]
    # semantic: tokens [1,0],[1,0],[0,1],[0,1]; w=1 -> 1-cos of neighbours: [0, 0, 1, 0];
    # w=2 at i=1: left [1,0], right mean([1,0],[0,1]) = [.5,.5] -> 1 - 0.7071
    h = np.array([[1.0, 0], [1, 0], [0, 1], [0, 1]])
    assert np.allclose(semantic_signal(h, 1), [0, 0, 1, 0])
    assert np.allclose(semantic_signal(h, 2), [0, 1 - 2 ** -0.5, 1, 1 - 2 ** -0.5])
    # entity: a mention over tokens [1, 4) forbids cutting at 2 and 3
    assert entity_signal(6, [(1, 4)], 0.5).tolist() == [0, 0, -0.5, -0.5, 0, 0]
    # combined with the paper's weights: 0.5*1.0 + 0.3*0.2 + 1.0*(-0.5) = 0.06
    assert combine(np.array([1.0]), np.array([0.2]), np.array([-0.5]), (0.5, 0.3, 1.0))[0] == pytest.approx(0.06)


def test_peaks_that_noise_can_flip_are_noted():
    from rag_lab.core import ties
    from rag_lab.methods.gralc.boundaries import peak_positions

    # token 1: 0.3 + 2e-6, a peak 2e-6 above tau 0.3 -> noted against tau; token 4: 0.9, its right
    # neighbour 0.9 - 1e-6 (a shoulder noise can make the peak) -> noted; token 7: 0.8, a clear peak
    scores = np.array([0.0, 0.3 + 2e-6, 0.0, 0.1, 0.9, 0.9 - 1e-6, 0.0, 0.8, 0.0])
    with ties.collecting() as found:
        peaks = peak_positions(scores, 0.3)
    assert peaks.tolist() == [1, 4, 7]
    assert [(t.what, t.first, t.second, round(t.gap, 8)) for t in found] == [
        ("GraLC boundary peak vs tau", "token 1", "tau 0.3", 2e-6),
        ("GraLC boundary peak vs neighbour", "token 4", "token 5", 1e-6)]
