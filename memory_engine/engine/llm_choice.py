"""Which LLM a space uses: the one its owner chose (models.SpaceLLM), else the deployment's.

Every LLM call made for a space goes through `llm_for(space)`: its chat replies, its consolidation's
promotions (in whichever worker runs them), the inspector's prompt, an experiment's replay (a shadow space
carries its source's choice). The choice is stored, copied and tested by services/space_llm.py.
"""

import time

from memory_engine import inputs
from memory_engine.errors import InvalidParameter
from memory_engine.llm import LLM, LLMError, get_llm
from memory_engine.models import MemorySpace, SpaceLLM
from memory_engine.store import secrets

# A connection test waits this long for an answer, once: an owner at the page should not wait minutes.


def choice_of(space: MemorySpace) -> SpaceLLM | None:
    return SpaceLLM.objects.filter(space_id=space.pk).first()


def llm_for(space: MemorySpace) -> LLM:
    """The LLM that answers for this space. Raises LLMError when its chosen endpoint cannot be used (its
    host is no longer allowed, its key cannot be read): a space never falls back to another model silently."""
    choice = choice_of(space)
    if choice is None:
        return get_llm()
    return get_llm(resolved(choice))


def weak_model(space: MemorySpace) -> bool:
    """Whether the space's LLM is a weak one (LLM.weak: the prompt is then the compact one), read without
    building a client: the inspector shows the prompt even when the chosen endpoint cannot be reached."""
    choice = choice_of(space)
    if choice is None:
        return get_llm().weak
    return choice.provider == SpaceLLM.Provider.OFFLINE


def resolved(choice: SpaceLLM) -> dict:
    """The settings of get_llm for the chosen endpoint, its key decrypted; LLMError when it cannot be used."""
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
