"""A chat that feels live, in a real headless Chromium against a live server: a reply's words show while
the model is still writing, the stop button ends it with nothing stored, and changes made elsewhere reach
the memory panel as they happen, after a dropped connection too.

Screenshots go to the test's temporary folder, or to SCREENSHOTS_DIR (see tests/system/test_browser.py)."""

import threading
import time

import pytest

from bench.fake_llm_server import FakeLLMServer, reply
from memory_engine.models import HeatEvent, LongTermEntry, MemorySpace, MidTermSession, Page, ReplyRecord, SpaceLLM
from memory_engine.services import curation
from tests.conftest_browser import sign_in
from tests.memory_helpers import add_turns, days_ago, nothing_extracted
from tests.processes import free_port, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _memory_state() -> tuple:
    return (
        list(Page.objects.order_by("pk").values_list("pk", "user_input", "agent_response")),
        list(MidTermSession.objects.order_by("pk").values_list("heat", "n_visit")),
        list(LongTermEntry.objects.order_by("pk").values_list("hits", flat=True)),
        HeatEvent.objects.count(),
    )


def test_a_reply_streams_into_the_page_and_stop_ends_it_with_nothing_stored(
    browser, live_server, ann, fake_llm, screenshots
):
    gate = threading.Event()
    long_reply = "Your cat is called Milo and " + " ".join(f"he{n} naps" for n in range(200)) + "."
    replies = iter([reply(long_reply, pause_after=5, gate=gate, chunk_seconds=0.05), reply("Milo, the cat who naps.")])
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else next(replies)
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#profile dd .value")
    before = _memory_state()

    browser.fill("#query", "What is my cat called?")
    browser.keyboard.press("Enter")
    streaming = browser.locator(".bubble.assistant.pending.streaming .text")
    streaming.filter(has_text="Your cat is called Milo").wait_for()  # five words; the model waits for the test
    assert streaming.inner_text().strip() == "Your cat is called Milo"
    assert browser.locator("#stop").is_visible() and not browser.locator("#send").is_visible()
    assert _memory_state() == before  # the reply is not complete: nothing is stored yet
    browser.screenshot(path=str(screenshots / "streaming.png"), full_page=False)

    browser.click("#stop")
    stopped = browser.locator(".bubble.assistant.stopped")
    stopped.locator(".stopped-note").wait_for()
    assert "not kept in memory" in stopped.inner_text()
    assert browser.locator("#send").is_visible() and not browser.locator("#stop").is_visible()
    gate.set()  # the model writes on; the server stops it at its next words
    deadline = time.monotonic() + 60
    while not fake_llm.streams[0].hung_up and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_llm.streams[0].hung_up and fake_llm.streams[0].sent < fake_llm.streams[0].total
    time.sleep(0.5)
    assert _memory_state() == before

    browser.fill("#query", "And what does he do?")
    browser.keyboard.press("Enter")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Milo, the cat who naps.")
    stored = Page.objects.order_by("-seq").first()
    assert (stored.user_input, stored.agent_response) == ("And what does he do?", "Milo, the cat who naps.")
    assert not Page.objects.filter(user_input="What is my cat called?").exists()


def test_changes_made_elsewhere_are_pushed_to_the_panel_and_a_dropped_feed_catches_up(
    browser, live_server, ann, memory, fake_llm, screenshots, settings
):
    fake_llm.responder = nothing_extracted
    settings.MEMORYOS = {
        **settings.MEMORYOS,
        "EVENTS_STREAM_SECONDS": 3,
    }  # the server ends each stream after 3 s; the page reconnects
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    feeds = []
    browser.on("request", lambda request: feeds.append(request) if "/events/" in request.url else None)
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.locator("#feed.live").wait_for()

    # Another door (the Python class, as an agent would) stores a turn: the open page shows it, unasked.
    add_turns(memory, [("I started learning the cello.", "How exciting!")], start=days_ago(0))
    browser.locator("#short-term li", has_text="I started learning the cello.").wait_for()

    # The page goes offline: when the stream ends it cannot reconnect, and meanwhile an entry is set.
    # Back online, it reconnects, sends the last revision it saw, and is told at once what it missed.
    browser.context.set_offline(True)
    browser.locator("#feed", has_text="reconnecting").wait_for()
    curation.profile_entry_add(
        space=MemorySpace.objects.get(user__external_id="alice"), attribute="hobby", value="cello", actor="test"
    )
    browser.context.set_offline(False)
    browser.locator("#profile dd .value", has_text="cello").wait_for()
    browser.locator("#feed.live").wait_for()
    reconnects = feeds[1:]
    assert reconnects and any(
        request.all_headers().get("last-event-id") or "last_event_id=" in request.url for request in reconnects
    )


