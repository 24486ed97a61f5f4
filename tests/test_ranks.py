"""Rank uncertainty from a joint paired bootstrap, on cases whose answer is known by hand."""
import pandas as pd
import pytest

from rag_lab.compare.ranks import RANK_COLUMNS, rank_uncertainty


def tidy(scores: dict[str, list[float]], metric: str = "ctx_recall", k: int = 5) -> pd.DataFrame:
    rows = [(m, f"q{i}", metric, k, v) for m, values in scores.items() for i, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["method", "question_id", "metric", "k", "value"])


def test_a_method_ahead_on_every_question_is_always_best():
    r = rank_uncertainty(tidy({"b": [0, 0, 0], "a": [1, 1, 1]}), "ctx_recall@5").set_index("method")
    assert r.loc["a", "share_best"] == 1.0 and r.loc["b", "share_best"] == 0.0
    assert (r.loc["a", "rank_low"], r.loc["a", "rank_high"]) == (1, 1) and r.loc["b", "rank_high"] == 2
    assert list(r.index) == ["a", "b"]                                  # best mean first


def test_ties_on_a_resample_share_first_place():
    # a = [1, 0], b = [0, 0]: a resample of two questions is (q2, q2) with probability 1/4, a tie then
    # (each gets half); otherwise a is ahead: P(a best) = 3/4 + 1/4 * 1/2 = 0.875, P(b best) = 0.125
    r = rank_uncertainty(tidy({"a": [1, 0], "b": [0, 0]}), "ctx_recall@5", draws=20000).set_index("method")
    assert r.loc["a", "share_best"] == pytest.approx(0.875, abs=0.01) and r["share_best"].sum() == pytest.approx(1.0)
    # b never scores above a, so it is never ranked strictly ahead of it: a's rank is always 1
    assert r.loc["a", "rank_high"] == 1


def test_common_questions_only_and_whole_documents_with_units():
    scores = tidy({"a": [1, 1, 0, 0], "b": [0, 0, 1, float("nan")]})
    r = rank_uncertainty(scores, "ctx_recall@5").set_index("method")
    assert set(r["n"]) == {3} and r.loc["a", "mean"] == pytest.approx(2 / 3)     # q3 left out for both
    # q0 and q1 are one document, q2 another: two units; resamples of units pick {A, A}, {B, B} or a mix
    # (a: 2 of 3 vs b: 1 of 3 -> a ahead): P(a best) = 1/4 + 1/2 = 3/4
    units = {"q0": "A", "q1": "A", "q2": "B", "q3": "B"}
    c = rank_uncertainty(scores, "ctx_recall@5", units=units, draws=20000).set_index("method")
    assert set(c["units"]) == {2} and c.loc["a", "share_best"] == pytest.approx(0.75, abs=0.01)
    assert list(c.columns) == RANK_COLUMNS[1:]
    assert rank_uncertainty(tidy({"a": [float("nan")], "b": [1.0]}), "ctx_recall@5").empty
    with pytest.raises(ValueError, match="draws"):
        rank_uncertainty(scores, "ctx_recall@5", draws=0)


def test_share_best_is_a_bootstrap_share_not_a_calibrated_probability():
    # five truly equal methods (same distribution, independent per question): each is best with
    # probability 1/5, yet the observed leader's bootstrap share is far above 0.2 on average (the
    # bootstrap re-centres on the observed means). This is why the column is a "bootstrap share best".
    import numpy as np

    rng = np.random.default_rng(0)
    leaders = []
    for _ in range(40):
        scores = {f"m{j}": rng.normal(0.5, 0.2, 20).tolist() for j in range(5)}
        r = rank_uncertainty(tidy(scores), "ctx_recall@5", draws=400)
        leaders.append(r["share_best"].iloc[0])          # best observed mean first
    assert 0.35 < float(np.mean(leaders)) < 0.7


def test_saved_rank_table_says_draws_and_seed_once_in_its_caption(tmp_path):
    from rag_lab.compare.ranks import save_rank_table

    scores = tidy({"a": [1, 1, 0, 1], "b": [0, 1, 0, 0]})
    scores.attrs.update(methods={m: {"index_reasoner": "none"} for m in ("a", "b")}, reasoner="none", judge="none")
    shown = save_rank_table(scores, "ctx_recall@5", None, tmp_path, "d")
    assert "draws" not in shown.columns and "seed" not in shown.columns and list(shown.index) == ["a", "b"]
    text = (tmp_path / "ranks_d.md").read_text(encoding="utf-8")
    assert "4000 draws, seed 0" in text.splitlines()[0] and "| draws" not in text
    assert {"draws", "seed"} <= set(pd.read_csv(tmp_path / "ranks_d.csv").columns)     # the CSV keeps them
