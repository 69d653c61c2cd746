"""The one validation layer: what any caller may hand the memory. Every door (REST, MCP, the MemoryOS
class, the admin, imports) reaches these checks through the service it calls (page_store, retrieve, the
long-term curation functions), so a bad input gets the same refusal whichever door it came through,
before anything is stored. Each check returns the value as it will be stored, or raises a
MemoryInputError subclass saying what is wrong (TurnTooLong / InputTooLarge for size: 413 over HTTP).
"""

import ipaddress
import json
import math
import socket
from datetime import UTC, datetime
from urllib.parse import urlsplit

from memory_engine.config import memory_settings
from memory_engine.errors import (
    InputTooLarge,
    InvalidEntry,
    InvalidParameter,
    InvalidTurn,
    MemoryInputError,
    TurnTooLong,
)
from memory_engine.models import SPACE_PARAMETERS, LongTermEntry, MemorySpace

ENTRY_VALUE_CHARS = 2000  # a profile value or a fact
ENTRY_KEY_CHARS = 200  # a profile attribute or a fact's topic
META_DEPTH = 20  # nesting of a turn's meta
HINT_CHARS = 200  # the reference's relationship_with_user and style_hint, which retrieval echoes back


def text(value: object, field: str, *, limit: int | None = None, error: type[MemoryInputError] = TurnTooLong) -> str:
    """Text as stored: a str (None is ""), valid unicode (no lone surrogate), no NUL, at most `limit`
    characters (MEMORYOS_MAX_TURN_CHARS by default). HTML is ordinary text: escaped wherever shown."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidTurn(f"{field} must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidTurn(f"{field} is not valid unicode (it holds a lone surrogate)") from None
    if "\x00" in value:
        raise InvalidTurn(f"{field} contains a NUL character")
    limit = memory_settings().max_turn_chars if limit is None else limit
    if len(value) > limit:
        raise error(f"{field} is {len(value)} characters long; the limit is {limit}")
    return value


SOURCE_ID_CHARS = 200  # a conversation's, message's or memory's id in a file brought to import (a UUID: 36)


def source_id(value: object) -> str:
    """The id a file brought to import gives a conversation, a message or a memory: text as a turn's (no
    NUL, no lone surrogate), at most SOURCE_ID_CHARS."""
    return text(value, "its id", limit=SOURCE_ID_CHARS, error=InputTooLarge)


def hint(value: object, field: str) -> str:
    """A short text a caller passes through a call and gets back (MCP's style_hint): text, as a turn's."""
    return text(value, field, limit=HINT_CHARS)


def query(value: object) -> str:
    """A question to the memory: text as a turn's, and not empty."""
    value = text(value, "query")
    if not value.strip():
        raise InvalidTurn("the query is empty")
    return value


def turn_texts(user_input: object, agent_response: object) -> tuple[str, str]:
    """The two sides of a turn: each text, and not both empty."""
    user_input, agent_response = text(user_input, "user_input"), text(agent_response, "agent_response")
    if not user_input.strip() and not agent_response.strip():
        raise InvalidTurn("the turn is empty: give a user_input, an agent_response or both")
    return user_input, agent_response


def timestamp(value: object) -> datetime | None:
    """When a turn happened: None (now), or an aware datetime, or an ISO 8601 string with its offset."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidTurn(f"timestamp {value[:60]!r} is not an ISO 8601 date and time") from None
    if not isinstance(value, datetime):
        raise InvalidTurn(f"timestamp must be an ISO 8601 date and time, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidTurn("timestamp must carry a timezone (e.g. 2026-11-23T10:00:00+00:00)")
    try:
        year = value.astimezone(UTC).year
    except OverflowError:  # 9999-12-31T23:59:59-14:00 is in the year 10000 in UTC
        year = 0
    if not EARLIEST_YEAR <= year <= LATEST_YEAR:
        raise InvalidTurn(f"timestamp must fall between the years {EARLIEST_YEAR} and {LATEST_YEAR}")
    return value


# What a timestamp may be: so that a date at the calendar's edge, and the days counted from it, stay dates.
EARLIEST_YEAR, LATEST_YEAR = 1900, 9000


def meta(value: object) -> dict:
    """A turn's meta: a JSON object, nested at most META_DEPTH deep, with no NUL anywhere (PostgreSQL's
    jsonb cannot store one), at most MEMORYOS_MAX_META_BYTES once serialised."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidTurn("meta must be a JSON object")
    _check_tree(value)
    limit = memory_settings().max_meta_bytes
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise InvalidTurn(f"meta is not plain JSON ({exc})") from None
    if size > limit:
        raise InputTooLarge(f"meta is {size} bytes as JSON; the limit is {limit}")
    return value


