"""SSG traversal (semantic similarity graph): graph building, the seven traversal algorithms,
the context-grouping strategies that build questions, and the ``ssg-*`` retrievers.

``config`` holds the knobs; ``method`` registers the retrievers when ``rag_lab.methods`` imports it."""
