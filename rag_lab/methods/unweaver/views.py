"""Tables that show what a built UnWeaver index holds and what one query did (notebook 02). The gold-passage
views (P1, P2 …, which rule elects a chunk holding each) are the lab's one worked-example API,
``evaluation.worked``, re-exported here under the names notebook 02 uses."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.types import Retrieval
from ...evaluation.worked import (NOT_ELECTED, chunks_holding, gold_passage_table, gold_passages,  # noqa: F401
                                  padded, passage_label, rule_comparison)


def chunk_entities(retriever, chunk_index: int) -> pd.DataFrame:
    """The entities the reasoner listed for one chunk, with the class each joined."""
    if not 0 <= chunk_index < len(retriever.chunks):
        raise IndexError(f"chunk_index {chunk_index} outside 0..{len(retriever.chunks) - 1}")
    class_of = {i: c.index for c in retriever.classes for i in c.mentions}
    rows = [{"name": m.name, "type": m.type, "key": m.key, "class": retriever.classes[class_of[m.index]].name,
             "description": m.description}
            for m in retriever.mentions if m.chunk_index == chunk_index]
    return pd.DataFrame(rows, columns=["name", "type", "key", "class", "description"])


def entities_by_description(entities: pd.DataFrame, plain_type: str = "CONCEPT") -> pd.DataFrame:
    """``chunk_entities`` as a reader takes it in: one row per description (the offline reasoner describes every
    entity of a sentence by that sentence, so the long table repeats it), its entities listed in order, each
    with its named-entity type where it has one (spaCy's small model's guess; ``plain_type`` — a noun chunk — is
    not shown) and "→ class" where it joined a class under another name."""
    rows = []
    for description, group in entities.groupby("description", sort=False):
        names = [f"{n}" + (f" ({t})" if t != plain_type else "") + (f" → {c}" if c != n else "")
                 for n, t, c in zip(group["name"], group["type"], group["class"])]
        rows.append({"description": description, "entities": ", ".join(names), "count": len(names)})
    return pd.DataFrame(rows, columns=["description", "entities", "count"])


def zero_tokens_note(columns: list[str], reasoner: str) -> str:
    """The line after the token table that left out columns 0 for every method (``core.plots.without_zero``):
    which, with which reasoner, and where an LLM's would be read. "" when none was left out."""
    if not columns:
        return ""
    return (f"Left out above, 0 for every method with the {reasoner} reasoner: {', '.join(columns)}; the next table "
            "estimates what an LLM reasoner would be sent.\n")


def config_table(config) -> pd.DataFrame:
    """A config's knobs, one row each (its one-line repr is hard to read)."""
    knobs = config.as_dict()
    return pd.DataFrame({"value": [str(v) for v in knobs.values()]}, index=pd.Index(list(knobs), name="knob"))


def build_table(retriever) -> pd.DataFrame:
    """What the build made (the index's own counts) and what it cost (``build_*``), one row each."""
    stats = {**retriever.build_stats, **{f"build_{f}": v for f, v in retriever.build_cost.as_dict().items()}}
    return pd.DataFrame({"value": [float(v) for v in stats.values()]}, index=list(stats))


def readable_build(stats: pd.DataFrame) -> pd.DataFrame:
    """``build_table`` for display: counts whole (thousands separated), ``*_seconds`` rows to two places
    with their unit (the CSV keeps the numbers). As text, the Markdown copy prints them as given too."""
    return pd.DataFrame({"value": [f"{v:,.2f} s" if str(name).endswith("seconds") else
                                   f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"
                                   for name, v in stats["value"].items()]}, index=stats.index)


def largest_classes(retriever, n: int = 10) -> pd.DataFrame:
    """The n classes spread over most chunks (ties: more mentions, then earlier class)."""
    ranked = sorted(retriever.classes, key=lambda c: (-len(c.chunks), -c.size, c.index))[:n]
    forms = {c.index: sorted({retriever.mentions[i].name for i in c.mentions}) for c in ranked}
    return pd.DataFrame([{"class": c.name, "key": c.key, "mentions": c.size, "chunks": len(c.chunks),
                          "surface forms": ", ".join(forms[c.index][:6]) + (" …" if len(forms[c.index]) > 6 else ""),
                          "words embedded": len(c.text.split()), "summarized": c.summarized} for c in ranked])


def matrix_summary(retriever) -> pd.DataFrame:
    """Shape and non-zeros of each appendix matrix."""
    rows = [("E  entity-chunk incidence", retriever.incidence), ("M  class membership (P_k 1 stacked)", retriever.membership),
            ("A  chunk-class", retriever.chunk_class)]
    out = [{"matrix": n, "shape": f"{m.shape[0]} x {m.shape[1]}", "non-zeros": int(m.nnz),
            "density": m.nnz / (m.shape[0] * m.shape[1])} for n, m in rows]
    sizes = [p.shape[1] for p in retriever.selection]
    out.append({"matrix": f"P_k  selection ({len(sizes)} classes)", "shape": f"{retriever.incidence.shape[0]} x |I_k|, "
                f"|I_k| from {min(sizes)} to {max(sizes)}", "non-zeros": int(sum(sizes)), "density": float("nan")})
    v = retriever.class_vectors
    out.append({"matrix": "V  class embeddings (dense)", "shape": f"{v.shape[0]} x {v.shape[1]}",
                "non-zeros": int((v != 0).sum()), "density": float((v != 0).mean())})
    return pd.DataFrame(out)


