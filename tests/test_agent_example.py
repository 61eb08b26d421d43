"""The example agent of docs/agent.md (issue 33), run as written: its Python block is taken
from the page and run against the seeded demo store, the MCP server started by the SDK's own
client over stdio, and a loopback chat-completions stub in place of the model. The model is
given the memory's section; the ledger records the context under the agent's name; what the
patient said is proposed and remembered under it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

import memory_core as mc
from tests.chat_stub import ChatHandler, serve

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "agent.md"
PID = "NW-1001"


class _Chat(ChatHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    answer: ClassVar[str] = "Thank you for telling me; please talk to Dr. Rivera before stopping."


@pytest.fixture
def chat() -> Iterator[str]:
    yield from serve(_Chat)


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)
    (script,) = [b for b in blocks if "async def turn" in b]
    return script


def test_the_example_agent_asks_answers_and_remembers_under_its_name(
    demo_store: str, chat: str, tmp_path: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(example(), "utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MEMORY_CORE_STORE": demo_store,
        "OPENAI_BASE_URL": chat,
        "OPENAI_API_KEY": "test-key",
        "PATIENT": PID,
    }
    question = "I stopped taking my metformin last week because of stomach upset."
    r = subprocess.run(
        [sys.executable, str(script), question],
        env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == _Chat.answer
    # the model was given the memory's section for this patient
    (call,) = _Chat.seen
    system = call["body"]["messages"][0]["content"]
    assert "Patient Context from Previous Interactions" in system and "⚠️" in system
    assert call["body"]["messages"][1]["content"] == question
    # the ledger and the audit name the agent
    eng = mc.open_engine(demo_store)
    latest = eng.injections(PID, limit=1)[0]
    assert latest.agent == "agent:ward-assistant" and latest.query == question
    assert latest.text == system.split("\n\n", 1)[1]
    rows = eng.audit_log(patient_id=PID, actor="agent:ward-assistant", action="add")
    assert rows and "metformin" in str(rows[0].after["content"]).lower()
    assert "remembered" in r.stderr
    eng.store.close()
