"""The OpenAI-compatible provider against a real HTTP server that misbehaves on cue."""

from __future__ import annotations

import time

import pytest
from django.core.exceptions import ImproperlyConfigured

from bench.fake_llm_server import drop, malformed, reply, reply_json, slow, status
from memory_engine.llm import LLMError, LLMInvalidAnswer, LLMUnavailable, get_llm
from memory_engine.llm.openai_compatible import OpenAICompatibleLLM

HELLO = [{"role": "user", "content": "Say hello"}]
SCHEMA = {
    "type": "object",
    "properties": {"pets": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 3}},
    "required": ["pets"],
    "additionalProperties": False,
}


def ask_structured(llm):
    return llm.structured(HELLO, schema=SCHEMA, schema_name="pets")


def test_it_returns_a_plain_chat_answer(fake_llm):
    fake_llm.script(reply("  Hello there!  "))

    completion = get_llm().chat(HELLO)

    assert completion.text == "Hello there!"
    assert completion.finish_reason == "stop"
    assert len(fake_llm.requests) == 1


def test_the_request_carries_the_model_the_messages_and_the_json_schema(fake_llm):
    fake_llm.script(reply_json({"pets": ["Rex"]}))

    ask_structured(get_llm())

    body = fake_llm.requests[0]
    assert body["model"] == "fake-model"
    assert body["messages"] == HELLO
    assert body["temperature"] == 0.0
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "pets", "schema": SCHEMA, "strict": True},
    }


def test_a_plain_chat_sends_no_response_format(fake_llm):
    fake_llm.script(reply("hi"))

    get_llm().chat(HELLO, max_tokens=7, temperature=0.5)

    body = fake_llm.requests[0]
    assert "response_format" not in body
    assert body["max_tokens"] == 7
    assert body["temperature"] == 0.5


def test_it_returns_a_valid_structured_answer_parsed(fake_llm):
    fake_llm.script(reply_json({"pets": ["Rex", "Miso"]}))
    llm = get_llm()

    value, completion = ask_structured(llm)

    assert value == {"pets": ["Rex", "Miso"]}
    assert completion.text == '{"pets": ["Rex", "Miso"]}'
    assert llm.usage().calls == 1


def test_it_accepts_json_inside_a_markdown_fence(fake_llm):
    fake_llm.script(reply('\n```json\n{"pets": ["Rex"]}\n```\n'))

    value, _ = ask_structured(get_llm())

    assert value == {"pets": ["Rex"]}


def test_it_rejects_prose_around_the_json_and_asks_again(fake_llm):
    fake_llm.script(reply('Sure! {"pets": ["Rex"]}'), reply_json({"pets": ["Rex"]}))

    value, _ = ask_structured(get_llm())

    assert value == {"pets": ["Rex"]}
    assert len(fake_llm.requests) == 2


def test_it_retries_after_invalid_json_content_and_counts_both_calls(fake_llm):
    fake_llm.script(reply('{"pets": ["Rex"'), reply_json({"pets": ["Rex"]}))
    llm = get_llm()

    value, _ = ask_structured(llm)

    assert value == {"pets": ["Rex"]}
    usage = llm.usage()
    assert usage.calls == 2
    assert usage.invalid_answers == 1
    # The retry is not greedy: the same prompt at temperature 0 would repeat the bad answer.
    assert [r["temperature"] for r in fake_llm.requests] == [0.0, 0.4]


def test_it_gives_up_after_bounded_attempts_when_the_answer_never_matches_the_schema(fake_llm):
    fake_llm.responder = lambda request: reply_json({"pets": "not a list"})
    llm = get_llm()

    with pytest.raises(LLMInvalidAnswer) as caught:
        ask_structured(llm)

    # LLM_MAX_RETRIES=1 in the fixture: one attempt plus one retry.
    assert len(fake_llm.requests) == 2
    assert llm.usage().calls == 2
    assert llm.usage().invalid_answers == 2
    assert "does not match the schema at pets" in str(caught.value)
    assert caught.value.transient is False


