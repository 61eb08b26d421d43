"""The MCP server (official Python SDK, ``mcp.server.mcpserver.MCPServer``): the six tools of
:class:`~memory_core.server.door.Door` and the resource ``patient://{patient_id}/context``,
over stdio (``python -m memory_core mcp --agent NAME``) or Streamable HTTP (``--http PORT``,
bound to 127.0.0.1 unless ``--host`` says otherwise, a bearer token required: :mod:`.grants`).

Over HTTP the SDK's bearer middleware refuses a request without a known token (401) before any
MCP message is read; each tool then reads the token's grant from the request it serves and
holds the call to those patients. Over stdio the host that started the process is trusted with
the server's own ``--patient`` list (there is no token to carry)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AnyHttpUrl, Field

from ..ingest.service import MAX_TRANSCRIPT_CHARS
from ..validation import MAX_QUERY_CHARS
from .door import DESCRIPTIONS, GENERAL_QUESTION, Door, error_body
from .grants import Grants

PatientId = Annotated[
    str,
    Field(description="The patient's id in this memory store (e.g. NW-1001).", max_length=64),
]
Grant = frozenset[str] | None

INSTRUCTIONS = (
    "Clinical memory of the patients you care for. Before answering about a patient call "
    "get_patient_context with the question and put its section in your context; after a "
    "session call propose_memories with the transcript and remember what a clinician would "
    "want kept. You may only reach the patients you were started for. Changes to allergies "
    "and other safety-critical facts wait for a human reviewer."
)


class TokenVerifier:
    """The SDK's token verifier over :class:`Grants`: a known token becomes an
    ``AccessToken`` whose claims carry the patients it grants."""

    def __init__(self, grants: Grants, agent: str) -> None:
        self.grants = grants
        self.agent = agent

    async def verify_token(self, token: str) -> AccessToken | None:
        grant = self.grants.verify(token)
        if grant is None:
            return None
        return AccessToken(
            token=token,
            client_id=f"agent:{self.agent}",
            scopes=[],
            claims={"patients": sorted(grant.patients), "label": grant.label},
        )


def _grant_of(ctx: Context[Any, Any], http: bool) -> Grant:
    """The patients the request's token grants (None over stdio: the server's own scope).
    Over HTTP a request that reached a tool without a verified token is refused."""
    if not http:
        return None
    request = ctx.request_context.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    token = user.access_token if isinstance(user, AuthenticatedUser) else None
    if token is None or not token.claims:
        raise ToolError(json.dumps({"error": "unauthorized", "status": 401}))
    return frozenset(token.claims.get("patients") or ())


def _call(fn: Callable[[], dict[str, Any]]) -> CallToolResult:
    """Run one operation: its JSON document as the structured content and (compact) as the
    text a host without structured content shows; a typed error becomes a tool error whose
    text is the JSON error body (the same as the HTTP API's), an unexpected one a bare
    "internal" error (every error is answered, none shows a trace)."""
    try:
        out = fn()
    except Exception as exc:
        _, body = error_body(exc)
        raise ToolError(json.dumps(body)) from None
    text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=out)


def build(door: Door, *, grants: Grants | None = None, host: str = "127.0.0.1") -> MCPServer:
    """The MCP server of ``door``; with ``grants`` (Streamable HTTP) every request needs a
    bearer token those grants know, and each call is held to the token's patients."""
    http = grants is not None
    kwargs: dict[str, Any] = {}
    if grants is not None:
        kwargs["token_verifier"] = TokenVerifier(grants, door.agent)
        # the tokens come from configuration, not from an authorization server: nothing is
        # advertised (no resource metadata), the issuer only names this server
        name = f"[{host}]" if ":" in host else host
        kwargs["auth"] = AuthSettings(
            issuer_url=AnyHttpUrl(f"http://{name}"), resource_server_url=None
        )
    server: MCPServer = MCPServer(
        "memory-core",
        title="Clinical memory",
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        **kwargs,
    )
    read = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    given = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    async def get_patient_context(
        ctx: Context[Any, Any],
        patient_id: PatientId,
        question: Annotated[
            str,
            Field(
                description="What you need to know, in words (e.g. 'Any drug allergies?').",
                max_length=MAX_QUERY_CHARS,
            ),
        ],
        max_tokens: Annotated[
            int | None,
            Field(description="Token budget of the section (default: no budget).", ge=1),
        ] = None,
    ) -> CallToolResult:
        g = _grant_of(ctx, http)
        return _call(lambda: door.get_patient_context(patient_id, question, max_tokens, grant=g))

    async def search_memories(
        ctx: Context[Any, Any],
        patient_id: PatientId,
        query: Annotated[str, Field(description="Words to look for.", max_length=MAX_QUERY_CHARS)],
        k: Annotated[int, Field(description="How many memories at most.", ge=1, le=50)] = 5,
    ) -> CallToolResult:
        g = _grant_of(ctx, http)
        return _call(lambda: door.search_memories(patient_id, query, k, grant=g))

    def propose_memories(
        ctx: Context[Any, Any],
        patient_id: PatientId,
        transcript: Annotated[
            str,
            Field(
                description="The session transcript, one turn per line ('Patient: ...').",
                max_length=MAX_TRANSCRIPT_CHARS,
            ),
        ],
    ) -> CallToolResult:
        g = _grant_of(ctx, http)
        return _call(lambda: door.propose_memories(patient_id, transcript, grant=g))

    def remember(
        ctx: Context[Any, Any],
        patient_id: PatientId,
        content: Annotated[
            str, Field(description="One short statement about the patient, in plain words.")
        ],
        memory_type: Annotated[
            str,
            Field(
                description="allergy, adverse_reaction, medication, condition, "
                "treatment_response, care_plan, lab_result, vital_sign, preference, social, "
                "observation, immunization or procedure."
            ),
        ],
    ) -> CallToolResult:
        g = _grant_of(ctx, http)
        return _call(lambda: door.remember(patient_id, content, memory_type, grant=g))

    def list_reviews(
        ctx: Context[Any, Any],
        patient_id: Annotated[
            str | None,
            Field(description="One patient, or none for every patient you may reach."),
        ] = None,
    ) -> CallToolResult:
        g = _grant_of(ctx, http)
        return _call(lambda: door.list_reviews(patient_id, grant=g))

    def memory_history(
        ctx: Context[Any, Any],
        patient_id: PatientId,
        memory_id: Annotated[str, Field(description="The memory's id (memory_id).")],
    ) -> CallToolResult:
        g = _grant_of(ctx, http)
        return _call(lambda: door.memory_history(patient_id, memory_id, grant=g))

    titles = {
        "get_patient_context": ("Patient context", given),
        "search_memories": ("Search memories", given),
        "propose_memories": ("Propose memories", read),
        "remember": ("Remember", given),
        "list_reviews": ("Waiting for review", read),
        "memory_history": ("Memory history", read),
    }
    for fn in (
        get_patient_context,
        search_memories,
        propose_memories,
        remember,
        list_reviews,
        memory_history,
    ):
        title, notes = titles[fn.__name__]
        server.add_tool(fn, title=title, description=DESCRIPTIONS[fn.__name__], annotations=notes)

    # the context and a search are answered on the event loop (a millisecond or two, no
    # thread hop: docs/agent.md's speed); proposals, writes and histories in a worker thread
    @server.resource(
        "patient://{patient_id}/context",
        name="patient-context",
        title="Patient context",
        description=(
            "The patient's context section for a general question (recorded as given to "
            "you, like get_patient_context)."
        ),
        mime_type="text/markdown",
    )
    def patient_context(patient_id: str, ctx: Context[Any, Any]) -> str:
        g = _grant_of(ctx, http)
        try:
            out = door.get_patient_context(patient_id, GENERAL_QUESTION, grant=g)
        except Exception as exc:
            raise ResourceError(json.dumps(error_body(exc)[1])) from None
        return str(out["section"])

    return server


def run_stdio(door: Door) -> None:
    server = build(door)
    door.warm_in_background()
    server.run("stdio")


def run_http(door: Door, grants: Grants, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Streamable HTTP on ``host:port`` (``/mcp``); loopback unless told otherwise."""
    server = build(door, grants=grants, host=host)
    door.warm_in_background()
    server.run("streamable-http", host=host, port=port)
