"""The REST API's rate limits, as DRF throttles over the counts every door shares (interfaces/rates.py):
each request counts for its caller against MEMORYOS_API_RATE; chat (each reply runs the LLM) and the other
heavy requests (ChatRateThrottle, HeavyRequestThrottle) against MEMORYOS_API_CHAT_RATE too. Over a limit,
a request gets 429 with Retry-After."""

from rest_framework.throttling import SimpleRateThrottle

from memory_engine.interfaces import rates


def request_caller(request, address: str | None = None) -> str:
    """Who a request counts as (rates.caller_key): its token's account or memory user, its signed-in
    account, or else its address."""
    return rates.caller_key(
        token=getattr(request.user, "token", None),
        account_id=request.user.pk if request.user.is_authenticated else None,
        address=address or request.META.get("REMOTE_ADDR", ""),
    )


class CallerRateThrottle(SimpleRateThrottle):
    scope = rates.API

    def get_cache_key(self, request, view):
        return rates.count_key(self.scope, request_caller(request, self.get_ident(request)))


class ChatRateThrottle(CallerRateThrottle):
    scope = rates.HEAVY


class HeavyRequestThrottle(ChatRateThrottle):
    """The heavy rate for a view's POSTs (a fork replays a conversation, a comparison runs two retrievals
    a question, a restore embeds a whole space, an erase rewrites turns and vacuums tables); its reads count
    against the general rate only."""

    def allow_request(self, request, view):
        return request.method != "POST" or super().allow_request(request, view)