def test_the_invalid_answer_error_does_not_carry_the_raw_answer(fake_llm):
    fake_llm.responder = lambda request: reply("My secret diary says the user is called Bob and lives at ...")

    with pytest.raises(LLMInvalidAnswer) as caught:
        ask_structured(get_llm())

    assert "secret diary" not in str(caught.value)
    assert "not JSON" in str(caught.value)


def test_a_structured_answer_cut_off_at_max_tokens_is_invalid(fake_llm):
    fake_llm.script(reply_json({"pets": ["Rex"]}, finish_reason="length"), reply_json({"pets": ["Rex"]}))

    value, _ = ask_structured(get_llm())

    assert value == {"pets": ["Rex"]}
    assert len(fake_llm.requests) == 2


def test_a_malformed_response_body_is_an_invalid_answer_and_is_counted(fake_llm):
    fake_llm.script(malformed(), malformed(b"<html>bad gateway</html>"))
    llm = get_llm()

    with pytest.raises(LLMInvalidAnswer, match="not valid JSON"):
        ask_structured(llm)

    assert llm.usage().calls == 2


def test_a_malformed_response_then_a_good_one_succeeds(fake_llm):
    fake_llm.script(malformed(), reply_json({"pets": []}))

    value, _ = ask_structured(get_llm())

    assert value == {"pets": []}


def test_a_response_without_choices_is_an_invalid_answer(fake_llm):
    fake_llm.responder = lambda request: malformed(b'{"id": "chatcmpl-1", "object": "chat.completion"}')

    with pytest.raises(LLMInvalidAnswer, match="without an answer"):
        get_llm().chat(HELLO)  # a chat reply is read as a stream: this body holds no event at all
    with pytest.raises(LLMInvalidAnswer, match="no choices"):
        get_llm().structured(HELLO, schema={"type": "object"}, schema_name="anything")


def test_the_sdk_retries_a_500_and_the_call_succeeds(fake_llm):
    fake_llm.script(status(500), reply("recovered"))
    llm = get_llm()

    completion = llm.chat(HELLO)

    assert completion.text == "recovered"
    assert len(fake_llm.requests) == 2
    # The 500 never reached the model: only the answered attempt counts.
    assert llm.usage().calls == 1


def test_a_500_every_time_is_unavailable_after_bounded_retries(fake_llm):
    fake_llm.responder = lambda request: status(500)
    llm = get_llm()

    with pytest.raises(LLMUnavailable, match="HTTP 500") as caught:
        llm.chat(HELLO)

    assert len(fake_llm.requests) == 2  # the first try and one SDK retry
    assert caught.value.transient is True
    assert llm.usage().calls == 0


def test_a_rate_limit_every_time_is_unavailable(fake_llm):
    fake_llm.responder = lambda request: status(429)

    with pytest.raises(LLMUnavailable, match="HTTP 429"):
        get_llm().chat(HELLO)


def test_a_bad_request_is_a_plain_llm_error_and_is_not_retried(fake_llm):
    fake_llm.script(status(400, {"error": {"message": "unknown model fake-model", "type": "invalid_request_error"}}))

    with pytest.raises(LLMError, match="unknown model") as caught:
        get_llm().chat(HELLO)

    assert type(caught.value) is LLMError
    assert caught.value.transient is False
    assert len(fake_llm.requests) == 1