def test_the_owner_points_the_space_at_an_endpoint_tests_it_and_the_next_reply_comes_from_it(
    browser, live_server, ann, fake_llm, settings, screenshots
):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_ALLOWED_HOSTS": "127.0.0.1"}
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": "the browser test's secrets passphrase of 32+ chars"}
    key = "sk-browser-test-key-9XyZ"
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("Default.")
    with FakeLLMServer(model="own-model") as own:
        own.responder = lambda request: (
            nothing_extracted()
            if "response_format" in request
            else reply("OK" if len(request["messages"]) == 1 else "From your own model.")
        )
        sign_in(browser, live_server, "ann", "pw-ann-12345")
        browser.goto(f"{live_server.url}/chat/alice/helper/")
        browser.click("#model-panel summary")
        browser.locator("#model-note", has_text="The server's default is openai").wait_for()
        form = browser.locator("#model")
        assert form.locator("select[name=provider]").input_value() == "default"
        assert not browser.locator("#endpoint-fields").is_visible()
        form.locator("select[name=provider]").select_option("openai")
        form.locator("input[name=base_url]").fill(own.base_url)
        form.locator("input[name=model]").fill("own-model")
        form.locator("input[name=api_key]").fill(key)
        browser.click("#test-model")
        browser.locator("#model-status", has_text="connected").wait_for()
        assert "“OK”" in browser.locator("#model-status").inner_text() and not SpaceLLM.objects.exists()
        form.locator("button[type=submit]").click()
        browser.locator("#model-status", has_text="saved").wait_for()
        assert form.locator("input[name=api_key]").input_value() == ""
        assert "ending in 9XyZ" in form.locator("input[name=api_key]").get_attribute("placeholder")
        assert key not in browser.content()
        browser.screenshot(path=str(screenshots / "model.png"), full_page=False)

        browser.fill("#query", "Who answers?")
        browser.keyboard.press("Enter")
        browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=From your own model.")
        assert own.authorizations[-1] == f"Bearer {key}"


def test_an_endpoint_that_does_not_answer_is_saved_only_when_asked_twice(browser, live_server, ann, settings):
    """The model form saved an endpoint whose test had just failed ("saved: the next reply uses it"), and
    the next message failed. Save now asks it for a word first."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_ALLOWED_HOSTS": "127.0.0.1"}
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.click("#model-panel summary")
    browser.locator("#model-note", has_text="The server's default is").wait_for()  # the form as stored, loaded
    form = browser.locator("#model")
    form.locator("select[name=provider]").select_option("openai")
    form.locator("input[name=base_url]").fill(f"http://127.0.0.1:{free_port()}/v1")  # nothing listens there
    form.locator("input[name=model]").fill("absent-model")
    form.locator("button[type=submit]").click()
    browser.wait_for_function("!document.querySelector('#model-status').textContent.includes('…')")
    assert "not saved" in browser.locator("#model-status").inner_text(), browser.locator("#model-status").inner_text()
    assert "Press Save again" in browser.locator("#model-status").inner_text()
    assert not SpaceLLM.objects.exists()
    form.locator("button[type=submit]").click()
    browser.locator("#model-status", has_text="saved untested").wait_for()
    assert SpaceLLM.objects.get().model == "absent-model"


def test_the_chat_works_from_the_keyboard_alone(browser, live_server, ann, fake_llm):
    gate = threading.Event()
    replies = iter(
        [
            reply(
                "Milo " + " ".join(f"naps{n}" for n in range(200)) + ".", pause_after=2, gate=gate, chunk_seconds=0.05
            ),
            reply("Hi."),
        ]
    )
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else next(replies)
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.locator("#feed.live").wait_for()

    def tab_to(selector: str, limit: int = 80) -> None:
        for _ in range(limit):
            browser.keyboard.press("Tab")
            if browser.evaluate("(q) => document.activeElement === document.querySelector(q)", selector):
                return
        raise AssertionError(f"{selector} cannot be reached with Tab")

    tab_to("#query")
    browser.keyboard.type("Tell me about Milo.")
    browser.keyboard.press("Enter")
    browser.locator(".bubble.assistant.streaming").wait_for()
    browser.keyboard.press("Escape")  # stops the reply, as the button does
    browser.locator(".bubble.assistant.stopped .stopped-note").wait_for()
    gate.set()
    assert browser.evaluate("document.activeElement.id") == "query"  # back in the text box, ready to type
    browser.keyboard.type("Hello?")
    browser.keyboard.press("Enter")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Hi.")
    for panel in ("#parameters-panel summary", "#model-panel summary", "#heat-panel summary"):
        tab_to(panel)
        browser.keyboard.press("Enter")
        assert browser.evaluate("(q) => document.querySelector(q).parentElement.open", panel)
    tab_to("#model select[name=provider]")
    tab_to("#test-model")


def test_a_new_tokens_secret_is_copied_with_its_button(browser, live_server, ann):
    """The secret is shown once; it had no copy button (a phone cannot easily select a long field)."""
    browser.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/accounts/tokens/")
    browser.fill("#token-form input[name=name]", "notebook")
    browser.click("#token-form button[type=submit]")
    secret = browser.locator("#token-secret").input_value()
    assert secret.startswith("mos_")
    browser.click("#copy-token")
    browser.locator("#copy-status", has_text="copied").wait_for()
    assert browser.evaluate("navigator.clipboard.readText()") == secret


def test_the_usage_panel_names_the_currency_of_its_costs(browser, live_server, ann, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PRICES": {"fake-model": (2.0, 8.0)}}
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.fill("#query", "Hello there, how are you?")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending)")
    # What the reply cost is stored once its last words are sent: the event the panel's figures need.
    wait_for(lambda: ReplyRecord.objects.exists(), progress=lambda: 0, what="the reply's record", stall=120)
    browser.click("#usage-panel summary")
    replies = browser.locator("#usage table tr.total th").nth(1)
    replies.wait_for()
    assert "tokens" in replies.inner_text() and "USD" in replies.inner_text(), replies.inner_text()
    assert "quoted from memory" in browser.locator("#usage").inner_text()
