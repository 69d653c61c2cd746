"""The HTTP client for endpoints a space's owner chose: it calls the address that was checked and nothing
else. A person may point their space at any public HTTPS host, so the host is theirs, not ours:

- **No redirects.** A 307 to another address would have that address called with the memory prompt; the
  client answers it as the error it is (the SDK reports "HTTP 307"), and the status is all that is shown.
- **The address checked is the address called.** A name is resolved when the connection opens, every
  address it has must be public (`inputs.public_address`: not loopback, private, link-local or metadata,
  nor an IPv6 form carrying one), and the connection goes to the address checked, so a name that answers
  a public address to a check and 127.0.0.1 to the connection (DNS rebinding) gets nowhere. TLS still
  checks the certificate against the name.
- **No proxy from the environment**, which would connect on our behalf to whatever the name resolves to.

Hosts the operator allows (MEMORYOS_LLM_ALLOWED_HOSTS, the local model servers of development) are
called as they resolve. The deployment's own endpoint (MEMORYOS_LLM_BASE_URL) is the operator's and does
not go through this.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from memory_engine import inputs
from memory_engine.errors import InvalidParameter


class AddressRefused(httpcore2.ConnectError):
    """The endpoint's name resolves to an address the server must not call."""


class _CheckedBackend(httpcore2.SyncBackend):
    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        if not inputs.llm_host_allowed(host, port):
            try:
                host = inputs.llm_host_address(host, port)
            except InvalidParameter as exc:
                raise AddressRefused(exc.reason) from None
        return super().connect_tcp(host, port, timeout, local_address, socket_options)


class _CheckedTransport(httpx2.HTTPTransport):
    """httpx's transport over a connection pool whose connections go through _CheckedBackend (httpx
    builds its pool in its constructor and takes no backend, so the pool is built again here)."""

    def __init__(self) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False),
            max_connections=10,
            max_keepalive_connections=5,
            keepalive_expiry=5.0,
            network_backend=_CheckedBackend(),
        )


def checked_client(timeout_seconds: float) -> httpx2.Client:
    """An HTTP client for an endpoint a space chose (see the module docstring)."""
    return httpx2.Client(
        transport=_CheckedTransport(), follow_redirects=False, trust_env=False, timeout=timeout_seconds
    )
