"""The HTTP API (FastAPI on uvicorn): the operations of
:class:`~memory_core.server.door.Door` under ``/v1/patients/{patient_id}/...``, an OpenAPI
schema at ``/openapi.json`` (no documentation pages: they would load scripts from a CDN),
started by
``python -m memory_core serve --agent NAME`` on 127.0.0.1 unless ``--host`` says otherwise.

Every route but the schema needs ``Authorization: Bearer <token>`` with a token the token file
grants (:mod:`.grants`; 401 otherwise), and the path's patient must be one the token (and the
server's ``--patient`` list) allows (403 otherwise, nothing read, written or recorded). Errors
are JSON (:func:`~memory_core.server.door.error_body`): 400 bad input naming its field, 403
outside the agent's role or patients, 404 not found, 409 a conflict with the record's state,
503 a busy store (retry), 500 without a stack trace."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import MemoryCoreError
from .door import DESCRIPTIONS, Door, error_body
from .grants import Grant, Grants

BEARER = HTTPBearer(auto_error=False, description="A token from the server's token file.")


class ContextRequest(BaseModel):
    question: str = Field(description="What the agent needs to know, in words.")
    max_tokens: int | None = Field(None, description="Token budget of the section.")


class SearchRequest(BaseModel):
    query: str = Field(description="Words to look for.")
    k: int = Field(5, description="How many memories at most (1-50).")


class ProposeRequest(BaseModel):
    transcript: str = Field(description="The session transcript, one turn per line.")


class RememberRequest(BaseModel):
    content: str = Field(description="One short statement about the patient.")
    memory_type: str = Field(description="allergy, medication, condition, lab_result, ...")


class Unauthorized(Exception):
    """No bearer token, or one the token file does not know."""


async def _grant(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)],
) -> Grant:
    """The grant of the request's bearer token (the app's ``state.grants``), else 401 (a
    digest and a lookup: answered on the event loop, no thread hop)."""
    grants: Grants = request.app.state.grants
    found = grants.verify(creds.credentials if creds is not None else None)
    if found is None:
        raise Unauthorized()
    return found


Granted = Annotated[Grant, Depends(_grant)]


def create_app(door: Door, grants: Grants) -> FastAPI:
    """The API of ``door``; ``grants``: the bearer tokens it accepts (required: no default)."""
    app = FastAPI(
        title="memory_core agent API",
        version="1",
        description=(
            f"Clinical memory for the agent **{door.agent}** ({door.actor}): the same "
            "operations as its MCP server. Every call is recorded under the agent's name; "
            "a call about a patient the bearer token does not grant is refused."
        ),
        # no /docs or /redoc pages: they load their scripts from a CDN (nothing leaves the
        # machine); the schema itself is served at /openapi.json
        docs_url=None,
        redoc_url=None,
    )

    app.state.grants = grants

    @app.exception_handler(Unauthorized)
    async def _unauthorized(request: Request, exc: Unauthorized) -> JSONResponse:
        return JSONResponse(
            {
                "error": "unauthorized",
                "status": 401,
                "message": "a bearer token the server's token file grants is required",
                "retryable": False,
            },
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "path", "query")]
        field = ".".join(loc) or "body"
        message = f"{field}: {first.get('msg', 'invalid request')}"
        return JSONResponse(
            {
                "error": "invalid",
                "status": 400,
                "message": message,
                "field": field,
                "retryable": False,
            },
            status_code=400,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"error": "http", "status": exc.status_code, "message": str(exc.detail)},
            status_code=exc.status_code,
        )

    @app.exception_handler(MemoryCoreError)
    async def _typed(request: Request, exc: MemoryCoreError) -> JSONResponse:
        status, body = error_body(exc)
        return JSONResponse(body, status_code=status)

    @app.exception_handler(Exception)
    async def _failed(request: Request, exc: Exception) -> JSONResponse:
        # the 500 says only that the server failed; the server's log has the trace
        status, body = error_body(exc)
        return JSONResponse(body, status_code=status)

    @app.get("/v1/launch", summary="Who this server acts as and which patients you may reach")
    def launch(g: Granted) -> dict[str, Any]:
        return door.launch(g.patients)

    @app.post(
        "/v1/patients/{patient_id}/context",
        summary="Patient context",
        description=DESCRIPTIONS["get_patient_context"],
    )
    # the context and a search are answered on the event loop, as over MCP (a millisecond or
    # two, no thread hop: docs/agent.md's speed); proposals, writes and histories in FastAPI's
    # worker threads
    async def get_patient_context(
        patient_id: str, body: ContextRequest, g: Granted
    ) -> dict[str, Any]:
        return door.get_patient_context(
            patient_id, body.question, body.max_tokens, grant=g.patients
        )

    @app.post(
        "/v1/patients/{patient_id}/search",
        summary="Search memories",
        description=DESCRIPTIONS["search_memories"],
    )
    async def search_memories(patient_id: str, body: SearchRequest, g: Granted) -> dict[str, Any]:
        return door.search_memories(patient_id, body.query, body.k, grant=g.patients)

    @app.post(
        "/v1/patients/{patient_id}/proposals",
        summary="Propose memories",
        description=DESCRIPTIONS["propose_memories"],
    )
    def propose_memories(patient_id: str, body: ProposeRequest, g: Granted) -> dict[str, Any]:
        return door.propose_memories(patient_id, body.transcript, grant=g.patients)

    @app.post(
        "/v1/patients/{patient_id}/memories",
        summary="Remember",
        description=DESCRIPTIONS["remember"],
        status_code=201,
    )
    def remember(patient_id: str, body: RememberRequest, g: Granted) -> dict[str, Any]:
        return door.remember(patient_id, body.content, body.memory_type, grant=g.patients)

    @app.get(
        "/v1/patients/{patient_id}/reviews",
        summary="Waiting for review (one patient)",
        description=DESCRIPTIONS["list_reviews"],
    )
    def list_reviews(patient_id: str, g: Granted) -> dict[str, Any]:
        return door.list_reviews(patient_id, grant=g.patients)

    @app.get(
        "/v1/reviews",
        summary="Waiting for review (every patient you may reach)",
        description=DESCRIPTIONS["list_reviews"],
    )
    def list_all_reviews(g: Granted) -> dict[str, Any]:
        return door.list_reviews(None, grant=g.patients)

    @app.get(
        "/v1/patients/{patient_id}/memories/{memory_id}/history",
        summary="Memory history",
        description=DESCRIPTIONS["memory_history"],
    )
    def memory_history(patient_id: str, memory_id: str, g: Granted) -> dict[str, Any]:
        return door.memory_history(patient_id, memory_id, grant=g.patients)

    return app


def run(door: Door, grants: Grants, *, host: str = "127.0.0.1", port: int = 8766) -> None:
    """Serve the API on ``host:port`` with uvicorn (loopback unless told otherwise)."""
    import uvicorn

    app = create_app(door, grants)
    door.warm_in_background()
    uvicorn.run(app, host=host, port=port, log_level="warning")
