"""Serve the memory to MCP clients: `manage.py mcp_server --user alice` (stdio, for a desktop client that
starts it; it serves that memory user only) or `manage.py mcp_server --transport http --port 8001`
(streamable HTTP at /mcp, API token required, with the REST API's body limit and rate)."""

import uvicorn
from django.core.management.base import BaseCommand, CommandError

from memory_engine import housekeeping
from memory_engine.config import memory_settings
from memory_engine.interfaces.connections import GuardedProtocol, allow_connections
from memory_engine.interfaces.mcp_http import http_app
from memory_engine.interfaces.mcp_server import build_server
from memory_engine.models import external_id_validator


class Command(BaseCommand):
    help = "Run the MCP server over stdio or streamable HTTP."

    def add_arguments(self, parser):
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
        parser.add_argument(
            "--user",
            default=memory_settings().mcp_user_id,
            help="stdio: the memory user served, required (default MEMORYOS_MCP_USER_ID)",
        )
        parser.add_argument("--assistant", default=memory_settings().mcp_assistant_id, help="the default assistant id")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8001)

    def handle(self, *args, transport, user, assistant, host, port, **options):
        for value in filter(None, (user, assistant)):
            try:
                external_id_validator(value)
            except Exception as exc:
                raise CommandError(f"{value!r}: {exc}") from None
        housekeeping.start()  # index folders of spaces deleted elsewhere leave this process's disk
        if transport == "stdio":
            if not user:
                raise CommandError("over stdio name the memory user to serve: --user ID (or MEMORYOS_MCP_USER_ID)")
            build_server(user_id=user or None, assistant_id=assistant).run("stdio")
            return
        if user:
            raise CommandError("over HTTP the user is the API token's; --user applies to stdio only")
        url = f"http://{host}:{port}"
        self.stderr.write(f"MCP server at {url}/mcp (send an API token as Authorization: Bearer)")
        server = build_server(user_id=None, assistant_id=assistant, http_url=url)
        # Connections bounded as the web role's are (interfaces/connections.py).
        app = http_app(server, host=host)
        allow_connections()
        uvicorn.run(app, host=host, port=port, log_level="warning", http=GuardedProtocol, limit_concurrency=None)