def _check_tree(value: object) -> None:
    """Walk a JSON value without recursion (a deeply nested one cannot exhaust the stack)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > META_DEPTH:
            raise InvalidTurn(f"meta is nested more than {META_DEPTH} deep")
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise InvalidTurn("meta keys must be text")
                stack += [(key, depth), (child, depth + 1)]
        elif isinstance(item, list | tuple):
            stack += [(child, depth + 1) for child in item]
        elif isinstance(item, str):
            if "\x00" in item:
                raise InvalidTurn("meta contains a NUL character")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidTurn("meta is not valid unicode (it holds a lone surrogate)") from None


def entry_value(value: object, field: str = "value") -> str:
    """A long-term entry's value (a profile value or a fact): text, whitespace collapsed, not empty, at
    most ENTRY_VALUE_CHARS."""
    value = " ".join(text(value, field, limit=ENTRY_VALUE_CHARS, error=InputTooLarge).split())
    if not value:
        raise InvalidEntry(f"the {field} is empty")
    return value


def entry_key(value: object, field: str = "key") -> str:
    """A profile attribute or a fact's topic: text, whitespace collapsed, at most ENTRY_KEY_CHARS (may
    be empty; the caller decides whether it must be given)."""
    return " ".join(text(value, field, limit=ENTRY_KEY_CHARS, error=InputTooLarge).split())


def one_of(value: object, field: str, choices) -> str | None:
    """A filter's value: None when not given, else one of `choices` (InvalidParameter names the others)."""
    if value in (None, ""):
        return None
    if value not in choices:
        raise InvalidParameter(field, f"must be one of {', '.join(choices)}")
    return value


def is_row_id(value: object) -> bool:
    """Whether `value` can be a row's id: a whole number (not a bool) within any database's ids."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


def row_id(value: object, field: str) -> int | None:
    """A row's id given as a filter ("?session=12"): None when not given, else a whole number."""
    if value in (None, ""):
        return None
    text = str(value)
    if not text.isdecimal() or len(text) > 18:
        raise InvalidParameter(field, "must be an id (a whole number)")
    return int(text)


ALL_STATUSES = "all"


def entry_status(value: object) -> str | None:
    """A status to list entries by: one of LongTermEntry.Status's values, or "all" (None: no filter)."""
    if value == ALL_STATUSES:
        return None
    if value not in LongTermEntry.Status.values:
        raise InvalidParameter("status", f"must be one of {', '.join(LongTermEntry.Status.values)} or all")
    return value


EXPERIMENT_NAME_CHARS = 100


def experiment_name(value: object) -> str:
    """An experiment's name: text, whitespace collapsed, 1-100 characters."""
    value = " ".join(text(value, "name", limit=EXPERIMENT_NAME_CHARS, error=InputTooLarge).split())
    if not value:
        raise MemoryInputError("the experiment's name is empty")
    return value


TOKEN_NAME_CHARS = 100
TOKEN_LIFETIME_DAYS = 3650


def token_name(value: object) -> str:
    """What an API token is for: text, whitespace collapsed, at most 100 characters (may be empty)."""
    return " ".join(text(value, "name", limit=TOKEN_NAME_CHARS, error=InputTooLarge).split())


