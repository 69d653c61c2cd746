"""The LLM a space uses: the deployment's, the bundled offline model, or an OpenAI-compatible endpoint its
owner chose. `choice_set` is the one way a choice is stored, checked by `inputs.llm_choice` (its key kept
encrypted, and given only to the server it was given for); `choice_test` asks the chosen model for a word,
to test the connection; which LLM a call uses is engine/llm_choice.py's `llm_for`."""

import time
from urllib.parse import urlsplit

from django.db import transaction

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.engine.llm_choice import choice_of, resolved, weak_model
from memory_engine.errors import InvalidParameter, LLMError
from memory_engine.llm import LLM, Sampling, get_llm, provider_name
from memory_engine.llm.local_servers import answering as local_servers_answering
from memory_engine.models import MemorySpace, SpaceLLM
from memory_engine.store import secrets

__all__ = [
    "choice_card",
    "choice_copy",
    "choice_set",
    "choice_test",
    "deployment_llm",
    "local_servers",
    "uses_bundled_model",
]

TEST_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
TEST_TIMEOUT_SECONDS = 15.0


def choice_set(*, space: MemorySpace, values: dict, actor: str) -> SpaceLLM | None:
    """Store the space's choice: `values` holds provider ("default" to go back to the deployment's LLM),
    base_url, model, api_key (absent or None: keep the stored key; "": remove it). Checked whole before
    anything is stored (inputs.llm_choice; SecretsUnavailable when a key is given and the server has no
    key to encrypt it with). Returns the stored choice, None for the default."""
    if values.get("provider") == "default":
        SpaceLLM.objects.filter(space_id=space.pk).delete()
        return None
    checked = inputs.llm_choice(
        values.get("provider"), values.get("base_url"), values.get("model"), values.get("api_key")
    )
    key = checked.pop("api_key")
    encrypted = secrets.encrypt(key) if key else ""
    with transaction.atomic():
        choice = SpaceLLM.objects.select_for_update().filter(space_id=space.pk).first() or SpaceLLM(space=space)
        keeps_a_key = key is None and bool(choice.api_key_encrypted)
        if keeps_a_key and checked["provider"] == SpaceLLM.Provider.OPENAI:
            _same_endpoint(choice.base_url, checked["base_url"])
        if checked["provider"] == SpaceLLM.Provider.OPENAI and not checked["base_url"] and not (key or keeps_a_key):
            raise InvalidParameter("api_key", "is required for api.openai.com (no base_url)")
        choice.provider, choice.base_url, choice.model = checked["provider"], checked["base_url"], checked["model"]
        if checked["provider"] == SpaceLLM.Provider.OFFLINE or key is not None:
            choice.api_key_encrypted = encrypted if checked["provider"] == SpaceLLM.Provider.OPENAI else ""
            choice.key_hint = key[-4:] if key and checked["provider"] == SpaceLLM.Provider.OPENAI else ""
        choice.updated_by = actor
        choice.save()
    return choice


def _origin(base_url: str) -> str:
    parsed = urlsplit(base_url or "https://api.openai.com/v1")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.scheme}://{(parsed.hostname or '').lower()}:{port}"


def _same_endpoint(stored_url: str, new_url: str) -> None:
    """A stored key goes only to the server it was given for: raises InvalidParameter("api_key") when
    `new_url` is on another scheme, host or port than `stored_url` (another path is the same server)."""
    if _origin(stored_url) != _origin(new_url):
        raise InvalidParameter("api_key", "is needed again: the stored key was given for another server")


def choice_copy(*, source: MemorySpace, target: MemorySpace) -> None:
    """Give `target` the choice of `source` (an experiment's shadow space answers with its source's LLM)."""
    choice = choice_of(source)
    if choice is not None:
        choice.pk, choice.space = None, target
        choice.save()


def choice_test(*, space: MemorySpace, values: dict | None = None) -> dict:
    """Ask the space's LLM (or the one `values` describe, checked as choice_set checks it; a missing key is
    the stored one) for one word; the bundled model is only loaded. Returns {ok, provider, model, seconds,
    answer or detail}; stores nothing."""
    try:
        if values is None or values.get("provider") == "default":
            stored = choice_of(space) if values is None else None
            llm = get_llm(_for_a_test(resolved(stored))) if stored else get_llm()
        else:
            checked = inputs.llm_choice(
                values.get("provider"), values.get("base_url"), values.get("model"), values.get("api_key")
            )
            if checked["provider"] == "openai" and checked["api_key"] is None:
                stored = choice_of(space)
                if stored and stored.api_key_encrypted:
                    _same_endpoint(stored.base_url, checked["base_url"])
                    checked["api_key"] = secrets.decrypt(stored.api_key_encrypted)
                else:
                    checked["api_key"] = ""
            llm = get_llm(_for_a_test(checked))
        began = time.monotonic()
        if llm.name == "offline":
            # The bundled model has no connection to test: what can fail is finding and loading it. It is
            # not asked for a word here: its answers depend on what llama.cpp's prompt cache holds from the
            # process's earlier calls (seen: after a test reply, the LoCoMo test's extractions ran away), and
            # a connection test should not change what the memory's extractions get.
            llm.load()
            return {
                "ok": True,
                "provider": llm.name,
                "model": getattr(llm, "model", ""),
                "seconds": round(time.monotonic() - began, 3),
                "answer": "(loaded; runs in this process)",
            }
        completion = llm.chat(TEST_MESSAGES, sampling=Sampling(max_tokens=8, max_sentences=0))
    except (LLMError, secrets.SecretsUnavailable) as exc:
        return {"ok": False, "detail": str(exc)}
    return {
        "ok": True,
        "provider": llm.name,
        "model": getattr(llm, "model", ""),
        "seconds": round(time.monotonic() - began, 3),
        "answer": completion.text[:200],
    }


def _for_a_test(choice: dict) -> dict:
    return {**choice, "timeout_seconds": TEST_TIMEOUT_SECONDS, "max_retries": 0}


def choice_card(space: MemorySpace) -> dict:
    """The LLM the space uses, as every door gives it: the owner's choice (never its key, only whether one
    is kept and its last characters), the deployment's model a space without a choice uses, whether keys
    can be kept here at all, and whether the model answering is the bundled one (`weak`)."""
    choice = choice_of(space)
    deployment = {"provider": provider_name(), "model": memory_settings().llm_model}
    if deployment["provider"] == "offline":
        deployment["model"] = memory_settings().offline_llm_model
    return {
        "provider": choice.provider if choice else "default",
        "base_url": choice.base_url if choice else "",
        "model": choice.model if choice else "",
        "has_key": bool(choice and choice.api_key_encrypted),
        "key_hint": choice.key_hint if choice else "",
        "updated_by": choice.updated_by if choice else "",
        "deployment": deployment,
        "can_keep_keys": secrets.can_keep_secrets(),
        "weak": uses_bundled_model(space),
    }


def uses_bundled_model(space: MemorySpace) -> bool:
    """Whether the space's replies come from a weak model (the bundled offline one: LLM.weak), read without
    reaching the model, so that a page can say so even when a chosen endpoint is down."""
    return weak_model(space)


def local_servers() -> list[dict]:
    """The LLM servers answering on this machine (Ollama, LM Studio, llama.cpp), to choose from."""
    return local_servers_answering()


def deployment_llm() -> LLM:
    """The LLM the deployment configures (MEMORYOS_LLM_*): what a space that chose none uses."""
    return get_llm()
