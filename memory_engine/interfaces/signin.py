"""Sign-in attempts are throttled, on the playground's sign-in page and the admin's alike, with delays
that grow, never with a lock on the account.

Failures are counted per username and client address together (the username folded as Django folds it:
case and surrounding spaces), and per client address alone. After MEMORYOS_SIGNIN_FREE_FAILURES failures
of one username from one address (MEMORYOS_SIGNIN_FREE_FAILURES_PER_ADDRESS from one address over all
usernames), the next attempt must wait MEMORYOS_SIGNIN_FIRST_DELAY_SECONDS after the last failure, then
twice that after the next failure, and so on up to MEMORYOS_SIGNIN_MAX_DELAY_SECONDS; an attempt made
while waiting is refused without checking the password and counts for nothing. A successful sign-in
clears its username and address's count.

So someone guessing a victim's password from their own address slows only themselves: the victim, from
theirs, signs in as usual. Behind a proxy the client address is the one the proxy forwards, which the web
server trusts only from FORWARDED_ALLOW_IPS (docs/deploying.md); otherwise everyone behind it shares one
address. Counts live in Django's cache (set CACHE_URL so that several web processes share them) and are
forgotten after an hour without failures.
"""

import time

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache

from memory_engine.config import memory_settings

FORGET_SECONDS = 3600


def delay_after(failures: int, free: int, first: float, cap: float) -> float:
    """Seconds to wait after the last failure, once `failures` failures were counted: none for the first
    `free`, then `first`, doubling with each further failure, at most `cap`. Pure."""
    if failures < free:
        return 0.0
    return min(cap, first * 2 ** min(failures - free, 40))


def _keys(request, username: str) -> list[tuple[str, int]]:
    address = (request.META.get("REMOTE_ADDR") if request is not None else None) or "unknown"
    return [
        (f"signin:{address}:{username.strip().lower()}", memory_settings().signin_free_failures),
        (f"signin-address:{address}", memory_settings().signin_free_failures_per_address),
    ]


def wait_seconds(request, username: str) -> float:
    """How long this username, from this address, must still wait before its next attempt (0: none)."""
    now = time.time()
    waits = [0.0]
    for key, free in _keys(request, username):
        failures, last = cache.get(key) or (0, 0.0)
        delay = delay_after(
            failures, free, memory_settings().signin_first_delay_seconds, memory_settings().signin_max_delay_seconds
        )
        waits.append(last + delay - now)
    return max(waits)


def record_failure(request, username: str) -> None:
    now = time.time()
    for key, _ in _keys(request, username):
        failures, _last = cache.get(key) or (0, 0.0)
        cache.set(key, (failures + 1, now), FORGET_SECONDS)


def record_success(request, username: str) -> None:
    cache.delete(_keys(request, username)[0][0])


# --- Sign-up ------------------------------------------------------------------------------------------

SIGNUP_WINDOW_SECONDS = 3600


def signup_refusal(request) -> str | None:
    """Why an account cannot be made now, or None: sign-up closed by the operator (MEMORYOS_SIGNUP_OPEN),
    or MEMORYOS_SIGNUPS_PER_ADDRESS accounts made from this client address in the last hour."""
    if not memory_settings().signup_open:
        return "Sign-up is closed on this server: ask its operator for an account."
    made = cache.get(_signup_key(request)) or 0
    if made >= memory_settings().signups_per_address:
        return "Too many accounts were made from here in the last hour: try again later."
    return None


def record_signup(request) -> None:
    key = _signup_key(request)
    if cache.add(key, 1, SIGNUP_WINDOW_SECONDS):
        return
    try:
        cache.incr(key)
    except ValueError:  # expired between the two calls
        cache.add(key, 1, SIGNUP_WINDOW_SECONDS)


def _signup_key(request) -> str:
    return f"signup-address:{request.META.get('REMOTE_ADDR') or 'unknown'}"


def signup_open(request) -> dict:
    """Template context: whether to offer sign-up at all."""
    return {"signup_open": memory_settings().signup_open}


class LimitedSignIn:
    """For an AuthenticationForm: refuse an attempt that comes before its wait is over, before the
    password is checked; count failures; clear the count on success."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        wait = wait_seconds(self.request, username)
        if wait > 0:
            raise forms.ValidationError(
                f"Too many failed sign-ins for this account from here: try again in {max(1, round(wait))} seconds.",
                code="throttled",
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
