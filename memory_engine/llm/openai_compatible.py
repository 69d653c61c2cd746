"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama, ...)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import openai

from memory_engine.admission import waiting_elsewhere
from memory_engine.errors import LLMError, LLMInvalidAnswer, LLMUnavailable

from .base import LLM, Completion, Message
from .guarded_http import AddressRefused, checked_client
from .sampling import Sampling

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
        checked: bool = False,
    ) -> None:
        """`checked`: an endpoint a space's owner chose, called through guarded_http.checked_client (no
        redirects, only the address checked); the deployment's own endpoint is the operator's."""
        super().__init__(max_tokens=max_tokens, max_retries=max_retries)
        self.model = model
        self.base_url = base_url
        self.checked = checked
        # Local servers (llama.cpp, vLLM, Ollama) need no key, but the SDK refuses to start without one.
        self._client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "not-needed",
            timeout=timeout_seconds,
            max_retries=max_retries,
            http_client=checked_client(timeout_seconds) if checked else None,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self.model!r})"

    def _complete(
        self,
        messages: list[Message],
        *,
        sampling: Sampling,
        json_schema: dict | None,
        schema_name: str | None,
        watch: Callable[[str], str | None] | None = None,
    ) -> Completion:
        request: dict = {"model": self.model, "messages": messages, **_sampling_fields(sampling)}
        if json_schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name or "answer", "schema": json_schema, "strict": True},
            }
        if watch is not None:
            return self._stream(request, watch)
        with self._errors(), waiting_elsewhere():  # the request's place is another's meanwhile
            response = self._client.chat.completions.create(**request)
        return _completion_from_response(response, self.name)

    def _stream(self, request: dict, watch: Callable[[str], str | None]) -> Completion:
        """Stream the answer, asking `watch` after each piece; stop reading (which closes the connection,
        so the server stops generating) when it objects."""
        parts: list[str] = []
        finish_reason: str | None = None
        usage = None
        chunks = 0
        with self._errors(), waiting_elsewhere():
            stream = self._client.chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True}
            )
            try:
                for chunk in _chunks(stream):
                    usage = getattr(chunk, "usage", None) or usage
                    choices = getattr(chunk, "choices", None) or []
                    if not choices:
                        continue
                    delta = getattr(choices[0], "delta", None)
                    piece = getattr(delta, "content", None)
                    finish_reason = getattr(choices[0], "finish_reason", None) or finish_reason
                    if isinstance(piece, str) and piece:
                        chunks += 1
                        parts.append(piece)
                        if watch("".join(parts)):
                            finish_reason = "stopped"
                            break
            finally:
                stream.close()
        if finish_reason is None and not parts:
            raise LLMInvalidAnswer(f"{self.name}: the stream ended without an answer")
        return Completion(
            text="".join(parts),
            prompt_tokens=_token_count(getattr(usage, "prompt_tokens", None)),
            # A stream stopped early reports no usage: count the pieces received (about one token each).
            completion_tokens=_token_count(getattr(usage, "completion_tokens", None)) or chunks,
            finish_reason=finish_reason,
        )

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn the SDK's exceptions into the boundary's three."""
        try:
            yield
        except openai.APITimeoutError as exc:
            raise LLMUnavailable(f"{self.name}: request timed out ({self.base_url})") from exc
        except openai.APIConnectionError as exc:
            refused = _cause(exc, AddressRefused)
            if refused is not None:
                raise LLMError(f"{self.name}: {self.base_url} {refused}") from exc
            raise LLMUnavailable(f"{self.name}: cannot reach {self.base_url}: {exc.message}") from exc
        except openai.APIResponseValidationError as exc:
            raise LLMInvalidAnswer(f"{self.name}: response is not a chat completion: {exc.message:.120}") from exc
        except openai.APIStatusError as exc:
            # For a space's endpoint, the status only: the body is whatever answered there (a redirect's
            # target, an internal error page), not ours to show its owner. The deployment's is the operator's.
            detail = f"{self.name}: HTTP {exc.status_code} from {self.base_url}"
            if not self.checked:
                detail += f": {exc.message:.200}"
            if exc.status_code >= 500 or exc.status_code in _TRANSIENT_STATUS:
                raise LLMUnavailable(detail) from exc
            raise LLMError(detail) from exc
        except ValueError as exc:
            # A 200 whose body is not JSON (truncated, HTML from a proxy): the SDK's json() raises.
            raise LLMInvalidAnswer(f"{self.name}: response body is not valid JSON") from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The exception of `kind` that `exc` was raised from, however deep (the SDK wraps httpx's, which
    wraps httpcore's)."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None or isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _chunks(stream: object) -> Iterator[object]:
    """The stream's chunks; a connection that breaks off mid-answer surfaces as the HTTP library's own
    exception, not the SDK's, and is a transport failure like any other."""
    try:
        yield from stream  # type: ignore[misc]
    except (openai.OpenAIError, LLMError):
        raise
    except Exception as exc:
        raise LLMUnavailable(f"the answer stream broke off: {type(exc).__name__}: {str(exc):.120}") from exc


def _sampling_fields(sampling: Sampling) -> dict:
    """The OpenAI request fields for `sampling` (llama.cpp's repeat_penalty has no OpenAI equivalent)."""
    fields: dict = {"max_tokens": sampling.max_tokens, "temperature": sampling.temperature}
    if sampling.top_p < 1.0:
        fields["top_p"] = sampling.top_p
    if sampling.frequency_penalty:
        fields["frequency_penalty"] = sampling.frequency_penalty
    if sampling.presence_penalty:
        fields["presence_penalty"] = sampling.presence_penalty
    if sampling.seed is not None:
        fields["seed"] = sampling.seed
    if sampling.stop:
        fields["stop"] = list(sampling.stop[:4])
    return fields


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
