"""GraLC-RAG (Mortezaagha & Rahgozar, "Graph-Aware Late Chunking for Retrieval-Augmented
Generation in Biomedical Literature"): JATS parsing and the document structure graph,
concept linking and per-document concept subgraphs, full-document token encoding, KG
infusion, structure-aware boundaries, graph-guided retrieval, the six strategies, the
cross-section question generator and the paper's structural metrics.

``config`` holds each strategy's knobs; ``method`` registers the six strategies (``gralc-naive`` …
``gralc-graph``) when ``rag_lab.methods`` imports it; heavy libraries (torch, networkx, scipy,
sklearn) load only when a strategy is built. ``report`` gives notebook 04 each section's tables,
figures and sentences (``sentences`` writes the longer ones) from ``experiment``'s runs.
"""
