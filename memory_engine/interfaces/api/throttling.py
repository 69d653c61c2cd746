"""Rate limits per caller: the account a request acts for (signed in, or through any of the tokens of its
memory users: an account's tokens share its rates, however many it makes), a token's memory user when no
account holds it, or else the client address. Over the limit, a request gets 429 with Retry-After.
Rates: MEMORYOS_API_RATE for everything, MEMORYOS_API_CHAT_RATE for chat (each reply runs the LLM) and for
the other heavy requests: a fork, a comparison, a restore, a file brought to import (HeavyRequestThrottle:
their POSTs only, so a page may poll their results). Counts live in Django's cache (CACHE_URL: Redis for
several processes)."""

from rest_framework.throttling import SimpleRateThrottle


def caller_key(request, address: str | None = None) -> str:
    """Who a request counts as: its account, a token's memory user when no account holds it, or else its
    address."""
    token = getattr(request.user, "token", None)
    if token is not None:
        owner = token.memory_user.owner_id
        return f"account-{owner}" if owner is not None else f"memory-user-{token.memory_user_id}"
    if request.user.is_authenticated:
        return f"account-{request.user.pk}"
    return f"address-{address or request.META.get('REMOTE_ADDR', '')}"


class CallerRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": caller_key(request, self.get_ident(request))}


class ChatRateThrottle(CallerRateThrottle):
    scope = "chat"


class HeavyRequestThrottle(ChatRateThrottle):
    """The chat rate for a view's POSTs (a fork replays a conversation, a comparison runs two retrievals
    a question, a restore embeds a whole space); its reads count against the general rate only."""

    def allow_request(self, request, view):
        return request.method != "POST" or super().allow_request(request, view)
