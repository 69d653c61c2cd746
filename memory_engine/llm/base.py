"""The LLM boundary: one small base class, one module per provider.

Everything the engine asks a language model goes through `LLM.chat` or `LLM.structured`. Both check
the answer before handing it back, so nothing a model returns reaches the database unchecked:
`chat` rejects empty or error-looking text, `structured` returns only JSON that matches the caller's
JSON schema. Failures surface as one of three exceptions, so callers (Celery tasks) can tell a
transient outage, worth retrying later, from an answer that will not get better by asking again.
"""

from __future__ import annotations

import json
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema
import jsonschema.exceptions

from memory_engine.errors import LLMDegenerateAnswer, LLMInvalidAnswer, ReplyStopped
from memory_engine.language.reading import ends_no_sentence
from memory_engine.language.replies import (
    ANNOUNCES_LIST,
    ENDS_AT_LINE_START,
    ERROR_TEXT,
    FENCED_JSON,
    NEXT_SENTENCE,
    SENTENCE_END,
)

from .degeneration import ReplyGuard
from .sampling import Sampling

logger = logging.getLogger(__name__)

Message = dict[str, str]


@dataclass(frozen=True)
class Completion:
    """One answer from the model, as text, with the token usage the provider reported (0 if none).

    `finish_reason` is "stop" for a complete answer and "length" when the answer was cut off at
    max_tokens (a chat answer is then trimmed to its last full sentence), "sentences" when a chat
    answer was stopped at the sampling's `max_sentences`, "stopped" when the guard stopped it mid-way;
    None when the provider did not say. `retried_because` says why a first answer was rejected as
    degenerate, when the one returned is the retry's.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None
    retried_because: str | None = None


@dataclass(frozen=True)
class Usage:
    """A snapshot of an LLM instance's counters; subtract two snapshots to cost one operation."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    invalid_answers: int = 0

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls - other.calls,
            prompt_tokens=self.prompt_tokens - other.prompt_tokens,
            completion_tokens=self.completion_tokens - other.completion_tokens,
            invalid_answers=self.invalid_answers - other.invalid_answers,
        )


# A retry at temperature 0 would reproduce the same invalid answer (the offline model is fully
# deterministic), so only the first structured attempt is greedy.
_STRUCTURED_FIRST_TEMPERATURE = 0.0
_STRUCTURED_RETRY_TEMPERATURE = 0.4


def parse_json_answer(text: str) -> Any:
    """Parse a model's JSON answer, tolerating only whitespace and a ```json fence around it.

    Raises ValueError when the text is not one JSON document. Pure; safe to repeat.
    """
    match = FENCED_JSON.match(text)
    body = match.group("body") if match else text
    return json.loads(body)


