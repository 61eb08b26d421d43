"""The OpenAI embedder and the model facts reader through the real `openai` client against a
loopback stand-in server (no request leaves 127.0.0.1)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import memory_core as mc
from memory_core.contradictions import RuleAdjudicator
from memory_core.embedding.openai import OpenAIEmbedder, make_client
from memory_core.facts_llm import ModelReader
from tests.conftest import NOW


class _Handler(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []  # noqa: RUF012
    answer = json.dumps({"facts": []})

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        if self.path.endswith("/embeddings"):
            dims = body.get("dimensions", 8)
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": [float(len(t) % 7 + 1)] + [0.5] * (dims - 1),
                }
                for i, t in enumerate(body["input"])
            ][::-1]  # out of order on purpose: the client must sort by index
            out = {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        else:
            out = {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": _Handler.answer},
                    }
                ],
            }
        raw = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    _Handler.seen = []
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_embedder_sends_model_and_dimensions_and_orders_rows(server: str) -> None:
    client = make_client(api_key="sk-test", base_url=server)
    emb = OpenAIEmbedder("text-embedding-3-small", dimensions=16, client=client)
    out = emb.embed_batch(["a", "abcd"])
    assert out.shape == (2, 16) and emb.model_id == "openai:text-embedding-3-small"
    req = _Handler.seen[0]
    assert req["body"]["model"] == "text-embedding-3-small" and req["body"]["dimensions"] == 16
    assert req["auth"] == "Bearer sk-test"
    assert out[0][0] < out[1][0]  # row 0 is "a" (len 1 -> 2.0 before normalising)


def _fact(
    kind: str, name: str, quote: str, state: str = "active", value: str = ""
) -> dict[str, Any]:
    return {"kind": kind, "name": name, "quote": quote, "state": state, "value": value,
            "contexts": []}  # fmt: skip


def test_engine_on_openai_embedder_and_model_reader(server: str) -> None:
    """The model reads what the offline reader cannot key; the decision table decides."""
    client = make_client(api_key="sk-test", base_url=server)
    emb = OpenAIEmbedder("text-embedding-3-small", dimensions=16, client=client)
    adj = RuleAdjudicator(ModelReader("gpt-test", client=client))
    eng = mc.open_engine("sqlite:///:memory:", emb, adjudicator=adj, clock=lambda: NOW)
    # the offline reader keys metformin itself: the model is not asked
    eng.add_memory("NW-1", "Patient takes metformin 500 mg", "medication")
    assert not any(r["path"].endswith("/chat/completions") for r in _Handler.seen)
    # "the blood sugar tablets" names no drug the offline reader knows: the model reads it
    _Handler.answer = json.dumps(
        {"facts": [_fact("drug", "metformin", "the blood sugar tablets", "stopped")]}
    )
    res = eng.add_memory("NW-1", "I've stopped the blood sugar tablets", "medication")
    chat = [r for r in _Handler.seen if r["path"].endswith("/chat/completions")]
    assert len(chat) == 1 and chat[-1]["body"]["model"] == "gpt-test"
    assert res.memory.facts is not None and res.memory.facts.origin.value == "model"
    assert [(s.rule, s.method) for s in res.supersessions] == [("drug.stop", "rules")]


def test_an_unusable_answer_leaves_the_offline_facts(server: str) -> None:
    """An unreadable answer, or one whose key the lexicon cannot resolve, never keys a memory:
    the offline facts stay (here: nothing keyed, so nothing is superseded)."""
    client = make_client(api_key="sk-test", base_url=server)
    reader = ModelReader("gpt-test", client=client)
    eng = mc.open_engine(
        "sqlite:///:memory:",
        OpenAIEmbedder("text-embedding-3-small", 16, client),
        adjudicator=RuleAdjudicator(reader),
        clock=lambda: NOW,
    )
    eng.add_memory("NW-1", "Patient takes metformin 500 mg", "medication")
    answers = ("maybe?", json.dumps({"facts": [_fact("drug", "wonderdrug", "tablets")]}))
    # two statements in other words (the same words twice would restate the first)
    for answer, text in zip(
        answers, ("I stopped the tablets", "Gave up those tablets"), strict=True
    ):
        _Handler.answer = answer
        res = eng.add_memory("NW-1", text, "medication")
        assert res.supersessions == () and res.memory.facts is not None
        assert res.memory.facts.origin.value == "text"
    assert reader.fallbacks == 2 and reader.rejected == 1


def test_missing_configuration_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(mc.ConfigurationError, match="OPENAI_API_KEY"):
        make_client()
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.invalid")
    with pytest.raises(mc.ConfigurationError, match="AZURE_OPENAI_API_KEY"):
        make_client()
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    client = make_client()
    assert type(client).__name__ == "AzureOpenAI"  # built, nothing sent


def test_no_key_or_content_in_logs(server: str, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG)
    client = make_client(api_key="sk-secret-key-123", base_url=server)
    emb = OpenAIEmbedder("text-embedding-3-small", dimensions=16, client=client)
    eng = mc.open_engine("sqlite:///:memory:", emb, clock=lambda: NOW)
    eng.add_memory("NW-1", "Patient has a very private diagnosis", "condition")
    eng.build_context("NW-1", "private", record_access=True)
    assert "sk-secret-key-123" not in caplog.text
    assert "very private diagnosis" not in caplog.text
