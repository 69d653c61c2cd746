"""The pages at a desktop's width and a phone's, light and dark: nothing wider than the window, and the
inspector's text in view beside its scores."""

import pytest

from memory_engine.jobs.experiments import experiment_create
from memory_engine.models import MemorySpace
from tests.conftest_browser import sign_in

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


def test_every_page_fits_a_desktop_and_a_phone_in_light_and_dark(browser, live_server, ann, screenshots):
    experiment = experiment_create(
        source=MemorySpace.objects.get(user__external_id="alice"), name="a much lower threshold", parameters={}
    )
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
                    browser.click("#inspector-panel summary")
                    browser.fill("#inspect-query", "What is my cat called?")
                    browser.click("#inspect button[type=submit]")
                    text = browser.locator("#inspection tr.inspected td.text").first
                    text.scroll_into_view_if_needed()
                    box = text.bounding_box()
                    assert box["x"] >= 0 and box["x"] + min(box["width"], 120) <= width, (scheme, width, box)
                if name == "experiment":
                    browser.wait_for_selector("#replay-status >> text=succeeded")
                wide = overflow(browser)
                assert not wide, f"{name} at {width} px ({scheme}) is wider than the window: {wide}"
                if scheme == "dark" and width == 390:
                    browser.screenshot(path=str(screenshots / f"{name}-dark-phone.png"), full_page=True)
