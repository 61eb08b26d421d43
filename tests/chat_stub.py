"""A loopback stand-in for an OpenAI-compatible chat-completions endpoint (nothing leaves
127.0.0.1): it records every request and answers with the assistant message the test sets.

Subclass :class:`ChatHandler` per test module (its class attributes are the module's state)
and serve it with :func:`serve`::

    class _Handler(ChatHandler):
        seen: ClassVar[list[dict[str, Any]]] = []

    @pytest.fixture
    def server() -> Iterator[str]:
        yield from serve(_Handler)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class ChatHandler(BaseHTTPRequestHandler):
    """Answers every POST with one chat completion whose message content is ``answer``,
    after ``delay`` seconds; every request is appended to ``seen`` as ``{"path", "body"}``."""

    seen: ClassVar[list[dict[str, Any]]] = []
    answer: ClassVar[str] = "{}"
    delay: ClassVar[float] = 0.0
    raw_body: ClassVar[bytes | None] = None  # a 200 reply's body as is (not a completion)

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        cls = type(self)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls.seen.append({"path": self.path, "body": body})
        if cls.delay:
            time.sleep(cls.delay)
        out = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": cls.answer},
                }
            ],
        }
        raw = json.dumps(out).encode() if cls.raw_body is None else cls.raw_body
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (the timeout case)


def serve(handler: type[ChatHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port; yields the base URL (``.../v1``). Resets
    ``seen`` and ``delay`` first."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    handler.seen = []
    handler.delay = 0.0
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()
