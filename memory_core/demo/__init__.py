"""Deterministic generator of SYNTHETIC patient memories for demos, tests and benchmarks.

Everything produced here is invented. Patients are identified only by codes such as
``NW-1001`` (Northwind demo) or ``SC-000001`` (scale runs) and described by labels like
"Synthetic patient NW-1001 (T2 diabetes, 58)"; no real person is named or described.

The generator is pure: it reads no clock and no global random state. Every call builds its
own ``random.Random(seed)``, so the same ``(now, seed)`` always gives an equal dataset. The
Northwind demo's statements do not depend on ``now`` at all: only its dates move with it.

Shape of the data:

* each patient has agent sessions ("visits") every 2-6 weeks over 12-24 months before ``now``;
* most memories are written during a session (a few minutes after it starts); lab results
  arrive from the lab a few days before the session that discusses them;
* an agent retrieves memories at the start of later sessions, so access times are visit
  times strictly after the memory was created;
* two memories of the same type for the same patient are about different things, except
  deliberate series (lab values over time, home readings) and the NW-1001 worked examples
  from the domain reference, which are meant to be detected as updates.
"""

from .generator import DemoDataset, DemoMemory, DemoPatient, scale_dataset
from .northwind import DEMO_EPOCH, demo_labels, northwind_demo
from .templates import MEMORY_TYPES

__all__ = [
    "DEMO_EPOCH",
    "MEMORY_TYPES",
    "DemoDataset",
    "DemoMemory",
    "DemoPatient",
    "demo_labels",
    "northwind_demo",
    "scale_dataset",
]