class LLM(ABC):
    """A language model behind the engine's boundary.

    Subclasses implement `_complete` (one request to the model, no retries of invalid answers, no
    validation) and set `name`. This class adds answer validation, bounded retries of invalid answers,
    and usage counters.

    What the counters count: `calls` is the number of requests the model answered, usable or not
    (each `_complete` that returned a Completion or raised LLMInvalidAnswer). Requests that failed in
    transport or were refused (LLMUnavailable, plain LLMError) are not counted, nor are the re-sends an
    SDK makes on its own after a 429/5xx/connection error: the model never answered those.
    `prompt_tokens`/`completion_tokens` add up what the provider reported for every counted call,
    including rejected answers (they were paid for). `invalid_answers` counts the rejected ones.
    The counters are per instance and process-wide (the factory caches instances); take a `usage()`
    snapshot before and after an operation and subtract to get its cost.
    """

    name: str = "abstract"
    model: str = ""  # the model's name at its provider (what its tokens cost depends on)
    # True for a model too small to paraphrase reliably (the bundled 135M one): it is then never asked
    # about the person (engine/recall.py answers from their words), nor asked to promote (the updater
    # keeps their own statements), and its replies never become memory (Page.ReplySource.WEAK_MODEL).
    weak: bool = False

    def __init__(self, *, max_tokens: int, max_retries: int) -> None:
        self.max_tokens = max_tokens
        # Extra attempts after an invalid answer; the provider's transport retries are separate.
        self.max_retries = max(0, max_retries)
        self._usage_lock = threading.Lock()
        self._calls = 0
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._invalid_answers = 0

    # --- counters ----------------------------------------------------------------------------

    @property
    def calls(self) -> int:
        return self._calls

    @property
    def prompt_tokens(self) -> int:
        return self._prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self._completion_tokens

    def usage(self) -> Usage:
        """Return a consistent snapshot of the counters. Changes nothing."""
        with self._usage_lock:
            return Usage(self._calls, self._prompt_tokens, self._completion_tokens, self._invalid_answers)

    def load(self) -> None:
        """Get ready to answer (an in-process model loads its weights); nothing for a remote endpoint."""
        return None

    def _count(self, completion: Completion | None, *, invalid: bool) -> None:
        with self._usage_lock:
            self._calls += 1
            if completion is not None:
                self._prompt_tokens += completion.prompt_tokens
                self._completion_tokens += completion.completion_tokens
            if invalid:
                self._invalid_answers += 1

    # --- the provider's part ------------------------------------------------------------------

    @abstractmethod
    def _complete(
        self,
        messages: list[Message],
        *,
        sampling: Sampling,
        json_schema: dict | None,
        schema_name: str | None,
        watch: Callable[[str], str | None] | None = None,
    ) -> Completion:
        """Send one request and return the model's answer unchecked.

        Raise LLMUnavailable for transport failures (after the provider's own bounded retries),
        LLMError for a refused request, LLMInvalidAnswer for a response that is not a chat completion.
        When `json_schema` is given, ask the provider to constrain the answer to it. With `watch`, stream
        the answer and call `watch(text_so_far)` as it grows; when it returns a reason, stop generating
        there and return what was written with finish_reason "stopped".
        """

    # --- public calls ---------------------------------------------------------------------------

    def chat(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        sampling: Sampling | None = None,
        guard: ReplyGuard | None = None,
        on_text: Callable[[str], bool] | None = None,
    ) -> Completion:
        """Ask for a free-text answer and return it once it is usable: not empty, not an error string,
        not degenerate.

        `sampling` defaults to greedy decoding with `max_tokens` (default: the instance's cap). The answer
        streams past `guard` (default: a guard that knows no prompt, which still stops loops and role
        markers): a degenerate answer is stopped where the guard sees it and asked once more with
        `sampling.stronger()`; degenerate again, LLMDegenerateAnswer. An answer cut off at the token cap
        is trimmed to its last full sentence. An empty or error-looking answer is asked again up to
        `max_retries` more times, then LLMInvalidAnswer. Changes only the usage counters. Safe to repeat
        (each call is a new, billed request).

        `on_text`, for a caller that shows the answer as it is written: called with the current attempt's
        text so far each time it grows past the guard (a retry starts again from its first word, so the
        text may begin anew); when it returns True, generation stops and ReplyStopped is raised.
        """
        _check_messages(messages)
        current = sampling or Sampling(max_tokens=max_tokens or self.max_tokens, temperature=temperature)
        guard = guard or ReplyGuard()
        invalid_attempts = 0
        retried_because: str | None = None
        last_problem = ""
        spent = [0, 0]  # prompt and completion tokens of rejected degenerate answers
        while True:
            watch = _Watch(guard, current, on_text)
            try:
                completion = self._complete(messages, sampling=current, json_schema=None, schema_name=None, watch=watch)
            except LLMInvalidAnswer as exc:
                self._count(None, invalid=True)
                last_problem = str(exc)
            else:
                if watch.reason == STOPPED_BY_CALLER:
                    self._count(completion, invalid=False)
                    raise ReplyStopped(f"{self.name}: the caller stopped the answer")
                degenerate = guard.problem(completion.text) if completion.text.strip() else None
                problem = degenerate or _chat_problem(completion.text)
                self._count(completion, invalid=problem is not None)
                if problem is None:
                    return _finished(completion, current, retried_because)
                if degenerate:
                    logger.warning("%s chat: degenerate answer (%s)", self.name, degenerate)
                    spent = [spent[0] + completion.prompt_tokens, spent[1] + completion.completion_tokens]
                    if retried_because is not None:
                        raise LLMDegenerateAnswer(
                            f"{self.name}: the answer degenerated twice ({retried_because}; then {degenerate})",
                            problem=degenerate,
                            prompt_tokens=spent[0],
                            completion_tokens=spent[1],
                        )
                    retried_because = degenerate
                    current = current.stronger()
                    continue
                last_problem = problem
            invalid_attempts += 1
            logger.warning("%s chat: unusable answer on attempt %d: %s", self.name, invalid_attempts, last_problem)
            if invalid_attempts > self.max_retries:
                raise LLMInvalidAnswer(
                    f"{self.name}: no usable chat answer after {invalid_attempts} attempts ({last_problem})"
                )

    def structured(
        self,
        messages: list[Message],
        *,
        schema: dict,
        schema_name: str,
        max_tokens: int | None = None,
    ) -> tuple[dict, Completion]:
        """Ask for a JSON object matching `schema`; return it parsed and validated, with the completion.

        The provider is asked to enforce the schema (OpenAI strict mode, a grammar offline), and the
        answer is still parsed and validated here, because neither guarantee covers every provider or
        a truncated answer. An invalid answer is asked again up to `max_retries` more times, then
        LLMInvalidAnswer with a short reason (never the raw answer). Raises ValueError at once if the
        schema itself is not a valid JSON schema. Changes only the usage counters. Safe to repeat.
        """
        _check_messages(messages)
        validator_class = jsonschema.validators.validator_for(schema)
        try:
            validator_class.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            raise ValueError(f"schema {schema_name!r} is not a valid JSON schema: {exc.message}") from None
        validator = validator_class(schema)
        limit = max_tokens or self.max_tokens
        last_problem = ""
        for attempt in range(1, self.max_retries + 2):
            temperature = _STRUCTURED_FIRST_TEMPERATURE if attempt == 1 else _STRUCTURED_RETRY_TEMPERATURE
            try:
                completion = self._complete(
                    messages,
                    sampling=Sampling(max_tokens=limit, temperature=temperature),
                    json_schema=schema,
                    schema_name=schema_name,
                )
            except LLMInvalidAnswer as exc:
                self._count(None, invalid=True)
                last_problem = str(exc)
            else:
                value, problem = _structured_value(completion, validator)
                self._count(completion, invalid=problem is not None)
                if problem is None:
                    return value, completion
                last_problem = problem
            logger.warning(
                "%s structured %s: invalid answer on attempt %d: %s", self.name, schema_name, attempt, last_problem
            )
        raise LLMInvalidAnswer(
            f"{self.name}: no valid {schema_name} answer after {self.max_retries + 1} attempts ({last_problem})"
        )


