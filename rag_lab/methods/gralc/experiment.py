"""Runs behind the GraLC-RAG notebook: build and query the strategies, add the structural
metrics, sweep the document-length conditions, answer with a reasoner, time cold builds and
sweep λ. ``tables`` summarises the results for the paper's Tables 1–6."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import pandas as pd

from ...core.configs import drop_none
from ...evaluation.harness import COLUMNS, build, build_costs, run_queries, run_queries_at, score_retrievals
from ...evaluation.retrievers import Retriever, answer_contexts, get_retriever
from ...core.types import Dataset, Retrieval
from ...datasets import data_source
from ...evaluation.uncertainty import question_units
from ...reasoning.batch import run_batch
from . import paper
from .gradient import CONDITIONS, condition_dataset
from .infusion import TokenShift
from .metrics import answer_rows, cross_section_rows
from .seccov import PAPER_READING, reading_rows
from .method import STRATEGIES, strategy_config
from .tables import DIFF_COLUMNS, SOURCE_SECCOV, TAIL, metric_means


def load_data(dataset, data_path=None, articles: int | None = None, seed: int = 0, per_template: int = 1,
              limit: int | None = None) -> tuple[Dataset, dict[str, str]]:
    """The notebook's data (``dataset``: a name, a generic-form folder or {"loader": NAME, ...}; the other
    arguments as ``paper.loader_kwargs`` reads them; the first ``limit`` questions) and each question's
    document (``uncertainty.question_units``), so every interval and test is clustered by document."""
    source = data_source(dataset)
    data = source.load(paper.loader_kwargs(source.label, data_path, articles, seed, per_template), limit=limit)
    return data, question_units(data)


def strategy_params(**knobs) -> dict[str, dict]:
    """Knob overrides per strategy: each knob given (λ as ``lam``, β ``beta``, α ``alphas``, τ ``tau``,
    or any other) goes to every strategy whose config has it, e.g. ``lam`` to gralc-kg and
    gralc-graph. A knob left None keeps each config's default (``config.py``); a knob no
    strategy has is an error."""
    given = drop_none(**knobs)
    params = {name: {k: v for k, v in given.items() if k in strategy_config(name).knobs()} for name in STRATEGIES}
    unused = sorted(set(given) - {k for p in params.values() for k in p})
    if unused:
        known = sorted({k for name in STRATEGIES for k in strategy_config(name).knobs()})
        raise ValueError(f"no GraLC-RAG strategy has the knob(s) {unused}; their knobs are: {', '.join(known)}")
    return params


@dataclass
class Run:
    """One evaluation: tidy per-question rows, build costs, the built retrievers and their retrievals
    (k -> method -> question id -> the method's own retrieval for k)."""

    scores: pd.DataFrame
    builds: pd.DataFrame
    retrievers: dict[str, Retriever] = field(repr=False)
    results: dict[int, dict[str, dict[str, Retrieval]]] = field(repr=False)
    dataset: Dataset = field(repr=False)


def evaluate(strategies: Sequence[str], dataset: Dataset, ks: Sequence[int] = (1, 3, 5, 10),
             params: Mapping[str, dict] | None = None, level: str = "section", progress: bool = False) -> Run:
    if not dataset.questions:
        raise ValueError(f"dataset {dataset.name!r} has no questions to evaluate")
    ks = sorted({int(k) for k in ks})
    params = params or strategy_params()
    retrievers = {name: get_retriever(name, **params.get(name, {})) for name in strategies}
    for r in retrievers.values():
        build(r, dataset.documents)
    results = run_queries_at(retrievers, dataset, ks, progress)
    scores = score_retrievals(results, dataset, section_level=level, pools={n: r.chunks for n, r in retrievers.items()})
    extra = pd.DataFrame(cross_section_rows(results, dataset, level) + reading_rows(results, dataset, PAPER_READING),
                         columns=COLUMNS)
    builds = build_costs(retrievers)
    timing_rows = [{"method": n, "metric": f"seconds_{key}", "value": v}
                   for n, r in retrievers.items() for key, v in getattr(r, "timings", {}).items()]
    builds = pd.concat([builds, pd.DataFrame(timing_rows, columns=builds.columns)], ignore_index=True)
    return Run(pd.concat([scores, extra], ignore_index=True), builds, retrievers, results, dataset)


def length_gradient(dataset: Dataset, strategies: Sequence[str], conditions: Sequence[str] = CONDITIONS,
                    ks: Sequence[int] = (1, 5, 10, 20), params: Mapping[str, dict] | None = None,
                    level: str = "section") -> dict[str, Run]:
    """One Run per document-length condition (conditions no article has are skipped)."""
    runs = {}
    for c in conditions:
        sub = condition_dataset(dataset, c)
        if sub.documents and sub.questions:
            runs[c] = evaluate(strategies, sub, ks, params, level)
    return runs


# Table 6's token column: the paper's is GPT-4o-mini's usage; ours counts what the answer is drawn
# from in GPT-4o-mini's tokenizer, so the two are in the same unit but not the same scope
TOKENS_SCOPE = ("Tokens = contexts + question in o200k_base (GPT-4o-mini's tokenizer), summed over questions; "
                "the paper's column is GPT-4o-mini's usage, which adds its prompt template and the answers")


def generation(run: Run, reasoner, k: int = 5, limit: int | None = None, level: str = "section") -> pd.DataFrame:
    """Answer each question from every strategy's own top k (its ``answer_contexts``); proxy F1,
    section diversity, tokens (``TOKENS_SCOPE``)."""
    from ...reasoning.tokens import count_encoding_tokens

    docs = {d.id: d for d in run.dataset.documents}
    questions = run.dataset.questions[:limit] if limit else run.dataset.questions
    at_k = run.results[k] if k in run.results else run_queries(run.retrievers, run.dataset, k, progress=False)
    rows = []
    for method, by_q in at_k.items():
        contexts = [answer_contexts(run.retrievers[method], by_q[q.id]) for q in questions]
        answers = run_batch(lambda i: reasoner.answer(questions[i].question, contexts[i]), range(len(questions)),
                            f"answering ({method})", reasoner=reasoner, progress=False)
        for q, context, answer in zip(questions, contexts, answers):
            chunks = [h.chunk for h in by_q[q.id].hits]
            tokens = count_encoding_tokens(context + [q.question], paper.ANSWER_ENCODING)
            rows += answer_rows(method, q, answer, chunks, docs, tokens, level)
    return pd.DataFrame(rows, columns=COLUMNS)


def efficiency(dataset: Dataset, strategies: Sequence[str], params: Mapping[str, dict] | None = None,
               articles: int | None = None, repeats: int = 1) -> pd.DataFrame:
    """Build every strategy cold on the first ``articles`` documents — no embedding or token-encoding
    cache, so each strategy pays for all of its own encoding, as when indexed alone — and return
    the build-cost rows. With ``repeats`` > 1 each build is timed that many times and the fastest
    is kept (timings on a shared machine are noisy; the minimum is the least disturbed)."""
    from ...core.embedding import Embedder

    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    documents = dataset.documents[:articles] if articles else dataset.documents
    params = params or strategy_params()
    cold = Embedder(use_cache=False)
    cold.encode(["warm-up"])  # load the model before the first timed build
    best: dict[str, Retriever] = {}
    for _ in range(repeats):
        for name in strategies:
            kw = {**params.get(name, {}), "embedder": cold}
            if "cache_tokens" in strategy_config(name).knobs():     # the late-chunking family
                kw["cache_tokens"] = False
            r = build(get_retriever(name, **kw), documents, reuse=False)   # timed: never a reused index
            if name not in best or r.build_cost.seconds < best[name].build_cost.seconds:
                best[name] = r
    return build_costs(best).assign(articles=len(documents), repeats=repeats)


MENTION_COSINE = "cos(h′, h) mention tokens"
ALL_COSINE = "cos(h′, h) all tokens"


def _hit_keys(retrieval: Retrieval) -> tuple:
    return tuple((h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in retrieval.hits)


def _mean(scores: pd.DataFrame, metric: str, k: int) -> float:
    """One method's mean of ``metric`` at ``k`` (NaN when the run has no such rows, e.g. SecCov on
    documents without sections)."""
    values = metric_means(scores, metric, k)
    return float(values.iloc[0]) if len(values) else math.nan


@dataclass
class Sweep:
    """The λ ablation: ``table`` (one row per λ, ``lambda_sweep``'s columns) and ``scores``, the
    per-question rows behind it with ``method`` set to ``sweep_label(λ)`` (for paired differences)."""

    table: pd.DataFrame
    scores: pd.DataFrame = field(repr=False)

    @property
    def metrics(self) -> list[str]:
        """The metric@k columns the table's retrieval columns are the means of (``sweep_columns``)."""
        return list(sweep_columns(self).values())

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Each later λ against the first, as ``scores`` names them (for ``uncertainty.decided_pairs``)."""
        lams = list(self.table.index)
        return [(sweep_label(x), sweep_label(lams[0])) for x in lams[1:]]

    def by_lambda(self, decided: pd.DataFrame) -> pd.DataFrame:
        """The decided rows of ``pairs`` on the table's columns (``sweep_columns``) as rows (column label, λ):
        the difference's columns first, then the test's."""
        if decided.empty:
            return pd.DataFrame(columns=DIFF_COLUMNS, index=pd.MultiIndex.from_tuples([], names=["column", "lambda"]))
        columns = {v: k for k, v in sweep_columns(self).items()}
        lams = {sweep_label(x): x for x in self.table.index}
        out = decided.assign(column=decided["metric"].map(columns), **{"lambda": decided["method"].map(lams)})
        return out.set_index(["column", "lambda"])[[*DIFF_COLUMNS, *TAIL]]


def sweep_label(lam: float) -> str:
    return f"λ = {lam:g}"


def lambda_sweep(dataset: Dataset, lams: Sequence[float], k: int = 5, params: Mapping[str, dict] | None = None,
                 level: str = "section", mrr_k: int | None = None) -> Sweep:
    """The infusion ablation: gralc-kg at each λ on the same questions (λ = 0 is structure-aware late
    chunking with the same knobs). Per λ: MRR@``mrr_k`` (default k; pass the deepest k of the table the
    λ = 0 row should match), Recall@k and SecCov@k on the source article's sections (Table 5's fair
    reading; NaN when the documents have no sections); the chunk count (infused tokens feed the boundary
    score's semantic signal, so boundaries can move); the share of questions whose top k differs from the
    first λ's; and how far infusion moved the token vectors — the mean cosine between infused and original
    token embeddings over the mention tokens and over all tokens. The whole-document encodings come from
    the token-embedding cache, so each λ pays only for linking, infusion, boundaries and queries."""
    lams = [float(x) for x in lams]
    if not lams:
        raise ValueError("lambda_sweep needs at least one λ, got an empty grid")
    if len(set(lams)) < len(lams) or not all(math.isfinite(x) for x in lams):
        raise ValueError(f"λ values must be finite and distinct, got {lams}")
    mrr_k = int(mrr_k or k)
    base = dict((params or strategy_params())["gralc-kg"])
    rows, scores, first = [], [], None
    for lam in lams:
        run = evaluate(["gralc-kg"], dataset, (1, k, mrr_k), {"gralc-kg": {**base, "lam": lam}}, level)
        s, retriever = run.scores, run.retrievers["gralc-kg"]
        top = {q: _hit_keys(r) for q, r in run.results[k]["gralc-kg"].items()}
        if first is None:
            first = top
        shift = sum((info.get("shift", TokenShift()) for info in retriever.doc_info.values()), TokenShift())
        rows.append({"lambda": lam, f"MRR@{mrr_k}": _mean(s, "doc_mrr", mrr_k), f"R@{k}": _mean(s, "doc_recall", k),
                     paper.source_seccov_label(k): _mean(s, SOURCE_SECCOV, k), "chunks": len(retriever.chunks),
                     f"top {k} changed vs λ = {lams[0]:g}": sum(top[q] != first[q] for q in top) / len(top),
                     MENTION_COSINE: shift.mention_cosine, ALL_COSINE: shift.all_cosine})
        scores.append(s.assign(method=sweep_label(lam)))
    return Sweep(pd.DataFrame(rows).set_index("lambda"), pd.concat(scores, ignore_index=True))


def sweep_columns(sweep: Sweep) -> dict[str, str]:
    """The sweep table's retrieval columns -> the metric@k each is the mean of."""
    out = {}
    for c in sweep.table.columns:
        if c.startswith("MRR@"):
            out[c] = f"doc_mrr@{c[4:]}"
        elif c.startswith("R@"):
            out[c] = f"doc_recall@{c[2:]}"
        elif c.startswith("SecCov@"):
            out[c] = f"{SOURCE_SECCOV}@{c[7:].split(' ', 1)[0]}"
    return out


def short_text_dataset(dataset: Dataset) -> Dataset:
    """The paper's short-text setting (Tables 1–2): the abstracts — for PubMedQA each whole abstract
    (every context section), for JATS articles their abstract section — else the dataset as it is."""
    sub = condition_dataset(dataset, "abstract")
    return sub if sub.documents and sub.questions else dataset


def short_text_run(runs: Mapping[str, Run], dataset: Dataset, strategies: Sequence[str],
                   ks: Sequence[int] = (1, 3, 5, 10), params: Mapping[str, dict] | None = None,
                   level: str = "section") -> Run:
    """The run behind Tables 1–2: the length gradient's abstract run when it has one (no second
    build), else the strategies evaluated on ``short_text_dataset`` (whole documents when no
    document has an abstract)."""
    if "abstract" in runs:
        return runs["abstract"]
    return evaluate(strategies, short_text_dataset(dataset), ks, params, level)


def corpus_table(dataset: Dataset, embedder, vocabulary=None) -> pd.DataFrame:
    """Per article: size, structure (units and structure-graph edges) and linked concepts."""
    from .concept_graph import concept_subgraph
    from ...datasets.linking import ConceptLinker
    from ...datasets.structure import edge_type_counts, structure_graph, structure_units
    from ...datasets.vocabulary import load_vocabulary

    vocab = load_vocabulary(vocabulary)
    linker = ConceptLinker(vocab)
    rows = []
    for d in dataset.documents:
        units, fallback = structure_units(d)
        kinds = pd.Series([u.kind for u in units]).value_counts()
        concepts = linker.concepts_in(d.text)
        sub = concept_subgraph(concepts, vocab)
        edges = edge_type_counts(structure_graph(d))
        rows.append({"article": d.id, "words": len(d.text.split()), "tokens": len(embedder.tokenize_with_offsets(d.text)[0]),
                     "sections": int(kinds.get("section", 0)), "subsections": int(kinds.get("subsection", 0)),
                     "paragraphs": int(kinds.get("paragraph", 0)), "structure": fallback,
                     **{f"{k} edges": v for k, v in edges.items()},
                     "linked concepts": len(concepts), "subgraph nodes": sub.number_of_nodes(),
                     "subgraph edges": sub.number_of_edges()})
    return pd.DataFrame(rows).set_index("article").fillna(0)
