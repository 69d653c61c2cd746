"""API tokens at the door: a request carries one as `Authorization: Bearer <secret>` (or `Token <secret>`);
making, revoking and finding them is services/tokens.py."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from memory_engine.models import ApiToken
from memory_engine.services.tokens import token_for_secret

KEYWORDS = ("bearer", "token")


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
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "An API token: made on the playground's Tokens page, or by `manage.py api_token create <user>`"
            ),
        }