def test_a_slow_server_times_out_as_unavailable_in_bounded_time(fake_llm, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_TIMEOUT_SECONDS": 0.5}
    fake_llm.responder = lambda request: slow(5)
    started = time.monotonic()

    with pytest.raises(LLMUnavailable, match="timed out"):
        get_llm().chat(HELLO)

    # Two attempts of 0.5 s plus at most 0.5 s of SDK backoff, with slack for a loaded machine.
    assert time.monotonic() - started < 3.0
    assert len(fake_llm.requests) == 2


def test_a_slow_answer_within_the_timeout_is_fine(fake_llm):
    fake_llm.script(slow(0.2, then=reply("worth the wait")))

    assert get_llm().chat(HELLO).text == "worth the wait"


def test_a_dropped_connection_is_retried_by_the_sdk(fake_llm):
    fake_llm.script(drop(), reply("second try"))

    assert get_llm().chat(HELLO).text == "second try"


def test_a_connection_dropped_every_time_is_unavailable(fake_llm):
    fake_llm.responder = lambda request: drop()

    with pytest.raises(LLMUnavailable, match="cannot reach"):
        get_llm().chat(HELLO)


def test_nothing_listening_is_unavailable(fake_llm):
    fake_llm.stop()

    with pytest.raises(LLMUnavailable):
        get_llm().chat(HELLO)


def test_an_error_string_as_the_answer_is_rejected(fake_llm):
    fake_llm.script(reply("Error: upstream model overloaded"), reply("error: still overloaded"))
    llm = get_llm()

    with pytest.raises(LLMInvalidAnswer, match="looks like an error message"):
        llm.chat(HELLO)

    assert llm.usage().calls == 2


def test_an_empty_answer_is_rejected_then_a_real_one_accepted(fake_llm):
    fake_llm.script(reply("   "), reply("Hello!"))

    assert get_llm().chat(HELLO).text == "Hello!"


def test_token_usage_is_added_up_across_calls(fake_llm):
    fake_llm.script(reply("a", usage=(10, 3)), reply_json({"pets": []}, usage=(20, 5)))
    llm = get_llm()
    before = llm.usage()

    llm.chat(HELLO)
    ask_structured(llm)

    spent = llm.usage() - before
    assert (spent.calls, spent.prompt_tokens, spent.completion_tokens) == (2, 30, 8)
    assert llm.prompt_tokens == 30
    assert llm.completion_tokens == 8


def test_tokens_of_a_rejected_answer_still_count(fake_llm):
    fake_llm.script(reply("not json", usage=(7, 2)), reply_json({"pets": []}, usage=(7, 4)))
    llm = get_llm()

    ask_structured(llm)

    assert (llm.prompt_tokens, llm.completion_tokens) == (14, 6)


def test_a_response_without_usage_counts_zero_prompt_tokens_and_the_streamed_pieces(fake_llm):
    fake_llm.script(reply("hi there", include_usage=False))
    llm = get_llm()

    completion = llm.chat(HELLO)

    assert (completion.prompt_tokens, completion.completion_tokens) == (0, 2)
    assert llm.usage().calls == 1


def test_the_counters_are_safe_under_concurrent_calls(fake_llm):
    from concurrent.futures import ThreadPoolExecutor

    fake_llm.responder = lambda request: reply("ok", usage=(1, 1))
    llm = get_llm()

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda _: llm.chat(HELLO), range(40)))

    assert llm.usage().calls == 40
    assert llm.prompt_tokens == 40


def test_an_invalid_schema_fails_before_any_request(fake_llm):
    with pytest.raises(ValueError, match="not a valid JSON schema"):
        get_llm().structured(HELLO, schema={"type": "bogus"}, schema_name="bad")

    assert fake_llm.requests == []


def test_unscripted_requests_get_a_clear_500(fake_llm):
    with pytest.raises(LLMUnavailable, match="unscripted request"):
        get_llm().chat(HELLO)

    assert fake_llm.unscripted_requests == 2


# --- the factory ------------------------------------------------------------------------------------


def test_the_factory_follows_the_settings(fake_llm, settings):
    llm = get_llm()
    assert isinstance(llm, OpenAICompatibleLLM)
    assert llm.base_url == fake_llm.base_url
    assert get_llm() is llm  # cached for the same settings

    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_MODEL": "other-model"}
    assert get_llm() is not llm
    assert get_llm().model == "other-model"


def test_an_empty_provider_with_a_base_url_means_openai(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "", "LLM_BASE_URL": "http://127.0.0.1:9/v1"}

    assert get_llm().name == "openai"


def test_an_empty_provider_without_a_base_url_means_offline(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "", "LLM_BASE_URL": ""}

    # Building the offline provider loads nothing: the model loads on the first call.
    assert get_llm().name == "offline"


def test_an_unknown_provider_is_a_configuration_error(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "anthropic"}

    with pytest.raises(ImproperlyConfigured, match="LLM_PROVIDER"):
        get_llm()


def test_openai_without_url_or_key_is_a_configuration_error(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "openai", "LLM_BASE_URL": "", "LLM_API_KEY": ""}

    with pytest.raises(ImproperlyConfigured, match="LLM_BASE_URL"):
        get_llm()
