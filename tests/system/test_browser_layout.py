"""The pages at a desktop's width and a phone's, light and dark: nothing wider than the window, and the
inspector's text in view beside its scores."""

import pytest

from memory_engine.models import LongTermEntry, MemorySpace, MemoryUser
from memory_engine.services.lab import experiment_create
from memory_engine.services.tokens import token_create
from tests.conftest_browser import sign_in
from tests.memory_helpers import add_turns, days_ago

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = (1400, 390)


def overflow(browser) -> list[str]:
    """What sticks out of the window to the right: the page's own width, and each element wider."""
    return browser.evaluate(
        """() => {
          const width = document.documentElement.clientWidth;
          const wide = [...document.querySelectorAll("body *")].filter((node) => {
            const box = node.getBoundingClientRect();
            const scrolls = node.closest("[hidden], .table-scroll, #inspection, .chart-table");
            return box.width > 0 && box.right > width + 1 && !scrolls;
          }).map((node) => `${node.tagName.toLowerCase()}${node.id ? "#" + node.id : ""}.${node.className}`);
          return document.documentElement.scrollWidth > width ? ["the page", ...wide.slice(0, 5)] : [];
        }"""
    )


def test_every_page_fits_a_desktop_and_a_phone_in_light_and_dark(browser, live_server, ann, memory, screenshots):
    experiment = experiment_create(
        source=MemorySpace.objects.get(user__external_id="alice"), name="a much lower threshold", parameters={}
    )
    add_turns(memory, [(f"Turn {n} of a long chat about my garden.", "Noted.") for n in range(12)], start=days_ago(1))
    token_create(memory_user=MemoryUser.objects.get(external_id="alice"), name="my notebook")
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    pages = {
        "home": "/",
        "tokens": "/accounts/tokens/",
        "chat": "/chat/alice/helper/",
        "lab": "/lab/alice/helper/",
        "experiment": f"/lab/alice/helper/{experiment.pk}/",
    }
    for scheme in ("light", "dark"):
        browser.emulate_media(color_scheme=scheme)
        for width in WIDTHS:
            browser.set_viewport_size({"width": width, "height": 900})
            for name, path in pages.items():
                browser.goto(f"{live_server.url}{path}")
                if name == "chat":
                    browser.wait_for_selector("#profile dd .value")
                    # The conversation opens at its end: the last turn in view, below a memory panel drawn late.
                    last = browser.locator("#messages > li").last.bounding_box()
                    assert last["y"] >= 0 and last["y"] + last["height"] <= 900 + 1, (scheme, width, last)
                    browser.click("#inspector-panel summary")
                    browser.fill("#inspect-query", "What is my cat called?")
                    browser.click("#inspect button[type=submit]")
                    text = browser.locator("#inspection tr.inspected td.text").first
                    text.scroll_into_view_if_needed()
                    box = text.bounding_box()
                    assert box["x"] >= 0 and box["x"] + min(box["width"], 120) <= width, (scheme, width, box)
                if name == "chat" and width == 1400:
                    browser.click("#heat-panel summary")  # its axes in the page's own colour, dark or light
                    browser.wait_for_selector("#heat-chart .uplot canvas")
                    browser.locator("#heat-panel").screenshot(path=str(screenshots / f"heat-{scheme}.png"))
                if name == "experiment":
                    browser.wait_for_selector("#replay-status >> text=succeeded")
                wide = overflow(browser)
                assert not wide, f"{name} at {width} px ({scheme}) is wider than the window: {wide}"
                if scheme == "dark" and width == 390:
                    browser.screenshot(path=str(screenshots / f"phone-dark-{name}.png"), full_page=True)
                if (scheme, width, name) == ("light", 1400, "tokens"):
                    browser.screenshot(path=str(screenshots / "tokens.png"))


def test_on_a_phone_offline_the_message_box_is_on_the_first_screen_and_an_entrys_history_fits(
    browser, live_server, ann, memory, settings, django_user_model, screenshots
):
    """The offline notice filled two thirds of a phone's first screen and pushed the message box below it;
    the admin's entry history was 623 px wide on a 390 px phone."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "LLM_BASE_URL": ""}
    browser.set_viewport_size({"width": 390, "height": 844})
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    notice = browser.locator("#offline-notice")
    notice.wait_for()
    assert "Offline mode." in notice.inner_text()
    browser.wait_for_selector("#profile dd .value")
    box = browser.locator("#query").bounding_box()
    assert box["y"] + box["height"] <= 844, box
    assert notice.bounding_box()["height"] < 844 / 4
    browser.screenshot(path=str(screenshots / "chat-offline-phone.png"))
    browser.click("#offline-details summary")  # the rest of it, a tap away
    assert "OpenAI-compatible endpoint" in notice.inner_text()

    browser.set_viewport_size({"width": 1400, "height": 900})
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    assert browser.locator("#offline-details").evaluate("d => d.open")  # a desktop shows it whole

    staff = django_user_model.objects.create_superuser("root", password="pw-root-12345")
    entry = LongTermEntry.objects.filter(space__user__external_id="alice").first()
    assert staff and entry is not None
    browser.set_viewport_size({"width": 390, "height": 844})
    browser.context.clear_cookies()
    sign_in(browser, live_server, "root", "pw-root-12345")
    browser.goto(f"{live_server.url}/admin/memory_engine/longtermentry/{entry.pk}/versions/")
    browser.wait_for_selector("#versions")
    assert not overflow(browser), overflow(browser)
    browser.screenshot(path=str(screenshots / "entry-history-phone.png"), full_page=True)
