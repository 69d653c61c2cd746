"""The LLM a space uses: the deployment's, the bundled offline model, or an OpenAI-compatible endpoint its
owner chose (checked, its key kept encrypted), tested; the local servers found answering."""

from memory_engine.engine.llm_choice import choice_of, choice_set, choice_test, llm_for, weak_model
from memory_engine.llm import LLM, LLMError, LLMUnavailable, get_llm, provider_name
from memory_engine.llm.local_servers import answering as local_servers_answering
from memory_engine.store.secrets import SecretsUnavailable, can_keep_secrets

__all__ = [
    "LLM",
    "LLMError",
    "LLMUnavailable",
    "SecretsUnavailable",
    "can_keep_secrets",
    "choice_of",
    "choice_set",
    "choice_test",
    "get_llm",
    "llm_for",
    "local_servers_answering",
    "provider_name",
    "weak_model",
]
