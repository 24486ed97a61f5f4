"""Another machine, emulated: every sentence vector moved by N(0, 1e-6) per component (about the
last-bit rounding of another CPU's kernels, docs/reproducibility.md). The shipped data sets at the
notebook tests' parameters (tests/quality_floor.py's cases) must score every question exactly as
before, except where a decision was noted as a near-tie (rag_lab/core/ties.py) for that data set,
method and question, or by a build note whose scope lists that question."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import INDEXES
from quality_floor import CASES, measured
from rag_lab.core.embedding import PERTURB_ENV, perturb, perturbation_sigma, text_key
from rag_lab.core.ties import covers


pytestmark = pytest.mark.xdist_group(INDEXES)     # reuses the quality floor's unperturbed runs


def _explained(method: str, dataset: str, question: str, near) -> bool:
    """A note of this method, data set and question (a build note: its scope lists the question)."""
    return any(covers(t, method, dataset, question) for t in near)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", list(CASES))
def test_last_bit_noise_moves_no_score_but_named_near_ties(name, monkeypatch):
    _, true_scores, true_ties = measured(name)
    monkeypatch.setenv(PERTURB_ENV, "1e-6")
    _, moved_scores, moved_ties = measured(name)
    methods = {m for m, _, _ in true_scores}
    assert methods == set(CASES[name]["methods"]) and set(moved_scores) == set(true_scores)
    changed = sorted(key for key, value in true_scores.items()
                     if not (value == moved_scores[key] or (math.isnan(value) and math.isnan(moved_scores[key]))))
    unexplained = [f"{m} {q} {metric}: {true_scores[(m, q, metric)]} -> {moved_scores[(m, q, metric)]}"
                   for m, q, metric in changed if not _explained(m, name, q, true_ties + moved_ties)]
    assert not unexplained, f"{name}: moved under 1e-6 noise with no near-tie noted: " + "; ".join(unexplained[:10])


def test_the_perturbation_is_small_seeded_by_text_and_normalised(monkeypatch):
    # hand check: a unit vector moved by sigma = 1e-6 per component stays within ~1e-5 of itself
    v = np.eye(4, dtype=np.float32)[:2]
    keys = [text_key("a"), text_key("b")]
    moved = perturb(v, keys, 1e-6)
    assert np.allclose(np.linalg.norm(moved, axis=1), 1.0, atol=1e-6)
    assert 0 < np.abs(moved - v).max() < 1e-5
    assert np.array_equal(moved, perturb(v, keys, 1e-6))                     # same text, same move
    assert not np.array_equal(moved[0], perturb(v[:1], keys[1:], 1e-6)[0])   # another text, another move
    monkeypatch.setenv(PERTURB_ENV, "1e-6")
    assert perturbation_sigma() == 1e-6
    monkeypatch.setenv(PERTURB_ENV, "lots")
    with pytest.raises(ValueError, match=PERTURB_ENV):
        perturbation_sigma()


def test_perturbed_vectors_are_keyed_apart_from_true_ones(embedder, monkeypatch):
    true_key = embedder.model_key
    monkeypatch.setenv(PERTURB_ENV, "1e-6")
    assert embedder.model_key == true_key + "+noise1e-06" and embedder.vector_key == true_key
