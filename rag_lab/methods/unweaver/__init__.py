"""UnWeaver ("UnWeaving the knots of GraphRAG - turns out VectorRAG is almost enough"): entity
equivalence classes vote for chunks.

``method`` the retriever, ``config`` its knobs, ``classes`` the equivalence classes, ``matrices`` the
appendix's matrices, ``voting`` the elections, ``alignment`` and ``constrained_lsq`` the appendix's solvers, ``views`` tables
of an index, ``paper`` the paper's Table 1, ``plots`` its figures. ``method`` registers ``unweaver``
when ``rag_lab.methods`` imports it."""