def query_classes(retrieval: Retrieval) -> pd.DataFrame:
    """The voting classes of one query: similarity and the chunks each approves."""
    return pd.DataFrame([{"class": c["name"], "similarity": c["similarity"], "approves": ", ".join(c["chunks"])}
                         for c in retrieval.trace["classes"]])


def query_votes(retrieval: Retrieval) -> pd.DataFrame:
    """Every approved chunk with its approvals, and whether and at which rank it was elected."""
    rank = {cid: i + 1 for i, cid in enumerate(retrieval.trace["elected"])}
    return pd.DataFrame([{"chunk": cid, "approvals": n, "elected rank": rank.get(cid)}
                         for cid, n in retrieval.trace["approvals"].items()])


SOLVERS = ("kelly", "constrained lsq", "bounded lsq")   # the paper's two forms, then ours


def alignment_report(R, w, c, chunks, ideas, k: int = 2, demanded: int = 1) -> dict[str, pd.DataFrame]:
    """The three alignment solvers on one problem (b = c for both least squares): idea strengths,
    chunk loads and prices, each solution's KKT residuals, the constrained form's KKT system, and
    the k chunks each selects (ties by the chunks' summed idea similarity, then order).

    kelly: proportional fairness (A.2, first form); constrained lsq: min ||R x - c||^2 s.t. C x = d
    with C, d from ``demand_constraints(R, w, c, demanded)`` (A.2, second form); bounded lsq: ours."""
    from .alignment import (bounded_least_squares, chunk_similarity, chunk_strengths, idea_upper_bounds,
                            kelly_allocation, kelly_kkt, lsq_kkt, select_chunks)
    from .constrained_lsq import constrained_least_squares, demand_constraints, kkt_system

    chunks, ideas = list(chunks), list(ideas)
    kelly = kelly_allocation(R, w, c)
    demand = demand_constraints(R, w, c, demanded)
    paper = constrained_least_squares(R, c, demand.C, demand.d)
    upper = idea_upper_bounds(R, c)
    ours = bounded_least_squares(R, c, 0.0, upper)
    x = dict(zip(SOLVERS, (kelly.x, paper.x, ours.x)))
    loads = {name: chunk_strengths(R, v) for name, v in x.items()}
    similarity = chunk_similarity(R, w)
    demanded_at = dict(zip(demand.demanded, demand.d))
    K, rhs = kkt_system(R, c, demand.C, demand.d)
    unknowns = [f"x {name}" for name in ideas] + [f"z {ideas[e]}" for e in demand.demanded]
    equations = [f"stationarity in x {name}" for name in ideas] + [f"x {ideas[e]} = d" for e in demand.demanded]
    nan = float("nan")
    kkt = pd.DataFrame({"kelly (price iteration)": kelly_kkt(R, w, c, kelly.x, kelly.prices).as_dict(),
                        "constrained lsq (KKT system)": {**paper.kkt.as_dict(), "dual_feasibility": nan,
                                                         "complementary_slackness": nan},
                        "bounded lsq (ours)": lsq_kkt(R, c, ours.x, ours.lower, ours.upper).as_dict()})
    return {
        "ideas": pd.DataFrame({"weight w": w, "x kelly": kelly.x,
                               "demand d": [demanded_at.get(e, nan) for e in range(len(ideas))],
                               "x constrained lsq": paper.x, "upper bound": upper, "x bounded lsq": ours.x}, index=ideas),
        "chunks": pd.DataFrame({"budget c": c, "similarity": similarity, "price lam": kelly.prices,
                                **{f"load {name}": v for name, v in loads.items()}}, index=chunks),
        "kkt": kkt,
        "kkt_system": pd.DataFrame(np.vstack([np.column_stack([K, rhs]), np.append(np.concatenate([paper.x, paper.z]), nan)]),
                                   index=equations + ["solution [x; z]"], columns=unknowns + ["right-hand side"]),
        "selected": pd.DataFrame({name: padded([chunks[j] for j in select_chunks(v, k, similarity)], k)
                                  for name, v in loads.items()}, index=pd.RangeIndex(1, k + 1, name="rank")),
        "iterations": pd.Series({"kelly iterations": kelly.iterations, "kelly converged": kelly.converged,
                                 "demanded ideas": ", ".join(ideas[e] for e in demand.demanded),
                                 "demanded for uniqueness": ", ".join(ideas[e] for e in demand.forced) or "none",
                                 "bounded lsq status": ours.status}),
    }


LSQ_STATUS = {-1: "stopped: it could not make progress", 0: "stopped at its iteration limit",
              1: "converged (first-order optimality within tolerance)",
              2: "converged (cost change within tolerance)", 3: "found the unconstrained solution inside the bounds"}


def solvers_sentence(iterations: pd.Series) -> str:
    """``alignment_report``'s ``iterations`` in words: how each solver ended and which ideas were demanded."""
    kelly = (f"Kelly's price iteration {'converged' if iterations['kelly converged'] else 'did not converge'} after "
             f"{iterations['kelly iterations']} iterations")
    forced = iterations["demanded for uniqueness"]
    demanded = (f"the constrained form demands {iterations['demanded ideas']}"
                + (f" (of which {forced} only so that its solution stays unique)" if forced != "none" else ""))
    status = int(iterations["bounded lsq status"])
    bounded = f"the bounded form (scipy's lsq_linear) {LSQ_STATUS.get(status, f'ended with status {status}')}"
    return f"{kelly}; {demanded}; {bounded}."
