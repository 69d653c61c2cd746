"""The engine's LLM boundary: `get_llm()` returns the configured provider.

Providers: "offline" (the bundled SmolLM2-135M in process, the default) and "openai" (any
OpenAI-compatible endpoint). See the llm_* settings (memory_engine/config.py).
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace

from django.core.exceptions import ImproperlyConfigured

from memory_engine.config import MemorySettings, memory_settings
from memory_engine.errors import LLMDegenerateAnswer, LLMError, LLMInvalidAnswer, LLMUnavailable, ReplyStopped

from .base import LLM, Completion, Usage
from .degeneration import ReplyGuard
from .sampling import Sampling, chat_sampling

__all__ = [
    "Completion",
    "LLM",
    "LLMDegenerateAnswer",
    "LLMError",
    "LLMInvalidAnswer",
    "LLMUnavailable",
    "ReplyGuard",
    "ReplyStopped",
    "Sampling",
    "Usage",
    "chat_sampling",
    "forget_endpoint",
    "get_llm",
    "provider_name",
]

_instances: dict[tuple, LLM] = {}
_instances_lock = threading.Lock()
_inherited_instances: list[LLM] = []


def _forget_instances_in_child() -> None:
    # A forked child (Celery prefork, gunicorn) must not share the parent's HTTP connection pool or
    # counters, nor inherit the lock held mid-build by another parent thread: it starts afresh.
    # The old instances stay referenced: destroying them here would tear down objects (sockets,
    # native model servers) that the parent is still using.
    global _instances_lock
    _inherited_instances.extend(_instances.values())
    _instances.clear()
    _instances_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_instances_in_child)


def forget_endpoint(base_url: str) -> None:
    """Drop the cached clients of an OpenAI-compatible endpoint, so the next get_llm() builds a fresh one
    (fresh connections and usage counters). A test's new local server may reuse an earlier one's port."""
    with _instances_lock:
        for key in [k for k in _instances if k[0] == "openai" and k[1] == base_url]:
            _inherited_instances.append(_instances.pop(key))


def provider_name(conf: MemorySettings | None = None) -> str:
    """Return "openai" or "offline" for the given (default: current) engine settings.

    An empty llm_provider means "openai" when llm_base_url is set, else "offline".
    Raises ImproperlyConfigured for any other value. Changes nothing.
    """
    conf = memory_settings() if conf is None else conf
    provider = (conf.llm_provider or "").strip().lower()
    base_url = (conf.llm_base_url or "").strip()
    if provider == "openai" or (provider == "" and base_url):
        return "openai"
    if provider in ("", "offline"):
        return "offline"
    raise ImproperlyConfigured(f"MEMORYOS_LLM_PROVIDER must be 'offline', 'openai' or empty, got {conf.llm_provider!r}")


# Clients of the endpoints spaces chose, kept per process (their connection pools); the oldest go beyond this.
MAX_CACHED_ENDPOINTS = 64


def get_llm(choice: dict | None = None) -> LLM:
    """Return the LLM the current settings describe, or the one a space chose (`choice`: provider,
    base_url, model, api_key, as engine/llm_choice.py reads them), building it on first use.

    Instances are cached per settings values, so the offline model loads once per process and a test
    that overrides `settings.MEMORYOS` gets a provider matching the override. Safe to call repeatedly
    and from several threads; only the first call for a configuration builds anything.
    """
    conf = memory_settings()
    if choice is not None:
        conf = replace(
            conf,
            llm_provider=choice["provider"],
            llm_base_url=choice.get("base_url") or "",
            llm_model=choice.get("model") or conf.llm_model,
            llm_api_key=choice.get("api_key") or "",
            llm_timeout_seconds=choice.get("timeout_seconds", conf.llm_timeout_seconds),
            llm_max_retries=choice.get("max_retries", conf.llm_max_retries),
        )
    provider = provider_name(conf)
    max_retries = int(conf.llm_max_retries)
    max_tokens = int(conf.llm_max_tokens)
    if provider == "openai":
        base_url = (conf.llm_base_url or "").strip()
        api_key = conf.llm_api_key or ""
        if not base_url and not api_key and choice is not None:
            raise LLMError("this space's endpoint has neither a base URL nor an API key")
        if not base_url and not api_key:
            raise ImproperlyConfigured(
                "MEMORYOS_LLM_PROVIDER=openai needs MEMORYOS_LLM_BASE_URL (a local server) or MEMORYOS_LLM_API_KEY"
                " (api.openai.com)"
            )
        timeout = float(conf.llm_timeout_seconds)
        # A space's endpoint is its owner's choice: called through guarded_http's checked client.
        checked = choice is not None
        key: tuple = ("openai", base_url, conf.llm_model, api_key, timeout, max_retries, max_tokens, checked)
    else:
        threads = int(conf.offline_llm_threads)
        context = int(conf.offline_llm_context)
        key = ("offline", conf.offline_llm_model, threads, context, max_retries, max_tokens)

    llm = _instances.get(key)
    if llm is not None:
        return llm
    with _instances_lock:
        llm = _instances.get(key)
        if llm is None:
            llm = _instances[key] = _build(key)
            while len(_instances) > MAX_CACHED_ENDPOINTS:  # a caller still using one keeps it alive
                _instances.pop(next(iter(_instances)))
    return llm


def _build(key: tuple) -> LLM:
    # Provider modules are imported on demand: the offline one pulls in a native library.
    if key[0] == "openai":
        from .openai_compatible import OpenAICompatibleLLM

        _, base_url, model, api_key, timeout, max_retries, max_tokens, checked = key
        return OpenAICompatibleLLM(
            base_url=base_url or None,
            model=model,
            api_key=api_key,
            timeout_seconds=timeout,
            max_retries=max_retries,
            max_tokens=max_tokens,
            checked=checked,
        )
    from .offline import OfflineLLM

    _, model, threads, context, max_retries, max_tokens = key
    return OfflineLLM(model=model, threads=threads, context=context, max_retries=max_retries, max_tokens=max_tokens)
