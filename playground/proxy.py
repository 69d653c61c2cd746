"""The reverse proxy's configuration (`scripts/serve proxy`): playground/nginx.conf with each {{NAME}} filled
in from the environment, checked here so that a bad value stops the proxy with its name. The body limits are
the application's own, read from the same variables (memory_engine/config.py), so that what the proxy lets
through is what the application reads.

    python -m playground.proxy var/proxy/nginx.conf
"""

import re
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from memory_engine.config import envint, envstr, from_environment

TEMPLATE = Path(__file__).with_name("nginx.conf")
RATE = re.compile(r"[1-9][0-9]*r/[sm]")  # nginx's own form: requests a second or a minute
ADDRESS = re.compile(r"[\w.:\[\]-]+")  # host:port, [::1]:port, or a port alone (no spaces, no `;`)


def count(name: str, default: int) -> str:
    value = envint(name, default)
    if value < 1:
        raise ImproperlyConfigured(f"{name} must be a whole number of at least 1, got {value}")
    return str(value)


def matching(name: str, default: str, form: re.Pattern, example: str) -> str:
    value = envstr(name, default)
    if not form.fullmatch(value):
        raise ImproperlyConfigured(f"{name} must look like {example}, got {value!r}")
    return value


def values() -> dict[str, str]:
    """Each placeholder of the template, from the environment."""
    app = from_environment()
    connections = int(count("PROXY_WORKER_CONNECTIONS", 4096))
    return {
        "WEB_BIND": matching("PROXY_BIND", "0.0.0.0:8000", ADDRESS, "0.0.0.0:8000"),
        "MCP_BIND": matching("PROXY_MCP_BIND", "0.0.0.0:8001", ADDRESS, "0.0.0.0:8001"),
        "WEB_UPSTREAM": matching("PROXY_WEB_UPSTREAM", "web:8000", ADDRESS, "web:8000"),
        "MCP_UPSTREAM": matching("PROXY_MCP_UPSTREAM", "mcp:8001", ADDRESS, "mcp:8001"),
        "HEADER_TIMEOUT": count("PROXY_HEADER_TIMEOUT_SECONDS", 10),
        "CONNECTIONS_PER_ADDRESS": count("PROXY_CONNECTIONS_PER_ADDRESS", 20),
        "RATE": matching("PROXY_RATE", "10r/s", RATE, "10r/s or 600r/m"),
        "BURST": count("PROXY_BURST", 60),
        "WORKER_CONNECTIONS": str(connections),
        "WORKER_FILES": str(2 * connections + 64),
        "WEB_MAX_BODY": str(max(app["API_MAX_BODY_BYTES"], app["API_MAX_EXPORT_BYTES"])),
        "IMPORT_MAX_BODY": str(app["MAX_IMPORT_BYTES"]),
        "MCP_MAX_BODY": str(app["API_MAX_BODY_BYTES"]),
    }


def render(filled: dict[str, str]) -> str:
    return re.sub(r"\{\{([A-Z_]+)\}\}", lambda name: filled[name[1]], TEMPLATE.read_text())


if __name__ == "__main__":
    try:
        filled = values()
    except ImproperlyConfigured as exc:
        sys.exit(f"scripts/serve proxy: {exc}")
    Path(sys.argv[1]).write_text(render(filled))
