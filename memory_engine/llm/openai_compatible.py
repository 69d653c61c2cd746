"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama, ...)."""

from __future__ import annotations

import openai

from .base import LLM, Completion, LLMError, LLMInvalidAnswer, LLMUnavailable, Message

# Status codes the SDK itself re-sends (with backoff) before giving up; once it gives up on one of
# these, the failure is the service's state, not our request, so it is worth retrying later.
_TRANSIENT_STATUS = frozenset({408, 409, 429})


class OpenAICompatibleLLM(LLM):
    """Chat completions over HTTP through the `openai` SDK.

    Each request has a timeout of `timeout_seconds` per attempt; the SDK re-sends after a
    connection error, timeout, 408/409/429 or 5xx up to `max_retries` times with exponential backoff
    (0.5 s, 1 s, ... capped at 8 s), so one call takes at most about
    (max_retries + 1) * timeout_seconds plus the backoff. Invalid answers are retried separately by
    the base class, up to `max_retries` more times.
    """

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None,
        model: str,
        api_key: str = "",
        timeout_seconds: float = 60.0,
        max_retries: int = 2,
        max_tokens: int = 512,
    ) -> None:
        super().__init__(max_tokens=max_tokens, max_retries=max_retries)
        self.model = model
        self.base_url = base_url
        # Local servers (llama.cpp, vLLM, Ollama) need no key, but the SDK refuses to start without one.
        self._client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "not-needed",
            timeout=timeout_seconds,
            max_retries=max_retries,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self.model!r})"

    def _complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict | None,
        schema_name: str | None,
    ) -> Completion:
        request: dict = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if json_schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name or "answer", "schema": json_schema, "strict": True},
            }
        try:
            response = self._client.chat.completions.create(**request)
        except openai.APITimeoutError as exc:
            raise LLMUnavailable(f"{self.name}: request timed out ({self.base_url})") from exc
        except openai.APIConnectionError as exc:
            raise LLMUnavailable(f"{self.name}: cannot reach {self.base_url}: {exc.message}") from exc
        except openai.APIResponseValidationError as exc:
            raise LLMInvalidAnswer(f"{self.name}: response is not a chat completion: {exc.message:.120}") from exc
        except openai.APIStatusError as exc:
            detail = f"{self.name}: HTTP {exc.status_code} from {self.base_url}: {exc.message:.200}"
            if exc.status_code >= 500 or exc.status_code in _TRANSIENT_STATUS:
                raise LLMUnavailable(detail) from exc
            raise LLMError(detail) from exc
        except ValueError as exc:
            # A 200 whose body is not JSON (truncated, HTML from a proxy): the SDK's json() raises.
            raise LLMInvalidAnswer(f"{self.name}: response body is not valid JSON") from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        return _completion_from_response(response, self.name)


def _completion_from_response(response: object, provider: str) -> Completion:
    # The SDK builds its response objects without validating them, so a server that answers with
    # the wrong shape yields missing or None attributes rather than an exception.
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise LLMInvalidAnswer(f"{provider}: response has no choices")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        refusal = getattr(message, "refusal", None)
        reason = "the model refused" if refusal else "no text content"
        raise LLMInvalidAnswer(f"{provider}: response has {reason}")
    usage = getattr(response, "usage", None)
    return Completion(
        text=content,
        prompt_tokens=_token_count(getattr(usage, "prompt_tokens", None)),
        completion_tokens=_token_count(getattr(usage, "completion_tokens", None)),
        finish_reason=getattr(choices[0], "finish_reason", None),
    )


def _token_count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
