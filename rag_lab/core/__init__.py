"""Core: the data model and the shared machinery every method stands on. ``types`` (Document,
Section, Chunk, Question, Dataset, Hit, Retrieval, Cost), ``generic_form`` (the generic on-disk form),
``chunking``, ``embedding`` (the cached sentence encoder) with its ONNX backends (``onnx_encoder``),
``index`` (FAISS), ``configs`` (the frozen config base every method's knobs derive from),
``progress`` (progress bars), ``environment`` (numbers read from and variables set in the environment), figure saving and plot helpers (``figures``, ``plots``), and ``redact``
(secrets out of URLs before they reach an error, a log or a manifest).

May import: caching.
"""