def token_lifetime_days(value: object) -> float | None:
    """How many days an API token works: a number from 0 (exclusive) to 3650, or None (empty: until
    revoked)."""
    if value is None or value == "":
        return None
    try:
        days = float(value)
    except (TypeError, ValueError):
        raise MemoryInputError(
            "expires_in_days: a number of days, or empty for a token that works until revoked"
        ) from None
    if not 0 < days <= TOKEN_LIFETIME_DAYS:
        raise MemoryInputError(f"expires_in_days: more than 0 and at most {TOKEN_LIFETIME_DAYS}")
    return days


CAPACITIES = ("stm_capacity", "mtm_capacity", "knowledge_capacity")
# Whole numbers with an upper bound: depths the retriever reads (it scores at most 100 candidates) and
# the tokens of memory a prompt may hold.
BOUNDED_COUNTS = {"top_pages": 100, "top_knowledge": 100, "context_token_budget": 100_000}
SHARES = ("lexical_weight", "chain_weight", "reranker_weight")  # a share, from 0 to 1
PARAMETER_LIMIT = 1e6  # a weight, threshold or similarity beyond this is a typo, not a setting
RECENCY_LIMIT_SECONDS = 1e12  # the recency time scale (the paper's is 1e7 s)


def space_parameters(values: dict) -> dict:
    """New parameters of a space, checked: known names only; capacities whole numbers of at least 1;
    the retrieval depths (1-100) and the token budget (1-100,000) whole numbers; the lexical, the
    neighbours' and the reranker's shares from 0 to 1; the recency time scale more than 0 (heat divides by
    it) and at most 1e12 s; other weights, thresholds and the merge similarity finite and within ±1e6; a
    known eviction policy. Raises InvalidParameter naming the first bad one."""
    checked = {}
    for name, value in values.items():
        if name not in SPACE_PARAMETERS:
            raise InvalidParameter(name, "is not a parameter of a memory space")
        if name == "eviction_policy":
            if value not in MemorySpace.Eviction.values:
                raise InvalidParameter(name, f"must be one of {', '.join(MemorySpace.Eviction.values)}")
        elif name in CAPACITIES:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParameter(name, "must be a whole number, at least 1")
        elif name in BOUNDED_COUNTS:
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= BOUNDED_COUNTS[name]:
                raise InvalidParameter(name, f"must be a whole number from 1 to {BOUNDED_COUNTS[name]:,}")
        else:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise InvalidParameter(name, "must be a number")
            if name in SHARES:
                if not 0 <= value <= 1:
                    raise InvalidParameter(name, "must be from 0 to 1")
            elif name == "recency_mu_seconds":
                if not 0 < value <= RECENCY_LIMIT_SECONDS:
                    raise InvalidParameter(name, f"must be more than 0 and at most {RECENCY_LIMIT_SECONDS:g}")
            elif abs(value) > PARAMETER_LIMIT:
                raise InvalidParameter(name, f"is out of range (at most {PARAMETER_LIMIT:g} either way)")
            value = float(value)
        checked[name] = value
    return checked


LLM_URL_CHARS = 500
LLM_MODEL_CHARS = 200
LLM_KEY_CHARS = 500


