"""The MCP server over streamable HTTP, behind the REST API's limits.

- A body over MEMORYOS_API_MAX_BODY_BYTES answers 413 (the SDK checks it, given the API's limit).
- `/healthz` answers as the web server's does (interfaces/health.py), for load balancers and compose.
- Each caller (an API token, or else the client address) counts against the API's MEMORYOS_API_RATE,
  in the same cache entries as the REST API (api/throttling.py): over it, 429 with Retry-After. One
  count for both doors, so a token does not get twice the rate by using both.
"""

import json

from mcp.server.mcpserver import MCPServer
from rest_framework.throttling import SimpleRateThrottle
from starlette.types import ASGIApp, Receive, Scope, Send

from memory_engine.config import memory_settings
from memory_engine.interfaces.api.tokens import secret_from_header
from memory_engine.interfaces.health import PATH as HEALTH_PATH
from memory_engine.interfaces.health import health_report
from memory_engine.interfaces.mcp_server import run_orm
from memory_engine.services.tokens import token_for_secret


class CallerThrottle(SimpleRateThrottle):
    """The REST API's `api` rate, for a caller named as api/throttling.CallerRateThrottle names it."""

    scope = "api"

    def __init__(self, caller: str) -> None:
        super().__init__()
        self.caller = caller

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.caller}


def caller_of(scope: Scope) -> str:
    """Who sends a request: its live API token, or else its client address."""
    header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
    secret = secret_from_header(header)
    token = token_for_secret(secret) if secret else None
    if token is not None:
        return f"token-{token.pk}"
    client = scope.get("client") or ("unknown",)
    return f"address-{client[0]}"


def allowed(scope: Scope) -> tuple[bool, int]:
    """Whether the request is within its caller's rate, and else how many seconds until it is."""
    throttle = CallerThrottle(caller_of(scope))
    if throttle.allow_request(None, None):
        return True, 0
    return False, max(1, round(throttle.wait() or 1))


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
            ok, wait = await run_orm(allowed, scope)
            if not ok:
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
