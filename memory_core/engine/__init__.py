"""The engine: ties policy, embedder, store and the pure domain modules together."""

from .facade import AGENT, SCAN_SPLIT_ROWS, SYSTEM, MemoryEngine, PatientView, PolicyDelta

__all__ = ["AGENT", "SCAN_SPLIT_ROWS", "SYSTEM", "MemoryEngine", "PatientView", "PolicyDelta"]
