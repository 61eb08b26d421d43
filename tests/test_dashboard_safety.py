"""Memory content is untrusted in the dashboard too: never rendered as markdown or HTML."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import memory_core as mc

PAYLOAD = (
    "**bold** <b>x</b> <script>alert(1)</script> [link](javascript:alert(1)) ![i](http://e/x.png)"
)


def test_hostile_content_is_shown_as_text_everywhere(
    app: Callable[..., Any], demo_store: str
) -> None:
    eng = mc.open_engine(demo_store)
    eng.add_memory("NW-1001", PAYLOAD, "observation", importance=9, by="test")
    for page in (None, "views/memories.py", "views/decay_lab.py", "views/prompt_preview.py"):
        at = app(page)
        assert not at.exception
        for md in at.markdown:  # markdown elements never carry the content
            assert "<script>" not in md.value and "javascript:" not in md.value
        for chart in at.get("plotly_chart"):
            spec = json.dumps(json.loads(chart.proto.spec))
            assert "<script>" not in spec and "<b>x</b>" not in spec
    overview = app("views/overview.py")
    spec = json.loads(overview.get("plotly_chart")[0].proto.spec)
    custom = [c[0] for trace in spec["data"] for c in trace.get("customdata", [])]
    assert any("&lt;script&gt;" in c for c in custom)
