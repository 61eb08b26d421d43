"""The MCP server (issue 33) driven as any host drives it: the SDK's own client over stdio
(``python -m memory_core mcp --agent NAME --patient ID`` as a subprocess) and over Streamable
HTTP (``--http PORT`` with a bearer-token file): the six tools with their schemas, a context
recorded under the agent's name, a write audited under it, another patient refused with
nothing written or recorded, and the token's launch context holding every call."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

import memory_core as mc
from memory_core.embedding import HashingEmbedder
from memory_core.labels import audit_sentence, injection_sentence
from memory_core.server.grants import add_token
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parents[1]
PID, OTHER = "NW-1001", "NW-1002"
AGENT = "ward-assistant"
TOOLS = {
    "get_patient_context",
    "search_memories",
    "propose_memories",
    "remember",
    "list_reviews",
    "memory_history",
}


def seed(url: str) -> dict[str, str]:
    """A small store: an allergy with a pending review against it, a medication and a lab
    result for PID; an allergy of OTHER. Returns the ids the tests look at."""
    eng = mc.open_engine(url, HashingEmbedder(), clock=lambda: NOW)
    vec = [1.0] + [0.0] * (eng.embedder.dimensions - 1)
    old, new = (
        eng.add_memories(
            [
                {
                    "patient_id": PID,
                    "content": text,
                    "memory_type": "allergy",
                    "created_at": NOW - timedelta(days=days),
                    "embedding": vec,
                }
            ]
        )[0]
        for text, days in (("Patient has a penicillin allergy", 90), ("Penicillin: rash only", 3))
    )
    med = eng.add_memory(PID, "Takes metformin 500 mg twice daily", "medication")
    eng.add_memory(PID, "HbA1c 7.9% on 2026-05-02", "lab_result")
    eng.add_memory(OTHER, "Patient is allergic to latex", "allergy")
    (sup,) = new.supersessions
    eng.store.close()
    return {"allergy": old.memory.id, "newer": new.memory.id, "sup": sup.id, "med": med.memory.id}


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, dict[str, str]]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    return url, seed(url)


def ledger(url: str) -> tuple[Any, ...]:
    """What a call could have written: the audit, the injections, memories and versions."""
    eng = mc.open_engine(url, HashingEmbedder())
    try:
        return (
            len(eng.audit_log(limit=100_000)),
            {p: [i.id for i in eng.injections(p)] for p in (PID, OTHER)},
            {p: eng.store.versions(p) for p in (PID, OTHER)},
        )
    finally:
        eng.store.close()


def server_args(url: str, *extra: str) -> list[str]:
    return [
        "-m", "memory_core", "--store", url, "--embedder", "hashing",
        "mcp", "--agent", AGENT, *extra,
    ]  # fmt: skip


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _body(result: Any) -> dict[str, Any]:
    """A tool error's JSON body (the SDK prefixes the tool's message)."""
    assert result.is_error
    text = result.content[0].text
    return dict(json.loads(text[text.index("{") :]))


async def conversation(client: Any, ids: dict[str, str]) -> dict[str, Any]:
    """What a host does: list the tools, ask for context, search, propose, remember, read the
    reviews and a history, and try another patient. Returns what the checks need."""
    out: dict[str, Any] = {}
    tools = {t.name: t for t in (await client.list_tools()).tools}
    out["tools"] = tools
    ctx = await client.call_tool(
        "get_patient_context", {"patient_id": PID, "question": "Any drug allergies?"}
    )
    out["context"] = ctx.structured_content
    found = await client.call_tool("search_memories", {"patient_id": PID, "query": "metformin"})
    out["search"] = found.structured_content
    proposed = await client.call_tool(
        "propose_memories",
        {"patient_id": PID, "transcript": "Patient: I stopped taking metformin last week."},
    )
    out["proposals"] = proposed.structured_content
    wrote = await client.call_tool(
        "remember",
        {"patient_id": PID, "content": "Patient walks 30 minutes daily", "memory_type": "social"},
    )
    out["remember"] = wrote.structured_content
    out["reviews"] = (await client.call_tool("list_reviews", {})).structured_content
    out["history"] = (
        await client.call_tool("memory_history", {"patient_id": PID, "memory_id": ids["allergy"]})
    ).structured_content
    out["resource"] = await client.read_resource(f"patient://{PID}/context")
    return out


async def refusals(client: Any, ids: dict[str, str]) -> list[Any]:
    """Every tool asked about another patient (or for a decision it may not make)."""
    calls = [
        ("get_patient_context", {"patient_id": OTHER, "question": "Any allergies?"}),
        ("search_memories", {"patient_id": OTHER, "query": "latex"}),
        ("propose_memories", {"patient_id": OTHER, "transcript": "Patient: I stopped aspirin."}),
        ("remember", {"patient_id": OTHER, "content": "Walks daily", "memory_type": "social"}),
        ("list_reviews", {"patient_id": OTHER}),
        ("memory_history", {"patient_id": OTHER, "memory_id": ids["allergy"]}),
    ]
    return [await client.call_tool(name, args) for name, args in calls]


def check_conversation(url: str, ids: dict[str, str], out: dict[str, Any]) -> None:
    tools = out["tools"]
    assert set(tools) == TOOLS
    for t in tools.values():
        assert t.description and len(t.description) > 80  # words a clinician reads
        props = t.input_schema["properties"]
        assert all(p.get("description") for p in props.values()), t.name
        if t.name != "list_reviews":
            assert "patient_id" in t.input_schema["required"]
    assert set(tools["get_patient_context"].input_schema["required"]) == {"patient_id", "question"}
    ctx = out["context"]
    assert "penicillin" in ctx["section"] and ctx["injection_id"].startswith("inj_")
    assert ctx["safety_omitted"] == []
    (hit, *_) = out["search"]["memories"]
    assert hit["content"] == "Takes metformin 500 mg twice daily" and hit["status"] == "active"
    assert hit["why"] and hit["current_importance"] > 0 and hit["written_at"]
    assert out["proposals"]["written"] is False and out["proposals"]["proposals"]
    wrote = out["remember"]
    assert wrote["memory"]["source"] == f"agent:{AGENT}"
    (review,) = out["reviews"]["reviews"]
    assert review["supersession_id"] == ids["sup"] and review["state"] == "pending"
    assert review["older"] == "Patient has a penicillin allergy"
    hist = out["history"]
    assert [s["supersession_id"] for s in hist["replaced_by"]] == [ids["sup"]]
    assert hist["events"] and hist["memory"]["memory_id"] == ids["allergy"]
    assert "penicillin" in out["resource"].contents[0].text
    # the ledger and the audit name the agent
    eng = mc.open_engine(url, HashingEmbedder())
    injections = eng.injections(PID)
    assert {i.agent for i in injections} == {f"agent:{AGENT}"}
    assert ctx["injection_id"] in {i.id for i in injections}
    assert any(injection_sentence(i).startswith(f"agent {AGENT} was given") for i in injections)
    (row,) = eng.audit_log(entity_id=wrote["memory"]["memory_id"])
    assert row.actor == f"agent:{AGENT}"
    assert audit_sentence(row, {}).startswith(f"agent {AGENT} wrote “Patient walks")
    eng.store.close()


def check_refusals(results: list[Any]) -> None:
    for r in results:
        body = _body(r)
        assert (body["status"], body["error"], body["patient_id"]) == (403, "forbidden", OTHER)
        assert "outside the scope" in body["message"]


def test_mcp_over_stdio_as_any_host_speaks_it(store: tuple[str, dict[str, str]]) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    url, ids = store
    params = StdioServerParameters(
        command=sys.executable, args=server_args(url, "--patient", PID), env=_env()
    )

    async def run() -> tuple[dict[str, Any], list[Any], Any]:
        async with Client(params) as client:
            out = await conversation(client, ids)
            before = ledger(url)
            refused = await refusals(client, ids)
            return out, refused, before

    out, refused, before = anyio.run(run)
    check_conversation(url, ids, out)
    check_refusals(refused)
    assert ledger(url) == before  # nothing written or recorded by the refused calls


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(args: list[str], port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A server subprocess, once it accepts connections on ``port`` (at most 30 s)."""
    proc = subprocess.Popen([sys.executable, *args], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the server did not start in 30 s")


@pytest.fixture(scope="module")
def http_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('http') / 'store.db'}"
    return url, seed(url)


