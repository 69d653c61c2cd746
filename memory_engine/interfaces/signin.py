"""Sign-in attempts are limited, on the playground's sign-in page and the admin's alike.

After MEMORYOS_SIGNIN_MAX_FAILURES failed sign-ins for one username, or MEMORYOS_SIGNIN_MAX_FAILURES_PER_ADDRESS
from one client address, further attempts are refused without checking the password, for
MEMORYOS_SIGNIN_LOCKOUT_SECONDS from the last failure; a successful sign-in clears the username's count.
Counts live in Django's cache (set CACHE_URL so that several web processes share them).
"""

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache


def _keys(request, username: str) -> list[tuple[str, int]]:
    keys = [(f"signin-user:{username.strip().lower()}", settings.MEMORYOS_SIGNIN_MAX_FAILURES)]
    address = request.META.get("REMOTE_ADDR") if request is not None else None
    if address:
        keys.append((f"signin-address:{address}", settings.MEMORYOS_SIGNIN_MAX_FAILURES_PER_ADDRESS))
    return keys


def locked_out(request, username: str) -> bool:
    """Whether sign-ins for this username, or from this address, are refused for now."""
    return any((cache.get(key) or 0) >= limit for key, limit in _keys(request, username))


def record_failure(request, username: str) -> None:
    lockout = settings.MEMORYOS_SIGNIN_LOCKOUT_SECONDS
    for key, _ in _keys(request, username):
        count = (cache.get(key) or 0) + 1
        cache.set(key, count, lockout)  # the window restarts at each failure


def record_success(request, username: str) -> None:
    cache.delete(_keys(request, username)[0][0])


class LimitedSignIn:
    """For an AuthenticationForm: refuse a locked-out attempt before the password is checked, count
    failures, clear the count on success."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if locked_out(self.request, username):
            minutes = max(1, round(settings.MEMORYOS_SIGNIN_LOCKOUT_SECONDS / 60))
            raise forms.ValidationError(
                f"Too many failed sign-ins for this account or address: try again in {minutes} minute(s).",
                code="locked",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            record_failure(self.request, username)
            raise
        record_success(self.request, username)
        return cleaned


class SignInForm(LimitedSignIn, AuthenticationForm):
    pass


class AdminSignInForm(LimitedSignIn, AdminAuthenticationForm):
    pass
