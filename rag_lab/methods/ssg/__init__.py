"""SSG traversal (semantic similarity graph): graph building, the seven traversal algorithms,
the context-grouping strategies that build questions, the ``ssg-*`` retrievers, and one walk told
step by step (``walkthrough``).

``config`` holds the knobs; ``method`` registers the retrievers when ``rag_lab.methods`` imports it."""
