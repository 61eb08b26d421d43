"""The HTTP API (issue 33) through FastAPI's test client: the same operations as the MCP
server under /v1/patients/{id}/..., an OpenAPI schema, a bearer token required (from the token
file, never a default), each token held to the patients it grants, the agent's role enforced,
typed errors as JSON (400 / 403 / 404 / 409) and no stack trace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.server import grants as g
from memory_core.server.door import Door, error_body
from memory_core.server.httpapi import create_app
from tests.conftest import NOW
from tests.test_server_mcp import AGENT, OTHER, PID, ledger, seed

ROUTES = {
    ("post", "/v1/patients/{patient_id}/context"),
    ("post", "/v1/patients/{patient_id}/search"),
    ("post", "/v1/patients/{patient_id}/proposals"),
    ("post", "/v1/patients/{patient_id}/memories"),
    ("get", "/v1/patients/{patient_id}/reviews"),
    ("get", "/v1/reviews"),
    ("get", "/v1/patients/{patient_id}/memories/{memory_id}/history"),
    ("get", "/v1/launch"),
}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[dict[str, Any]]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    ids = seed(url)
    tokens = tmp_path / "tokens.json"
    mine = g.add_token(tokens, [PID], "ward 3")
    both = g.add_token(tokens, [PID, OTHER], "covering")
    eng = mc.open_engine(url, HashingEmbedder(), clock=lambda: NOW)
    door = Door(eng, AGENT)
    client = TestClient(create_app(door, g.Grants.load(tokens)), raise_server_exceptions=False)
    yield {"client": client, "ids": ids, "mine": mine, "both": both, "url": url, "door": door}
    eng.store.close()


def _h(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_openapi_schema_names_every_operation_and_the_bearer_scheme(
    api: dict[str, Any],
) -> None:
    schema = api["client"].get("/openapi.json").json()
    got = {(m, p) for p, ops in schema["paths"].items() for m in ops}
    assert got == ROUTES
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    ctx = schema["paths"]["/v1/patients/{patient_id}/context"]["post"]
    assert "allergies always first" in ctx["description"]
    assert api["client"].get("/docs").status_code == 404  # its pages would load a CDN


def test_the_operations_answer_as_the_agent(api: dict[str, Any]) -> None:
    c, ids, h = api["client"], api["ids"], _h(api["mine"])
    assert c.get("/v1/launch", headers=h).json() == {
        "agent": AGENT, "principal": f"agent:{AGENT}", "role": "agent", "patients": [PID],
    }  # fmt: skip
    r = c.post(f"/v1/patients/{PID}/context", json={"question": "Any drug allergies?"}, headers=h)
    assert r.status_code == 200 and "penicillin" in r.json()["section"]
    injection = r.json()["injection_id"]
    r = c.post(f"/v1/patients/{PID}/search", json={"query": "metformin", "k": 2}, headers=h)
    assert r.json()["memories"][0]["content"] == "Takes metformin 500 mg twice daily"
    r = c.post(
        f"/v1/patients/{PID}/proposals",
        json={"transcript": "Patient: I stopped taking metformin last week."},
        headers=h,
    )
    assert r.json()["written"] is False and r.json()["proposals"]
    r = c.post(
        f"/v1/patients/{PID}/memories",
        json={"content": "Patient walks 30 minutes daily", "memory_type": "social"},
        headers=h,
    )
    assert r.status_code == 201 and r.json()["memory"]["source"] == f"agent:{AGENT}"
    written = r.json()["memory"]["memory_id"]
    (review,) = c.get(f"/v1/patients/{PID}/reviews", headers=h).json()["reviews"]
    assert review["supersession_id"] == ids["sup"]
    assert c.get("/v1/reviews", headers=h).json()["reviews"] == [review]
    r = c.get(f"/v1/patients/{PID}/memories/{ids['allergy']}/history", headers=h)
    assert r.json()["replaced_by"][0]["rule"] and r.json()["events"]
    eng = api["door"].engine
    assert {i.id: i.agent for i in eng.injections(PID)}[injection] == f"agent:{AGENT}"
    (row,) = eng.audit_log(entity_id=written)
    assert row.actor == f"agent:{AGENT}"


def test_a_token_reaches_only_the_patients_it_grants(api: dict[str, Any]) -> None:
    c, ids = api["client"], api["ids"]
    before = ledger(api["url"])
    mine = _h(api["mine"])
    for method, path, body in (
        ("post", f"/v1/patients/{OTHER}/context", {"question": "Any allergies?"}),
        ("post", f"/v1/patients/{OTHER}/search", {"query": "latex"}),
        ("post", f"/v1/patients/{OTHER}/proposals", {"transcript": "Patient: I stopped aspirin."}),
        ("post", f"/v1/patients/{OTHER}/memories", {"content": "x", "memory_type": "social"}),
        ("get", f"/v1/patients/{OTHER}/reviews", None),
        ("get", f"/v1/patients/{OTHER}/memories/{ids['allergy']}/history", None),
    ):
        r = c.request(method, path, json=body, headers=mine)
        assert r.status_code == 403, path
        assert r.json()["error"] == "forbidden" and r.json()["patient_id"] == OTHER
    assert ledger(api["url"]) == before
    both = _h(api["both"])
    r = c.post(f"/v1/patients/{OTHER}/context", json={"question": "Any allergies?"}, headers=both)
    assert r.status_code == 200 and "latex" in r.json()["section"]


def test_a_server_started_for_some_patients_narrows_every_token(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    seed(url)
    tokens = tmp_path / "tokens.json"
    both = g.add_token(tokens, [PID, OTHER])
    eng = mc.open_engine(url, HashingEmbedder(), clock=lambda: NOW)
    c = TestClient(create_app(Door(eng, AGENT, [PID]), g.Grants.load(tokens)))
    r = c.post(f"/v1/patients/{OTHER}/context", json={"question": "x"}, headers=_h(both))
    assert r.status_code == 403
    assert c.get("/v1/launch", headers=_h(both)).json()["patients"] == [PID]
    eng.store.close()


@pytest.mark.parametrize("auth", [None, "Bearer nope", "Basic dXNlcjpwYXNz", "Bearer "])
def test_without_a_known_bearer_token_nothing_answers(
    api: dict[str, Any], auth: str | None
) -> None:
    c = api["client"]
    before = ledger(api["url"])
    headers = {} if auth is None else {"Authorization": auth}
    for method, path, body in (
        ("get", "/v1/launch", None),
        ("post", f"/v1/patients/{PID}/context", {"question": "Any allergies?"}),
        ("post", f"/v1/patients/{PID}/memories", {"content": "x", "memory_type": "social"}),
        ("post", f"/v1/patients/{PID}/context", {"bad": 1}),  # 401 before the body's 400
    ):
        r = c.request(method, path, json=body, headers=headers)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.json()["error"] == "unauthorized"
    assert ledger(api["url"]) == before


def test_typed_errors_are_json_without_a_trace(api: dict[str, Any]) -> None:
    c, h = api["client"], _h(api["mine"])
    before = ledger(api["url"])
    r = c.post(
        f"/v1/patients/{PID}/memories", json={"content": " ", "memory_type": "social"}, headers=h
    )
    assert r.status_code == 400 and r.json()["field"] == "content"
    r = c.post(f"/v1/patients/{PID}/search", json={"query": "x", "k": 0}, headers=h)
    assert r.status_code == 400 and r.json()["field"] == "k"
    r = c.post(f"/v1/patients/{PID}/context", json={"max_tokens": 5}, headers=h)
    assert r.status_code == 400 and r.json()["field"] == "question"
    r = c.post(f"/v1/patients/{PID}/context", content=b"{not json", headers=h)
    assert r.status_code == 400
    r = c.get(f"/v1/patients/{PID}/memories/mem_missing/history", headers=h)
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    assert ledger(api["url"]) == before
    # 409: a conflict with the record's state; 500: nothing of the failure is shown
    status, body = error_body(mc.StateError("already confirmed"))
    assert (status, body["error"]) == (409, "conflict")
    status, body = error_body(mc.ConflictError("moved"))
    assert status == 409
    status, body = error_body(RuntimeError("secret detail at /srv/x.py line 3"))
    assert status == 500 and "secret" not in json.dumps(body)


def test_a_failure_inside_a_call_shows_no_trace(
    api: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("the disk at /srv/store.db is on fire")

    monkeypatch.setattr(api["door"], "get_patient_context", boom)
    r = api["client"].post(
        f"/v1/patients/{PID}/context", json={"question": "x"}, headers=_h(api["mine"])
    )
    assert r.status_code == 500 and r.json()["error"] == "internal"
    assert "fire" not in r.text and "Traceback" not in r.text


def test_the_token_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.json"
    token = g.add_token(path, ["NW-1"], "launch")
    doc = json.loads(path.read_text())
    assert token not in path.read_text()  # only its digest is kept
    assert doc["tokens"][0] == {"sha256": g.digest(token), "patients": ["NW-1"], "label": "launch"}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    grants = g.Grants.load(path)
    assert grants.verify(token) == g.Grant(frozenset({"NW-1"}), "launch")
    assert grants.verify("x" + token) is None and grants.verify(None) is None
    monkeypatch.delenv(g.TOKENS_ENV, raising=False)
    with pytest.raises(mc.ConfigurationError, match="no default"):
        g.resolve(None)
    monkeypatch.setenv(g.TOKENS_ENV, str(path))
    assert len(g.resolve(None)) == 1
    for bad, where in (
        ({"tokens": []}, "lists no token"),
        ({"tokens": [{"sha256": "ab", "patients": ["NW-1"]}]}, r"tokens\[0\]\.sha256"),
        ({"tokens": [{"sha256": "a" * 64, "patients": []}]}, r"tokens\[0\]\.patients"),
        ({"tokens": [{"sha256": "a" * 64, "patients": ["a b"]}]}, r"tokens\[0\]\.patients"),
        ([], "must be a JSON object"),
    ):
        with pytest.raises(mc.ConfigurationError, match=where):
            g.Grants.from_document(bad)


def test_the_warm_up_writes_nothing_and_loads_the_patients(api: dict[str, Any]) -> None:
    before = ledger(api["url"])
    door = Door(api["door"].engine, AGENT, [PID])
    door.warm_in_background().join(timeout=60)
    assert ledger(api["url"]) == before
    assert PID in door.engine._core.snapshots.cache  # its snapshot is built


def test_why_a_search_matched_is_said_in_words(api: dict[str, Any]) -> None:
    """A search result's reasons name a test as a clinician writes it and say what the query
    reached it through without an arrow or a code ("matched through kidney function (eGFR)",
    never "kidney function → egfr" or "loinc:…")."""
    door: Door = api["door"]
    door.engine.add_memory(PID, "Patient's eGFR fell to 48 mL/min/1.73m2", "lab_result")
    found = door.search_memories(PID, "How is her kidney function?", k=3)["memories"]
    hit = next(m for m in found if "eGFR" in m["content"])
    why = " | ".join(hit["why"])
    assert "matched through kidney function (eGFR)" in why, why
    assert "about what the query names: eGFR" in why, why
    assert "→" not in why and "loinc:" not in why and "egfr" not in why, why
