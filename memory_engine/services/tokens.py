"""API tokens: each lets a program act for one memory user, through the REST API and the MCP server.

The secret is shown once when made; the database keeps its SHA-256, so a leaked database does not leak
working tokens. Made by `manage.py api_token` (the operator, for any memory user) and by an account on its
tokens page (for the memory users it owns: `account_*` below); read by the API's and the MCP server's
authentication (`token_for_secret`).
"""

import hashlib
import secrets
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from memory_engine import inputs
from memory_engine.errors import MemoryInputError
from memory_engine.models import ApiToken, MemoryUser

SECRET_PREFIX = "mos_"
# How many tokens that still work an account may hold over its memory users: each is a door into them.
ACCOUNT_LIVE_TOKENS = 50
# How precisely a token's last use is recorded: a busy client writes the row once a minute, not on
# every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


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


def token_state(token: ApiToken) -> str:
    """ "active", "revoked" or "expired"."""
    if token.revoked_at:
        return "revoked"
    if token.expires_at and token.expires_at <= timezone.now():
        return "expired"
    return "active"


# --- An account's own tokens -----------------------------------------------------------------------


def account_tokens(account) -> list[ApiToken]:
    """The tokens of the memory users the account owns, newest first, revoked and expired ones too."""
    return list(
        ApiToken.objects.filter(memory_user__owner=account).select_related("memory_user").order_by("-created_at", "-pk")
    )


def _live(tokens):
    return tokens.filter(revoked_at__isnull=True).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))


def account_token_create(account, *, user_id: object, name: object, expires_in_days: object) -> tuple[ApiToken, str]:
    """Make a token for one of the account's memory users (`user_id`, its external id); checked whole
    first: another account's memory user is refused as an unknown one, and so is a token past
    ACCOUNT_LIVE_TOKENS. Returns the token and its secret, shown only now."""
    name = inputs.token_name(name)
    days = inputs.token_lifetime_days(expires_in_days)
    memory_user = MemoryUser.objects.filter(owner=account, external_id=str(user_id)[:200]).first()
    if memory_user is None:
        raise MemoryInputError("no memory user of yours by that id")
    if _live(ApiToken.objects.filter(memory_user__owner=account)).count() >= ACCOUNT_LIVE_TOKENS:
        raise MemoryInputError(f"at most {ACCOUNT_LIVE_TOKENS} tokens may work at once; revoke one first")
    expires_at = timezone.now() + timedelta(days=days) if days is not None else None
    return token_create(memory_user=memory_user, name=name, expires_at=expires_at)


def account_token_revoke(account, *, token_id: object) -> ApiToken:
    """Revoke one of the account's tokens (by its id); another account's is refused as an unknown one."""
    token = None
    if isinstance(token_id, str) and token_id.isdecimal() and len(token_id) <= 18:
        token = ApiToken.objects.filter(pk=int(token_id), memory_user__owner=account).first()
    if token is None:
        raise MemoryInputError("no token of yours by that id")
    token_revoke(token=token)
    token.refresh_from_db()
    return token


def tokens(*, user_id: str | None = None) -> list[ApiToken]:
    """Every token (of the memory user `user_id`, when given), by memory user then as made: the operator's
    list (manage.py api_token list)."""
    found = ApiToken.objects.select_related("memory_user").order_by("memory_user__external_id", "pk")
    return list(found.filter(memory_user__external_id=user_id) if user_id else found)


def active_tokens_starting(prefix: str) -> list[ApiToken]:
    """The active tokens whose prefix starts with `prefix`: the operator names one to revoke by it."""
    return list(ApiToken.objects.filter(prefix__startswith=prefix, revoked_at__isnull=True))
