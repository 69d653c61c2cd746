"""Pytest plugin: `browser`, a headless Chromium page (Playwright driving Debian's chromium), and
`screenshots`, the folder its pictures go to."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser(monkeypatch):
    """A headless Chromium page. The test's ORM calls run in the same thread as Playwright's event loop
    (between its calls), which Django would otherwise refuse."""
    assert CHROMIUM, "Chromium is not installed: scripts/test installs Debian's chromium package"
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": 1280, "height": 860})
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
