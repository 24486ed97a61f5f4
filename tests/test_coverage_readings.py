"""The candidate readings of SecCov@k on a hand-made ranking (rag_lab.evaluation.coverage_readings),
and the fit of readings against the GraLC-RAG paper's pattern (rag_lab.methods.gralc.seccov)."""
import math

import pandas as pd
import pytest

from rag_lab.core.types import Chunk, Document
from rag_lab.evaluation.coverage_readings import READINGS, Reading, chunk_units, coverage_count
from rag_lab.methods.gralc import paper, seccov
from test_metrics import coverage_docs


def c(doc, s, e):
    return Chunk(f"{doc}{s}", doc, "", s, e)


# A: s1 [0,10), s2 [10,20) with subsection s2-1 [10,15), s3 [20,30); B: s1, s2
RANKING = [c("A", 0, 5), c("B", 0, 10), c("A", 8, 16)]


@pytest.mark.parametrize("reading, labelled, expected", [
    (Reading("section", "source", "majority"), True, 2),     # A(0,5) -> A:s1; A(8,16): 6 of 8 chars in A:s2
    (Reading("section", "source", "every"), True, 2),        # A(8,16) spans A:s1 and A:s2: both, already counted
    (Reading("subsection", "source", "every"), True, 3),     # pieces (8,10) s1, (10,15) s2-1, (15,16) s2
    (Reading("section", "retrieved", "majority"), True, 3),  # (A, s1), (B, s1), (A, s2)
    (Reading("section", "bare", "majority"), True, 2),       # labels s1 (A's and B's are one), s2
    (Reading("section", "bare", "unlabelled"), True, 2),     # a structure-aware strategy: as majority
    (Reading("section", "bare", "unlabelled"), False, 1),    # content-only: every chunk is "no label"
    (Reading("section", "source", "unlabelled"), False, 1),  # (A, no label); B is not the source
    (Reading("section", "retrieved", "unlabelled"), False, 2),   # one "no label" per retrieved article
])
def test_readings_by_hand(reading, labelled, expected):
    assert coverage_count(RANKING, 3, coverage_docs(), reading, ["A"], labelled) == expected


def test_units_nan_and_names():
    d = coverage_docs()
    assert chunk_units(c("A", 8, 16), d["A"], "subsection", "majority") == ["A:s2"]
    assert chunk_units(c("A", 8, 16), d["A"], "subsection", "every") == ["A:s1", "A:s2-1", "A:s2"]
    d["P"] = Document("P", "no sections here")
    assert math.isnan(coverage_count([c("P", 0, 5)], 1, d, Reading(), ["P"]))       # nothing to cover
    assert len(READINGS) == 27 and Reading("paragraph", "bare", "unlabelled").name == "paragraph/bare/unlabelled"
    with pytest.raises(ValueError, match="scope must be one of"):
        Reading(scope="corpus")


def paper_like(content: float, structure_scale: float) -> dict:
    """One reading's means: content-only at ``content``, structure-aware at the paper's values times a scale."""
    cells = seccov.paper_cells()
    return {key: (content if key[0] in ("Naive", "Semantic", "Late Chunking") else v * structure_scale)
            for key, v in cells.items()}


def test_pattern_fit_ranks_the_reading_that_reproduces_the_paper_first():
    means = pd.DataFrame({"flat-and-growing": paper_like(1.0, 0.5), "content-not-flat": paper_like(2.0, 1.0),
                          "exact": paper_like(1.0, 1.0)}).T
    means.columns = pd.MultiIndex.from_tuples(means.columns, names=["strategy", "k", "condition"])
    fit = seccov.pattern_fit(means)
    assert list(fit.index) == ["exact", "flat-and-growing", "content-not-flat"]
    assert fit.loc["exact", "mean |ours - paper|"] == pytest.approx(0.0)
    assert fit.loc["content-not-flat", "content-only max |x - 1|"] == pytest.approx(1.0)
    assert bool(fit.loc["flat-and-growing", "structure-aware grows with length and k"])
    assert paper.seccov_label(5) in paper.reported(5).columns[0]
