"""Which LLM a space uses: the one its owner chose (models.SpaceLLM), else the deployment's.

Every LLM call made for a space goes through `llm_for(space)`: its chat replies, its consolidation's
promotions (in whichever worker runs them), the inspector's prompt, an experiment's replay (a shadow space
carries its source's choice). `choice_set` is the one way a choice is stored, checked by
`inputs.llm_choice`; `choice_test` asks the chosen model for a word, to test the connection.
"""

import time
from urllib.parse import urlsplit

from django.db import transaction

from memory_engine import inputs
from memory_engine.errors import InvalidParameter
from memory_engine.llm import LLM, LLMError, Sampling, get_llm
from memory_engine.models import MemorySpace, SpaceLLM
from memory_engine.store import secrets

TEST_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
# A connection test waits this long for an answer, once: an owner at the page should not wait minutes.
TEST_TIMEOUT_SECONDS = 15.0


def choice_of(space: MemorySpace) -> SpaceLLM | None:
    return SpaceLLM.objects.filter(space_id=space.pk).first()


def llm_for(space: MemorySpace) -> LLM:
    """The LLM that answers for this space. Raises LLMError when its chosen endpoint cannot be used (its
    host is no longer allowed, its key cannot be read): a space never falls back to another model silently."""
    choice = choice_of(space)
    if choice is None:
        return get_llm()
    return get_llm(_resolved(choice))


def weak_model(space: MemorySpace) -> bool:
    """Whether the space's LLM is a weak one (LLM.weak: the prompt is then the compact one), read without
    building a client: the inspector shows the prompt even when the chosen endpoint cannot be reached."""
    choice = choice_of(space)
    if choice is None:
        return get_llm().weak
    return choice.provider == SpaceLLM.Provider.OFFLINE


def _resolved(choice: SpaceLLM) -> dict:
    if choice.provider == SpaceLLM.Provider.OFFLINE:
        return {"provider": "offline"}
    try:
        if choice.base_url:
            _endpoint_still_allowed(choice.base_url)
        key = secrets.decrypt(choice.api_key_encrypted) if choice.api_key_encrypted else ""
    except (InvalidParameter, secrets.SecretsUnavailable) as exc:
        raise LLMError(f"this space's LLM endpoint cannot be used: {exc}") from exc
    return {"provider": "openai", "base_url": choice.base_url, "model": choice.model, "api_key": key}


# When an endpoint was last checked (inputs.llm_endpoint resolves its host): a reply or a promotion does
# not wait on a DNS lookup each time, and what a host name points at is looked at again after this long.
RECHECK_SECONDS = 300.0
_checked_at: dict[str, float] = {}


def _endpoint_still_allowed(base_url: str) -> None:
    if time.monotonic() - _checked_at.get(base_url, float("-inf")) < RECHECK_SECONDS:
        return
    inputs.llm_endpoint(base_url)
    if len(_checked_at) > 1000:
        _checked_at.clear()
    _checked_at[base_url] = time.monotonic()


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
            llm = get_llm(_for_a_test(_resolved(stored))) if stored else get_llm()
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
