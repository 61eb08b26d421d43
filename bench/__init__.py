"""Benchmarks of issue 5 (``python -m bench`` / ``make bench``): the engine against a plain
per-memory reference and against Mem0 and LangGraph, written to ``docs/benchmarks.md``."""
