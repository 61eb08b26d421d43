"""Evaluation on public data (``make eval EVAL_DATA=/path``): REALTALK retrieval, SituatedQA
temporal updates and the labelled clinical pair set's test half. Measures the engine through
its public API only (``open_engine``, ``add_memories``, ``retrieve``, ``keyword_search``,
``view``, ``list_memories``, ``supersessions``) and writes ``docs/evaluation.md``."""
