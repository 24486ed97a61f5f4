"""SKETCH (Mahalingam et al., "SKETCH: Structured Knowledge Enhanced Text Comprehension for Holistic
Retrieval"): semantic chunks in FAISS merged with a knowledge graph's structured context.

``method`` the retriever, ``config`` its knobs, ``knowledge_graph`` and ``graph_stores`` the graph
(networkx or Kùzu), ``paper`` the paper's reported tables, ``plots`` its figures, ``study`` notebook 01's
sections. ``method`` registers ``sketch`` when ``rag_lab.methods`` imports it."""
