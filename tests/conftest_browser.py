"""Pytest plugin: `browser`, a headless Chromium page (Playwright driving Debian's chromium),
`screenshots`, the folder its pictures go to, and `ann`, an account owning alice's memory."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from memory_engine.models import MemoryUser
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted

BUSY_MACHINE_WAIT_MS = 120_000
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser(monkeypatch):
    """A headless Chromium page. The test's ORM calls run in the same thread as Playwright's event loop
    (between its calls), which Django would otherwise refuse."""
    assert CHROMIUM, "Chromium is not installed: scripts/test installs Debian's chromium package"
    from playwright.sync_api import expect, sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        # bypass_csp: Playwright evaluates wait_for_function's predicate as a string, which the site's
        # Content-Security-Policy refuses; the production test checks the policy in pages of its own.
        page = chromium.new_page(viewport={"width": 1280, "height": 860}, bypass_csp=True)
        # Generous waits, for a busy machine: Playwright's own are 30 s for the page and 5 s for `expect`.
        page.set_default_timeout(BUSY_MACHINE_WAIT_MS)
        expect.set_options(timeout=BUSY_MACHINE_WAIT_MS)
        dialogs = []
        page.accept_dialogs = False  # a test sets it to answer OK to the page's confirmations

        def answer(dialog):
            dialogs.append(dialog.message)
            dialog.accept() if page.accept_dialogs else dialog.dismiss()

        page.on("dialog", answer)
        page.dialogs = dialogs
        yield page
        chromium.close()
        # ORM calls made while Playwright runs use their own connection (Django's connections are
        # context-local and Playwright switches contexts): close it here, or the test database cannot
        # be dropped at the end of the run.
        connections.close_all()


@pytest.fixture
def screenshots(tmp_path) -> Path:
    folder = Path(settings.BASE_DIR) / os.environ["SCREENSHOTS_DIR"] if os.environ.get("SCREENSHOTS_DIR") else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def ann(django_user_model, memory, alice_space, fake_llm):
    """Ann's account owns alice's memory, which holds a conversation about a cat and a learnt profile."""
    account = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    MemoryUser.objects.filter(external_id="alice").update(owner=account, display_name="Alice")
    alice_space.stm_capacity = 2
    alice_space.heat_threshold = 2.5
    alice_space.save()
    fake_llm.script(
        extraction(profile=[("occupation", "nurse", 1)], user_facts=[("pet", "The user has a cat named Milo", 1)])
    )
    fake_llm.responder = nothing_extracted
    add_turns(memory, [*CAT_TALK, ("<img src=x onerror=alert(1)> is my <b>bold</b> claim", "Noted.")])
    return account


def sign_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def open_chat(page, url: str) -> None:
    """Open a chat page and wait until its memory panel is drawn: the feed opens only after the first draw
    (static/js/chat/main.js). A click on a panel's summary before then lands where the summary was, on a
    busy machine, and the panel stays closed."""
    page.goto(url)
    page.locator("#feed.live").wait_for()
