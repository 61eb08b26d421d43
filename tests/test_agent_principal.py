"""The agent principal (issue 33): the ``agent`` role on the one guarded path
(``engine.acting_as(agent_principal(name), Role.AGENT, patients=...)``). An agent is given
context and search results (recorded in the ledger under its name), adds memories (audited
under its name), reads proposals, reviews and histories; it is refused every other write, and a
call about a patient outside its scope, with nothing read, written or recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import memory_core as mc
from memory_core.access import (
    AGENT_ACTIONS,
    PatientScope,
    Role,
    agent_name,
    agent_principal,
    permits,
)
from memory_core.engine.acting import AGENT_CALLS, WRITES, Acting
from memory_core.labels import actor_label, audit_sentence, injection_sentence
from tests import test_dashboard_roles as roles
from tests.test_dashboard_roles import PID, _calls, _state

guarded = roles.guarded  # the fixture: one of everything a write can act on

AGENT = agent_principal("ward-assistant")
OTHER = "NW-1002"


def _ledger(eng: mc.MemoryEngine) -> tuple[Any, ...]:
    """Everything a call could write: memories, supersessions, audit, policy, and the usage
    side (injections, accesses, sessions) of every patient."""
    usage = tuple(
        (
            p,
            tuple(i.id for i in eng.injections(p)),
            tuple(sorted((k, len(v)) for k, v in eng.access_times(p).items())),
            eng.store.versions(p),
        )
        for p in sorted({*eng.list_patients(), PID, OTHER})
    )
    return _state(eng), usage


def test_agent_names_and_the_role_table() -> None:
    assert AGENT == "agent:ward-assistant" and agent_name(AGENT) == "ward-assistant"
    assert agent_name("dr.lee@northwind.example") is None and agent_name("agent") is None
    for bad in ("", "ward assistant", "-x", "a" * 65, "x/y", None):
        with pytest.raises(mc.ValidationError) as err:
            agent_principal(bad)
        assert err.value.field == "agent"
    assert {"get_context", "search", "add_memory"} == AGENT_ACTIONS
    assert all(permits(Role.REVIEWER, w) for w in WRITES)
    assert not any(permits(Role.VIEWER, w) for w in (*WRITES, "get_context", "search"))
    assert [w for w in WRITES if permits(Role.AGENT, w)] == ["add_memory"]
    assert PatientScope.of(["A"]).narrowed(["A", "B"]).patients == {"A"}
    assert PatientScope().narrowed(["B"]).patients == {"B"}
    assert PatientScope().narrowed(None).patients is None


def test_an_agent_is_refused_every_decision_and_nothing_is_written(
    guarded: tuple[mc.MemoryEngine, dict[str, Any]],
) -> None:
    eng, it = guarded
    agent = eng.acting_as(AGENT, Role.AGENT)
    calls = _calls(eng, it)
    before = _ledger(eng)
    for name in WRITES:
        if name == "add_memory":
            continue
        with pytest.raises(mc.PermissionDeniedError) as err:
            calls[name](agent)
        assert err.value.action == name and err.value.role == "agent", name
        assert "ward-assistant is an agent" in str(err.value)
        assert _ledger(eng) == before, name
    # keeping an older memory beside the new one takes a supersession back: a reviewer's call
    with pytest.raises(mc.PermissionDeniedError) as err:
        agent.add_memory(PID, "Penicillin: hives", "allergy", keep={it["memory"].id})
    assert err.value.action == "reject_supersession" and _ledger(eng) == before


def test_an_agent_writes_and_is_told_under_its_own_name(
    guarded: tuple[mc.MemoryEngine, dict[str, Any]],
) -> None:
    eng, it = guarded
    agent = eng.acting_as(AGENT, Role.AGENT, patients=[PID])
    res = agent.add_memory(PID, "Patient reports walking 30 minutes daily", "observation")
    assert res.memory.source == AGENT  # the memory names who wrote it
    (row,) = eng.audit_log(entity_id=res.memory.id)
    assert (row.action, row.actor) == ("add", AGENT)
    assert audit_sentence(row, {}) == (
        "agent ward-assistant wrote “Patient reports walking 30 minutes daily” (observation)"
    )
    ctx = agent.get_context(PID, "Does the patient have a penicillin allergy?")
    found = agent.search(PID, "walking", k=2)
    assert ctx.injection_id and found
    searched, given = eng.injections(PID)[:2]  # newest first
    assert given.id == ctx.injection_id and given.agent == AGENT and given.text == ctx.text
    assert searched.agent == AGENT and searched.query == "walking"
    assert [i for i, _ in searched.items] == [s.memory.id for s in found]
    assert found[0].memory.content in searched.text
    assert injection_sentence(given).startswith("agent ward-assistant was given ")
    assert actor_label(AGENT) == "agent ward-assistant"
    # reads: the pending review of the fixture's allergies, a memory's history
    (pending,) = agent.reviews()
    assert pending.id == it["sup"].id and agent.reviews(PID) == [pending]
    hist = agent.history(PID, it["memory"].id)
    assert [s.id for s in hist.supersessions] == [it["sup"].id]
    assert set(hist.others) == {pending.new_id} and hist.audit
    assert agent.propose(PID, "Patient: I stopped taking aspirin last week.") is not None


def test_a_promotion_by_an_agents_use_names_the_agent(clock: Any) -> None:
    from memory_core.embedding import HashingEmbedder

    eng = mc.open_engine("sqlite:///:memory:", HashingEmbedder(), clock=clock)
    m = eng.add_memory(PID, "Patient is fasting for a procedure", "observation", tier="short_term")
    agent = eng.acting_as(AGENT, Role.AGENT)
    for _ in range(eng.policy.decay.promote_after):
        clock.advance(minutes=1)
        agent.search(PID, "fasting procedure", k=1)
    (promo,) = eng.audit_log(action="promote")
    assert (promo.entity_id, promo.actor) == (m.memory.id, AGENT)
    eng.store.close()


def _scoped_calls(it: dict[str, Any]) -> dict[str, Callable[[Acting], Any]]:
    m = it["memory"].id
    return {
        "get_context": lambda a: a.get_context(OTHER, "allergies?"),
        "search": lambda a: a.search(OTHER, "penicillin"),
        "propose": lambda a: a.propose(OTHER, "Patient: I stopped aspirin."),
        "reviews": lambda a: a.reviews(OTHER),
        "get": lambda a: a.get(m, OTHER),
        "history": lambda a: a.history(OTHER, m),
        "add_memory": lambda a: a.add_memory(OTHER, "Patient walks daily", "observation"),
    }


def test_every_call_for_another_patient_is_refused_and_nothing_is_recorded(
    guarded: tuple[mc.MemoryEngine, dict[str, Any]],
) -> None:
    eng, it = guarded
    eng.add_memory(OTHER, "Patient is allergic to latex", "allergy")
    agent = eng.acting_as(AGENT, Role.AGENT, patients=[PID])
    calls = _scoped_calls(it)
    assert set(calls) == {*AGENT_CALLS, "add_memory"}
    before = _ledger(eng)
    for name, call in calls.items():
        with pytest.raises(mc.OutOfScopeError) as err:
            call(agent)
        assert err.value.patient_id == OTHER and err.value.allowed == [PID], name
        assert "outside the scope of agent:ward-assistant" in str(err.value)
        assert _ledger(eng) == before, name
    # every id-based change names its patient under a scope (no id reaches another patient)
    reviewer = eng.acting_as("dr.lee", Role.REVIEWER, patients=[PID])
    with pytest.raises(mc.OutOfScopeError):
        reviewer.pin(it["memory"].id)
    with pytest.raises(mc.PermissionDeniedError):
        reviewer.save_policy(eng.policy)  # store-wide: not for a principal held to patients
    assert _ledger(eng) == before
    # the reviews of every patient, as the scope allows
    assert {s.patient_id for s in agent.reviews()} <= {PID}


def test_what_an_agents_write_would_replace_waits_for_a_reviewer() -> None:
    """An agent's 'Stopped metformin because of stomach upset' replaced a clinician's
    medication memory at once (medication is an automatic type): what an agent's write would
    replace waits for a reviewer, whatever the evidence; the same words from a person apply."""
    eng = mc.open_engine("sqlite:///:memory:", "hashing")
    old = eng.add_memory(PID, "Metformin 500 mg twice daily", "medication", by="dr-lee").memory
    agent = eng.acting_as(AGENT, Role.AGENT, patients=[PID])
    res = agent.add_memory(PID, "Metformin stopped because of stomach upset", "medication")
    assert [(s.old_id, s.state.value) for s in res.supersessions] == [(old.id, "pending")]
    assert eng.get(old.id).status is mc.Status.ACTIVE
    person = eng.add_memory(PID, "Metformin stopped: eGFR 28", "medication", by="dr-lee")
    assert [s.state.value for s in person.supersessions if s.old_id == old.id] == ["auto"]
    eng.store.close()
