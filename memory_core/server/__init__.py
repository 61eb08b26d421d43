"""The agent's door (issue 33): an MCP server and an HTTP API over the engine, acting as one
named agent principal (``agent:<name>``, :mod:`memory_core.access`) held to the patients it
was started for and, over HTTP, to the patients its bearer token grants.

- :mod:`.door` -- the operations both servers offer (context, search, proposals, remember,
  reviews, history) on the one guarded path (``engine.acting_as``), their results as JSON and
  the engine's typed errors as JSON with an HTTP status;
- :mod:`.grants` -- the bearer tokens a configuration file grants, each with its patients (a
  SMART-on-FHIR style launch context: the patient comes from the token, not from the model);
- :mod:`.mcpserver` -- the MCP server (official SDK, ``MCPServer``) over stdio or Streamable
  HTTP;
- :mod:`.httpapi` -- the HTTP API (FastAPI on uvicorn) under ``/v1/patients/{id}/...``.

Imported only by the CLI's ``mcp`` and ``serve`` commands: the engine never imports it."""
