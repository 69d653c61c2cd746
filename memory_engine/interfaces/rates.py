"""Request rates: one count per caller, the same at every door (REST, MCP over HTTP, the admin's actions).

A caller is the account a request acts for (signed in, or through any token of its memory users: an
account's tokens share its counts, however many it makes), a token's memory user when no account holds
it, or else the client address. Every request counts against MEMORYOS_API_RATE (`API`); a heavy one counts
against MEMORYOS_API_CHAT_RATE (`HEAVY`) too: it runs the LLM (a reply, a connection test, a retried
consolidation), replays or compares a conversation (a fork, a comparison, an import, a restore) or rewrites
turns and vacuums tables (an erase). Counts live in Django's cache (CACHE_URL: Redis when several processes
serve), in the entries DRF's throttles use, so REST (api/throttling.py), MCP (mcp_http.py, mcp_server.py)
and the admin add to one count."""

from rest_framework.throttling import SimpleRateThrottle

from memory_engine.models import ApiToken

API = "api"
HEAVY = "chat"


def caller_key(*, token: ApiToken | None = None, account_id: int | None = None, address: str = "") -> str:
    """Who a request counts as: the account owning its token's memory user (or that memory user, when no
    account holds it), else its signed-in account, else its address."""
    if token is not None:
        owner = token.memory_user.owner_id
        return f"account-{owner}" if owner is not None else f"memory-user-{token.memory_user_id}"
    if account_id is not None:
        return f"account-{account_id}"
    return f"address-{address}"


def count_key(scope: str, caller: str) -> str:
    """The cache entry holding a caller's count against a rate."""
    return SimpleRateThrottle.cache_format % {"scope": scope, "ident": caller}


class CallerRate(SimpleRateThrottle):
    """One caller's count against one rate, for a door that is not a DRF view."""

    def __init__(self, scope: str, caller: str) -> None:
        self.scope = scope
        super().__init__()
        self.key = count_key(scope, caller)

    def room(self) -> int:
        """How many more requests fit now; reads the count, changes nothing."""
        self.now = self.timer()
        self.history = [at for at in self.cache.get(self.key, []) if at > self.now - self.duration]
        return self.num_requests - len(self.history)

    def add(self, cost: int) -> None:
        """Counts `cost` requests now (after room())."""
        self.history[:0] = [self.now] * cost
        self.cache.set(self.key, self.history, self.duration)


def admit(caller: str, *scopes: str, cost: int = 1) -> int:
    """Counts `cost` requests of `caller` against each rate of `scopes` when they fit in all of them, and
    returns 0; otherwise counts nothing and returns the seconds to wait (at least 1)."""
    rates = [CallerRate(scope, caller) for scope in scopes]
    full = [rate for rate in rates if rate.room() < cost]
    if full:
        return max(max(1, round(rate.wait() or 1)) for rate in full)
    for rate in rates:
        rate.add(cost)
    return 0
