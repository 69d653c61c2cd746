"""API tokens: each lets a program act for one memory user, through the REST API and the MCP server.

The secret is shown once when made; the database keeps its SHA-256, so a leaked database does not leak
working tokens. A request carries it as `Authorization: Bearer <secret>` (or `Token <secret>`).
"""

import hashlib
import secrets
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from memory_engine.models import ApiToken, MemoryUser

SECRET_PREFIX = "mos_"
KEYWORDS = ("bearer", "token")


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(
    *, memory_user: MemoryUser, name: str = "", expires_at: datetime | None = None
) -> tuple[ApiToken, str]:
    """Make a token for the memory user, working until `expires_at` (None: until revoked); returns it
    and its secret (not stored, shown only now)."""
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        memory_user=memory_user, name=name, key_hash=_hash(secret), prefix=secret[:12], expires_at=expires_at
    )
    return token, secret


def token_revoke(*, token: ApiToken) -> None:
    """Stop the token working. Safe to repeat."""
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


# How precisely a token's last use is recorded: a busy client writes the row once a minute, not on
# every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_for_secret(secret: str) -> ApiToken | None:
    """The live token with this secret (its memory user loaded), or None (unknown, revoked or expired);
    marks it used (to the minute)."""
    now = timezone.now()
    token = (
        ApiToken.objects.select_related("memory_user")
        .filter(key_hash=_hash(secret), revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .first()
    )
    if token is not None and (token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def secret_from_header(header: str) -> str | None:
    """The secret in an Authorization header value, or None when it names another scheme."""
    parts = header.split()
    if len(parts) != 2 or parts[0].lower() not in KEYWORDS:
        return None
    return parts[1]


class TokenAccount:
    """Who a token-authenticated request is: not a playground account, only the token's memory user."""

    is_authenticated = True
    is_staff = False

    def __init__(self, token: ApiToken) -> None:
        self.token = token
        self.pk = None

    def __str__(self) -> str:
        return f"token {self.token.prefix}"


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """DRF authentication by API token; request.auth is the ApiToken."""

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        secret = secret_from_header(header)
        if secret is None:
            return None
        token = token_for_secret(secret)
        if token is None:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        return TokenAccount(token), token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes the token: an HTTP bearer scheme."""

    target_class = ApiTokenAuthentication
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An API token: `manage.py api_token create <user>`"}
