"""SSG traversal (semantic similarity graph): graph building, the seven traversal algorithms,
the context-grouping strategies that build questions, and the ``ssg-*`` retrievers.

Importing the package registers the retrievers (``retriever`` module)."""
from . import method  # noqa: F401  (registers ssg-<algorithm>)
