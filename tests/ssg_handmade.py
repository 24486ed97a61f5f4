"""A tiny hand-made SSG for the SSG tests: 2-D unit vectors given as angles (degrees), so every
cosine is cos(difference of angles) and every expected path can be worked out by hand.

The main graph (``main_graph``), query at 0 degrees, window = 3 sentences, stride 1,
top_k = 2 intra, top_x = 1 inter:

    document A: 6 sentences, windows A0=[s0 s1 s2] A1=[s1 s2 s3] A2=[s2 s3 s4] A3=[s3 s4 s5]
    document B: 5 sentences, windows B0=[s0 s1 s2] B1=[s1 s2 s3] B2=[s2 s3 s4]

    window angles   A0 10, A1 25, A2 60, A3 80, B0 -20, B1 -50, B2 100
    query sims      A0 .98481  B0 .93969  A1 .90631  B1 .64279  A2 .5  A3 .17365  B2 -.17365

    edges (cosine)  A0: A1 .96593, A2 .64279 | B0 .86603
                    A1: A0 .96593, A2 .81915 | B0 .70711
                    A2: A3 .93969, A1 .81915 | B2 .76604
                    A3: A2 .93969, A1 .57358 | B2 .93969
                    B0: B1 .86603, B2 -.5    | A0 .86603
                    B1: B0 .86603, B2 -.86603| A0 .5
                    B2: B0 -.5, B1 -.86603   | A3 .93969

    sentence angles A: s0 30, s1 40, s2 26, s3 35, s4 70, s5 85
                    B: s0 -45, s1 -30, s2 -60, s3 -10, s4 110
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from rag_lab.methods.ssg.config import SSGConfig
from rag_lab.methods.ssg.graph import assemble_graph, segment
from rag_lab.methods.ssg.method import method_name
from rag_lab.methods.ssg.query import QueryContext
from rag_lab.core.types import Document

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]

MAIN_WINDOWS = {"A": [10, 25, 60, 80], "B": [-20, -50, 100]}
MAIN_SENTENCES = {"A": [30, 40, 26, 35, 70, 85], "B": [-45, -30, -60, -10, 110]}


def unit(degrees: float) -> np.ndarray:
    r = np.deg2rad(degrees)
    return np.array([np.cos(r), np.sin(r)], dtype=np.float32)


def doc_text(doc_id: str, n: int) -> str:
    return " ".join(f"Document {doc_id} states fact {WORDS[j]}." for j in range(n))


def documents(sentence_counts: dict[str, int]) -> list[Document]:
    return [Document(d, doc_text(d, n), title=f"Doc {d}") for d, n in sentence_counts.items()]


def hand_graph(window_angles: dict[str, list[float]], sentence_angles: dict[str, list[float]],
               theme_angles: dict[str, float | None] | None = None, themes: dict[str, list[str]] | None = None,
               window: int = 3, stride: int = 1, top_k: int = 2, top_x: int = 1, top_t: int = 1):
    docs = documents({d: len(a) for d, a in sentence_angles.items()})
    sentences, windows = segment(docs, window, stride)
    expected = sum(len(a) for a in window_angles.values())
    assert len(windows) == expected, f"segmentation gave {len(windows)} windows, the test expects {expected}"
    wvecs = np.stack([unit(a) for d in window_angles for a in window_angles[d]])
    svecs = np.stack([unit(a) for d in sentence_angles for a in sentence_angles[d]])
    theme_angles = theme_angles or {d: 0.0 for d in sentence_angles}
    tvecs = np.stack([unit(theme_angles[d.id]) if theme_angles.get(d.id) is not None else np.zeros(2, np.float32)
                      for d in docs])
    themes = themes or {d.id: [f"theme of {d.id}"] for d in docs}
    config = SSGConfig(window=window, stride=stride, top_k=top_k, top_x=top_x, top_t=top_t)
    return assemble_graph(docs, sentences, windows, wvecs, svecs, themes, tvecs, config), docs


def main_graph():
    return hand_graph(MAIN_WINDOWS, MAIN_SENTENCES)


def query_at(graph, degrees: float = 0.0, text: str = "the query") -> QueryContext:
    return QueryContext(graph, text, unit(degrees))


def A(i: int) -> str:
    return f"A#w{i}"


def B(i: int) -> str:
    return f"B#w{i}"


def sa(*idx: int) -> list[str]:
    return [f"A#s{i}" for i in idx]


def sb(*idx: int) -> list[str]:
    return [f"B#s{i}" for i in idx]


class WordEmbedder:
    """Hand-made embedder: a text's vector is its counts of four marker words, normalised."""

    VOCAB = ("alpha", "beta", "gamma", "delta")

    def __init__(self):
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        out = []
        for t in texts:
            words = t.lower().replace(",", " ").replace(".", " ").split()
            v = np.array([words.count(w) for w in self.VOCAB], np.float32) + 0.01
            out.append(v / np.linalg.norm(v))
        return np.stack(out)

    def encode_one(self, text):
        return self.encode([text])[0]

    def count_tokens(self, texts):
        return sum(len(t.split()) for t in ([texts] if isinstance(texts, str) else texts))


class ThemeReasoner:
    """Fake reasoner for themes only: records the text it was given, returns fixed themes."""

    name = "fake"

    def __init__(self, themes):
        from rag_lab.reasoning import Usage
        self.usage, self.seen, self._themes = Usage(), [], themes

    def themes(self, text, n=5):
        self.seen.append((text, n))
        return self._themes[len(self.seen) - 1]

    def usage_since(self, before):
        from rag_lab.core.types import Cost
        return Cost()


def scores_frame(rows):
    """(algorithm, question, gold-sentence precision, recall, sentences) -> a gathered_scores-like frame."""
    return pd.DataFrame([{"method": method_name(a), "algorithm": a, "question_id": q, "strategy": "s",
                          "gold_sentence_precision": p, "gold_sentence_recall": r, "sentences": n}
                         for a, q, p, r, n in rows])
