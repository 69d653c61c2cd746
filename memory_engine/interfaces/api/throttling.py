"""Rate limits per caller: a token, a signed-in account, or else the client address. Over the limit, a
request gets 429 with Retry-After. Rates: MEMORYOS_API_RATE for everything, MEMORYOS_API_CHAT_RATE
for chat (each reply runs the LLM) and for the other heavy requests: a fork, a comparison, a restore
(HeavyRequestThrottle: their POSTs only, so a page may poll their results). Counts live in Django's
cache (CACHE_URL: Redis for several processes)."""

from rest_framework.throttling import SimpleRateThrottle


class CallerRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_cache_key(self, request, view):
        token = getattr(request.user, "token", None)
        if token is not None:
            caller = f"token-{token.pk}"
        elif request.user.is_authenticated:
            caller = f"account-{request.user.pk}"
        else:
            caller = f"address-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": caller}


class ChatRateThrottle(CallerRateThrottle):
    scope = "chat"


class HeavyRequestThrottle(ChatRateThrottle):
    """The chat rate for a view's POSTs (a fork replays a conversation, a comparison runs two retrievals
    a question, a restore embeds a whole space); its reads count against the general rate only."""

    def allow_request(self, request, view):
        return request.method != "POST" or super().allow_request(request, view)
