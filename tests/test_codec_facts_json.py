"""The stored JSON of a memory's facts is encoded once per facts object (store/codec.py,
issue 34): the same text as memory_core.facts.to_json, for every object, whatever the cache
holds."""

from __future__ import annotations

from memory_core.facts import read, to_json
from memory_core.store import codec


def test_facts_json_is_to_json_once_per_object(monkeypatch) -> None:
    calls: list[object] = []
    real = codec.to_json

    def counted(facts):  # type: ignore[no-untyped-def]
        calls.append(facts)
        return real(facts)

    monkeypatch.setattr(codec, "to_json", counted)
    monkeypatch.setattr(codec, "_FACTS_JSON", {})
    a = read("Metformin 500 mg twice daily", "medication")
    b = read("HbA1c 7.1% in March", "lab_result")
    for _ in range(3):
        assert codec.facts_json(a) == to_json(a)
        assert codec.facts_json(b) == to_json(b)
    assert calls == [a, b]


def test_facts_json_never_answers_for_another_object(monkeypatch) -> None:
    """An id reused by another object (the first one freed) is never taken for it: the cache
    holds the object with its text and checks it is the same."""
    monkeypatch.setattr(codec, "_FACTS_JSON", {})
    a = read("Lisinopril 10 mg daily", "medication")
    b = read("Patient lives alone", "social")
    codec._FACTS_JSON[id(b)] = (a, to_json(a))  # as if b had a's id
    assert codec.facts_json(b) == to_json(b)


def test_facts_json_bounded(monkeypatch) -> None:
    monkeypatch.setattr(codec, "_FACTS_JSON", {})
    monkeypatch.setattr(codec, "FACTS_JSON_MAX", 2)
    texts = ["Metformin 500 mg", "Lisinopril 10 mg", "Atorvastatin 20 mg", "Aspirin 81 mg"]
    for t in texts:
        f = read(t, "medication")
        assert codec.facts_json(f) == to_json(f)
        assert len(codec._FACTS_JSON) <= 2