@pytest.fixture(scope="module")
def http_server(
    http_store: tuple[str, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, str], str, str]]:
    """The MCP server over Streamable HTTP, no --patient: each token's grant holds it (one
    server for the module: the refused requests write nothing)."""
    url, ids = http_store
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    mine = add_token(tokens, [PID], "ward 3")
    theirs = add_token(tokens, [OTHER], "ward 5")
    port = _free_port()
    env = {**_env(), "MEMORY_CORE_TOKENS": str(tokens)}
    proc = start(server_args(url, "--http", str(port)), port, env)
    try:
        yield f"http://127.0.0.1:{port}/mcp", ids, mine, theirs
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


def _client(endpoint: str, token: str | None) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    return Client(streamable_http_client(endpoint, http_client=http))


def test_mcp_over_streamable_http_holds_each_token_to_its_patients(
    http_server: tuple[str, dict[str, str], str, str], http_store: tuple[str, dict[str, str]]
) -> None:
    endpoint, ids, mine, theirs = http_server
    url = http_store[0]

    async def run() -> tuple[dict[str, Any], list[Any], Any, Any]:
        async with _client(endpoint, mine) as client:
            out = await conversation(client, ids)
            before = ledger(url)
            refused = await refusals(client, ids)
        async with _client(endpoint, theirs) as client:  # the other launch: the other patient
            ok = await client.call_tool(
                "get_patient_context", {"patient_id": OTHER, "question": "Any allergies?"}
            )
            no = await client.call_tool(
                "get_patient_context", {"patient_id": PID, "question": "Any allergies?"}
            )
        return out, refused, before, (ok, no)

    out, refused, before, (ok, no) = anyio.run(run)
    check_conversation(url, ids, out)
    check_refusals(refused)
    assert "latex" in ok.structured_content["section"]
    assert _body(no)["patient_id"] == PID
    after = ledger(url)
    assert after[0] == before[0] and after[1][PID] == before[1][PID]


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_mcp_over_http_without_a_known_token_is_refused(
    http_server: tuple[str, dict[str, str], str, str], token: str | None
) -> None:
    import httpx2

    endpoint = http_server[0]
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    r = httpx2.post(endpoint, json=init, headers=headers, timeout=30)
    assert r.status_code == 401


def test_over_http_there_is_no_default_token(
    store: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from memory_core.cli import main

    url, _ = store
    monkeypatch.delenv("MEMORY_CORE_TOKENS", raising=False)
    before = ledger(url)
    for command in (["mcp", "--agent", AGENT, "--http", "0"], ["serve", "--agent", AGENT]):
        assert main(["--store", url, "--embedder", "hashing", *command]) == 2
        err = capsys.readouterr().err
        assert "bearer token is required" in err and "Traceback" not in err
    assert ledger(url) == before