def llm_choice(provider: object, base_url: object, model: object, api_key: object) -> dict:
    """A space's choice of LLM, checked (models.SpaceLLM): `offline`, or `openai` with a model name, an
    http(s) base URL (empty: api.openai.com, which needs a key) and an optional key. The endpoint must be
    a public address over HTTPS, unless its host is in MEMORYOS_LLM_ALLOWED_HOSTS: the server calls it, and
    an account must not make it call the services beside it (a cloud's metadata address, a database), nor
    send a key in clear text. Returns {provider, base_url, model, api_key}; api_key None keeps the stored
    one. Raises InvalidParameter naming the first bad field."""
    if provider not in ("offline", "openai"):
        raise InvalidParameter("provider", "must be offline or openai")
    if provider == "offline":
        return {"provider": "offline", "base_url": "", "model": "", "api_key": ""}
    base_url = text(base_url, "base_url", limit=LLM_URL_CHARS, error=InputTooLarge).strip()
    model = text(model, "model", limit=LLM_MODEL_CHARS, error=InputTooLarge).strip()
    if not model:
        raise InvalidParameter("model", "is required for an OpenAI-compatible endpoint")
    if api_key is not None:
        api_key = text(api_key, "api_key", limit=LLM_KEY_CHARS, error=InputTooLarge).strip()
        if any(ch.isspace() for ch in api_key):
            raise InvalidParameter("api_key", "must not contain spaces or line breaks")
    if base_url:
        llm_endpoint(base_url)
    return {"provider": "openai", "base_url": base_url, "model": model, "api_key": api_key}


def llm_host_allowed(host: str, port: int) -> bool:
    """Whether the operator allows the server to call this host whatever its address
    (MEMORYOS_LLM_ALLOWED_HOSTS, "*" for any; the local model servers of development)."""
    host = host.lower()
    allowed = {entry.strip().lower() for entry in memory_settings().llm_allowed_hosts.split(",") if entry.strip()}
    allowed |= {_host_port(url) for _, url in memory_settings().llm_local_servers}
    return "*" in allowed or host in allowed or f"{host}:{port}" in allowed


def llm_host_address(host: str, port: int) -> str:
    """The address to connect to for `host`: it is resolved once, and every address it has must be public
    (public_address), so that the connection goes to the address that was checked (a name that answers a
    public address to the check and a private one to the connection gets nowhere). Raises
    InvalidParameter("base_url")."""
    host = host.lower()
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise InvalidParameter("base_url", f"names a host that cannot be found: {host}") from None
    addresses = [info[4][0] for info in infos]
    if not addresses or not all(public_address(address) for address in addresses):
        raise InvalidParameter(
            "base_url",
            f"points at a private or local address ({host}); the operator may allow it in MEMORYOS_LLM_ALLOWED_HOSTS",
        )
    return addresses[0]


_EMBEDS_IPV4 = [ipaddress.ip_network(n) for n in ("::/96", "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96")]
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


def public_address(address: str) -> bool:
    """Whether an IP address is one on the public internet: global, and for an IPv6 one that carries an
    IPv4 address (IPv4-mapped, -compatible or -translated, NAT64, 6to4, Teredo), that one global too:
    `::127.0.0.1` and `64:ff9b::a9fe:a9fe` reach loopback and the metadata address. Pure."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if not ip.is_global:
        return False
    if ip.version == 4:
        return True
    if ip in _LOCAL_NAT64:
        return False
    embedded = [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)] if any(ip in net for net in _EMBEDS_IPV4) else []
    if ip.sixtofour is not None:
        embedded.append(ip.sixtofour)
    if ip.teredo is not None:
        embedded.extend(ip.teredo)
    return all(v4.is_global for v4 in embedded)


def _host_port(url: str) -> str:
    parsed = urlsplit(url)
    return f"{(parsed.hostname or '').lower()}:{parsed.port or (443 if parsed.scheme == 'https' else 80)}"


def llm_endpoint(base_url: str) -> None:
    """Refuse an endpoint the server must not call (see llm_choice): raises InvalidParameter("base_url")."""
    parsed = urlsplit(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise InvalidParameter("base_url", "must be an http:// or https:// URL with a host")
    if parsed.username or parsed.password:
        raise InvalidParameter("base_url", "must not hold a user name or password (give the key as api_key)")
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:
        raise InvalidParameter("base_url", "has a port that is not a number from 0 to 65535") from None
    if llm_host_allowed(parsed.hostname, port):
        return
    llm_host_address(parsed.hostname, port)
    if parsed.scheme != "https":
        raise InvalidParameter("base_url", "must use https:// (an allowed host may use http://)")
