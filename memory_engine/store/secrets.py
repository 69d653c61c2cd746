"""Secrets kept in the database (an LLM endpoint's API key, models.SpaceLLM), encrypted at rest.

The key comes from the environment: MEMORYOS_SECRETS_KEY, one or more comma-separated passphrases of at
least 32 characters. The first encrypts; all of them decrypt, so a key is rotated by putting the new one
first and re-saving (or leaving) the secrets. Each passphrase is stretched to a Fernet key (AES-128-CBC
with an HMAC-SHA256) by SHA-256. Without it, a development server (DEBUG) encrypts with a key derived from
its SECRET_KEY, and a production one refuses to store a secret: a database backup must not hold API keys
that its SECRET_KEY alone would open.
"""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from memory_engine.config import memory_settings
from memory_engine.errors import SecretsUnavailable

MIN_PASSPHRASE_CHARS = 32


def _fernet_key(passphrase: str) -> bytes:
    return base64.urlsafe_b64encode(hashlib.sha256(passphrase.encode()).digest())


def _passphrases() -> list[str]:
    configured = [part.strip() for part in (memory_settings().secrets_key or "").split(",") if part.strip()]
    if configured:
        short = [p for p in configured if len(p) < MIN_PASSPHRASE_CHARS]
        if short:
            raise SecretsUnavailable(f"MEMORYOS_SECRETS_KEY: each key needs at least {MIN_PASSPHRASE_CHARS} characters")
        return configured
    if settings.DEBUG:
        return ["development secrets key derived from " + settings.SECRET_KEY]
    raise SecretsUnavailable("this server has no MEMORYOS_SECRETS_KEY, so it cannot keep an API key")


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(_fernet_key(p)) for p in _passphrases()])


def can_keep_secrets() -> bool:
    try:
        _passphrases()
    except SecretsUnavailable:
        return False
    return True


def encrypt(secret: str) -> str:
    """The secret as a token to store. Raises SecretsUnavailable without a key."""
    return _fernet().encrypt(secret.encode()).decode()


def decrypt(token: str) -> str:
    """The secret a stored token holds. Raises SecretsUnavailable when no configured key opens it."""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretsUnavailable(
            "a stored API key cannot be read with MEMORYOS_SECRETS_KEY (was the key changed?)"
        ) from None
