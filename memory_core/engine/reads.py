"""Plain reads of the store behind the facade's reading methods, with their argument checks."""

from __future__ import annotations

from .. import validation as v
from ..errors import ValidationError
from ..values import Memory, Status, Supersession, SupersessionState
from .core import Core


def list_memories(core: Core, patient_id: str, include_inactive: bool) -> list[Memory]:
    """The patient's stored memories; only the active ones unless ``include_inactive``."""
    v.patient_id(patient_id)
    mems = core.store.list_memories(patient_id)
    return mems if include_inactive else [m for m in mems if m.status is Status.ACTIVE]


def supersessions(core: Core, patient_id: str | None, state: str | None) -> list[Supersession]:
    """Supersession records, of one patient and in one state when given (a state must be one of
    :class:`SupersessionState`'s values, else a :class:`ValidationError` naming ``state``)."""
    if state is not None and state not in {s.value for s in SupersessionState}:
        raise ValidationError("state", f"unknown supersession state {state!r}")
    return core.store.list_supersessions(patient_id, state)
