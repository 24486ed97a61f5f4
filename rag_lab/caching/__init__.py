"""Caching: the lowest layer. Atomic writes (``atomic``: temporary file, then rename), the SQLite
cache base that every keyed cache stands on (``sqlite_cache``: damaged files moved aside, bad rows
rejected, the ``RAG_LAB_REUSE`` switch), the fingerprint
of rag_lab's code and shipped data that keys persisted results (``code_version``), who may have
written a cache (``trust``: private folders, entries signed with a per-user key), what the cache
folder holds and what can go (``inventory``), and JSON records several processes update at once
(``locked_json``). Nothing here knows what a document, a method or a metric is.

May import: nothing else in rag_lab.
"""