def _check_messages(messages: list[Message]) -> None:
    # A malformed message list is the caller's bug, not the model's: fail before spending a call.
    if not messages:
        raise ValueError("messages must not be empty")
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise ValueError(f"each message needs a role of system/user/assistant, got {message!r:.80}")
        if not isinstance(message.get("content"), str):
            raise ValueError("each message needs string content")


def _chat_problem(text: str) -> str | None:
    if not text or not text.strip():
        return "empty answer"
    if ERROR_TEXT.match(text):
        return "answer looks like an error message"
    return None


ENOUGH_SENTENCES = "has said enough sentences"
STOPPED_BY_CALLER = "stopped by the caller"


class _Watch:
    """What to watch a streamed chat answer for: the guard's problems, then the sentence limit; the text
    that passes both goes to `on_text`, which may stop it. `reason`: why generation was stopped, if it was."""

    def __init__(self, guard: ReplyGuard, sampling: Sampling, on_text: Callable[[str], bool] | None) -> None:
        self.guard = guard
        self.sampling = sampling
        self.on_text = on_text
        self.reason: str | None = None

    def __call__(self, text: str) -> str | None:
        problem = self.guard.streaming_problem(text)
        if problem is None and self.sampling.max_sentences and _sentences_end(text, self.sampling.max_sentences):
            problem = ENOUGH_SENTENCES
        if problem is None and self.on_text is not None and self.on_text(text):
            problem = STOPPED_BY_CALLER
        self.reason = problem
        return problem


def _sentences_end(text: str, count: int) -> int | None:
    """Where the first `count` sentences of `text` end, once a sentence after them has begun; else
    None. Pure."""
    number = 0
    for match in NEXT_SENTENCE.finditer(text):
        word = text[: match.start()].rsplit(None, 1)[-1].lower() if text[: match.start()].strip() else ""
        if match.group(0)[0] == "." and ends_no_sentence(word):
            continue  # "Dr. Vet", "J. Smith": not the end of a sentence
        if match.group(0)[0] == "." and word.isdigit() and ENDS_AT_LINE_START.search(text[: match.start() - len(word)]):
            continue  # "1." opening a line: a list's number, not the end of a sentence
        number += 1
        if number == count:
            return match.start() + len(match.group(0).rstrip())
    return None


def _finished(completion: Completion, sampling: Sampling, retried_because: str | None) -> Completion:
    """The usable answer as the caller gets it: stripped, trimmed to its first `max_sentences`
    sentences, or, cut off at the token cap, to its last whole sentence; either way without a last
    sentence that announces a list it no longer holds. Pure."""
    text = completion.text.strip()
    finish_reason = completion.finish_reason
    end = _sentences_end(text, sampling.max_sentences) if sampling.max_sentences else None
    if end is not None:
        text, finish_reason = text[:end], "sentences"
    else:
        text = _whole_sentences(text, cut_off=finish_reason == "length")
    if finish_reason in ("sentences", "length"):
        # "Here are some simple ways:" with the list cut off: the answer ends at the sentence before.
        text = ANNOUNCES_LIST.sub("", text)
    return Completion(text, completion.prompt_tokens, completion.completion_tokens, finish_reason, retried_because)


def _whole_sentences(text: str, *, cut_off: bool) -> str:
    """`text` without the unfinished sentence an answer cut off at the token cap ends with. Pure."""
    if not cut_off:
        return text
    ends = [match.end() for match in SENTENCE_END.finditer(text)]
    return text[: ends[-1]] if ends else text + "…"


def _structured_value(completion: Completion, validator: Any) -> tuple[dict, str | None]:
    if completion.finish_reason == "length":
        # A constrained answer cut off at max_tokens is incomplete even if it happens to parse.
        return {}, f"answer cut off at max_tokens ({completion.completion_tokens} tokens)"
    try:
        value = parse_json_answer(completion.text)
    except ValueError as exc:
        return {}, f"answer is not JSON ({type(exc).__name__} at char {getattr(exc, 'pos', '?')})"
    if not isinstance(value, dict):
        return {}, f"answer is JSON {type(value).__name__}, not an object"
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        return {}, f"answer does not match the schema at {where}: {error.message:.120}"
    return value, None
