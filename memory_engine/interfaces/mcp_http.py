"""The MCP server over streamable HTTP, behind the REST API's limits.

- A body over MEMORYOS_API_MAX_BODY_BYTES answers 413 (the SDK checks it, given the API's limit).
- `/healthz` answers as the web server's does (interfaces/health.py), for load balancers and compose.
- Each request counts for its caller (the account owning its token's memory user, that memory user when
  no account holds it, or else the client address: interfaces/rates.py) against MEMORYOS_API_RATE, in the
  count the REST API keeps for the same caller: over it, 429 with Retry-After. A heavy tool counts against
  MEMORYOS_API_CHAT_RATE too (mcp_server.py). One count for every door and every token of an account.
"""

import json

from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from memory_engine.config import memory_settings
from memory_engine.interfaces.api.tokens import secret_from_header
from memory_engine.interfaces.health import PATH as HEALTH_PATH
from memory_engine.interfaces.health import health_report
from memory_engine.interfaces.mcp_server import run_orm
from memory_engine.interfaces.rates import API, admit, caller_key
from memory_engine.services.tokens import token_for_secret


def caller_of(scope: Scope) -> str:
    """Who sends a request (rates.caller_key): its live API token's account or memory user, or else its
    client address."""
    header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
    secret = secret_from_header(header)
    client = scope.get("client") or ("unknown",)
    return caller_key(token=token_for_secret(secret) if secret else None, address=client[0])


def rate_wait(scope: Scope) -> int:
    """Counts the request against its caller's general rate: 0 when it fits, else the seconds to wait."""
    return admit(caller_of(scope), API)


class RateLimited:
    """ASGI middleware: `/healthz`; and a request over its caller's rate gets 429, as from the REST API."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == HEALTH_PATH:
            healthy, checks = await run_orm(health_report)
            body = json.dumps({"status": "ok" if healthy else "failing", "checks": checks})
            await _answer(send, 200 if healthy else 503, body)
            return
        if scope["type"] == "http":
            wait = await run_orm(rate_wait, scope)
            if wait:
                body = json.dumps({"detail": f"Request was throttled. Expected available in {wait} seconds."})
                await _answer(send, 429, body, [(b"retry-after", str(wait).encode())])
                return
        await self.app(scope, receive, send)


async def _answer(send: Send, status: int, body: str, headers: list | None = None) -> None:
    headers = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode()})


def http_app(server: MCPServer, *, host: str) -> ASGIApp:
    """The server's streamable HTTP app at /mcp, with the API's body limit and rate."""
    app = server.streamable_http_app(max_request_body_size=memory_settings().api_max_body_bytes, host=host)
    return RateLimited(app)
