"""The memory lab in a real headless Chromium against a live server: the inspector, the owner's heat chart
and entry histories, and an experiment from a LoCoMo import to its comparison, replayed by a real worker.

Screenshots go to the test's temporary folder, or to SCREENSHOTS_DIR (see tests/system/test_browser.py)."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from bench.fake_llm_server import reply
from memory_engine.models import Experiment, HeatEvent, LongTermEntry, MemorySpace, MidTermSession, Page
from memory_engine.services.comparison import Probe, compare
from memory_engine.services.export import space_export
from memory_engine.services.lab import locomo_probes
from memory_engine.services.spaces import owned_user_create
from tests.conftest_browser import open_chat, sign_in
from tests.memory_helpers import COOKING_TALK, add_turns, days_ago, nothing_extracted

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_inspector_explains_a_reply_item_by_item_and_shows_what_the_budget_cut(
    browser, live_server, ann, fake_llm, screenshots
):
    fake_llm.responder = lambda request: (
        nothing_extracted() if "response_format" in request else reply("Your cat is called Milo.")
    )
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.fill("#query", "What is my cat called?")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Your cat is called Milo.")
    used = browser.locator(".bubble.assistant details.used").last
    used.locator("summary").click()
    used.locator("button.inspect-link").click()
    rows = browser.locator("#inspection tr.inspected")
    rows.first.wait_for()
    assert browser.input_value("#inspect-query") == "What is my cat called?"
    kept = browser.locator("#inspection tr.inspected.in")
    assert kept.count() >= 3 and browser.locator("#inspection tr.inspected.cut").count() == 0
    assert "The user has a cat named Milo" in browser.locator("#inspection table").inner_text()
    page_row = rows.filter(has=browser.locator("td:first-child", has_text="page")).first
    assert all(name in page_row.locator("td.parts").inner_text() for name in ("match", "neighbours", "cosine", "BM25"))
    # The text is in view beside its scores (it once sat off-screen, right of eleven columns).
    text_cell = browser.locator("#inspection tr.inspected td.text").first.bounding_box()
    assert text_cell["x"] + text_cell["width"] <= browser.viewport_size["width"] and text_cell["width"] >= 150
    parts = browser.locator("#inspection .prompt-part")
    assert "What is my cat called?" in parts.last.inner_text() and "the message" in parts.last.inner_text()

    # A budget too small for everything: the inspector shows what it cut.
    browser.click("#parameters-panel summary")
    browser.fill("input[name=context_token_budget]", "40")
    browser.click("#parameters button[type=submit]")
    browser.wait_for_selector("#parameters-status >> text=saved")
    browser.click("#inspect button[type=submit]")
    browser.wait_for_selector("#inspection tr.inspected.cut")
    assert "of 40 tokens" in browser.locator("#inspection .budget").inner_text()
    browser.locator("#inspector-panel").scroll_into_view_if_needed()
    browser.screenshot(path=str(screenshots / "inspector.png"), full_page=True)
    assert MemorySpace.objects.get(user__external_id="alice").context_token_budget == 40


def test_the_owner_sees_the_heat_chart_and_an_entrys_history_on_the_chat_page(
    browser, live_server, ann, memory, screenshots
):
    add_turns(memory, COOKING_TALK, start=days_ago(2))
    for question in ("What is my cat called?", "Which curry could I cook?") * 2:
        memory.retrieve(user_id="alice", assistant_id="helper", query=question)
    space = MemorySpace.objects.get(user__external_id="alice")
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    open_chat(browser, f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#profile dd .value")
    browser.click("#heat-panel summary")
    browser.wait_for_selector("#heat-chart .uplot canvas")
    sessions = HeatEvent.objects.filter(space=space).values("session_id").distinct().count()
    legend = browser.locator("#heat-chart .u-legend").inner_text()
    # a line a session, named by what it is about (its summary's first words), not by its number
    topics = {s.topic for s in MidTermSession.objects.filter(heat_events__space=space).distinct()}
    assert sum(topic in legend for topic in topics) == min(sessions, 5) and "promotion threshold" in legend
    assert "session " not in legend
    table_rows = browser.locator("#heat-chart table.points tr")
    assert table_rows.count() - 1 == HeatEvent.objects.filter(space=space).count()  # every point, by session
    # each point at the time its turn was said (two days ago), not when it was stored or consolidated
    cells = table_rows.evaluate_all("rows => rows.map((r) => [...r.cells].map((c) => c.textContent))")
    assert cells[0][1] == "when said"  # the table is folded away: read from the page, not as shown
    said_on = {day.strftime("%Y-%m-%d") for day in Page.objects.filter(space=space).values_list("timestamp", flat=True)}
    cells = cells[1:]
    told = [cell[1][:10] for cell in cells if cell[3] in ("created", "merged")]
    assert told and set(told) <= said_on and days_ago(2).strftime("%Y-%m-%d") in told
    # what the chart shows, in a sentence under it, read without the code
    caption = browser.locator("#heat-chart figcaption").inner_text()
    assert "reaches the dashed threshold is promoted" in caption and "counted again from zero" in caption

    browser.locator("#profile button.history-toggle").first.click()
    version = browser.locator("#profile .history li.version").first
    version.wait_for()
    assert "consolidation" in version.inner_text() and version.locator("ins").first.inner_text() == "nurse"
    browser.locator("#heat-panel").scroll_into_view_if_needed()
    browser.screenshot(path=str(screenshots / "heat-chart.png"), full_page=True)
    # the owner takes the whole memory away as a file, from the page
    with browser.expect_download() as downloaded:
        browser.click("#export-link")
    assert downloaded.value.suggested_filename == "memory-alice-helper.json"
    assert json.loads(Path(downloaded.value.path()).read_text())["pages"]


def test_another_account_cannot_open_the_lab(browser, live_server, ann, django_user_model):
    django_user_model.objects.create_user("ben", password="pw-ben-12345")
    sign_in(browser, live_server, "ben", "pw-ben-12345")
    assert browser.goto(f"{live_server.url}/lab/alice/helper/").status == 404
    assert browser.goto(f"{live_server.url}/lab/alice/helper/1/").status == 404


def test_a_locomo_sample_is_forked_replayed_and_compared_with_recall_per_side(
    browser, live_server, django_user_model, memory, fake_llm, start_worker, screenshots
):
    """The issue's "done when": import a LoCoMo sample, fork it with another heat threshold and lexical
    weight, watch both replay in a worker, and read the comparison with recall@10 for each side."""
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("ok")
    start_worker()
    account = django_user_model.objects.create_user("pat", password="pw-pat-12345")
    owned_user_create(owner=account, user_id="caroline", display_name="Caroline")
    memory.space(user_id="pat:caroline", assistant_id="helper")
    sign_in(browser, live_server, "pat", "pw-pat-12345")
    open_chat(browser, f"{live_server.url}/chat/pat:caroline/helper/")
    browser.click("#import-panel summary")
    browser.select_option("select[name=locomo_sample]", "conv-26")
    browser.click("#import button[type=submit]")
    # Says what the status showed instead, if the import's answer does not come (once on a busy machine).
    expect(browser.locator("#import-status")).to_contain_text("LoCoMo conv-26")

    browser.click("#lab-link")
    # The form is on the page before its script has run: wait for the page's load, when it has.
    browser.wait_for_url("**/lab/pat:caroline/helper/")
    browser.wait_for_load_state("load")
    # no experiment yet: said, not numbered as one
    expect(browser.locator("#experiments li.empty")).to_have_text("none yet")
    browser.fill("#fork input[name=name]", "hotter and more lexical")
    browser.fill("#fork input[name=heat_threshold]", "3")
    browser.fill("#fork input[name=lexical_weight]", "0.8")
    # what was changed from the source's values is marked in the form, and only that
    marked = browser.locator("#fork input.changed")
    assert sorted(marked.evaluate_all("inputs => inputs.map((i) => i.name)")) == ["heat_threshold", "lexical_weight"]
    browser.click("#fork button[type=submit]")
    forked = "forked “hotter and more lexical”: its progress is in the list"
    expect(browser.locator("#fork-status")).to_have_text(forked)
    browser.click("#experiments a.experiment-name >> text=hotter and more lexical")
    # The click starts a navigation: wait for the experiment page's status before watching it.
    browser.wait_for_selector("#replay-status")
    browser.evaluate(
        """() => { window.replayStates = []; const status = document.querySelector('#replay-status');
        new MutationObserver(() => window.replayStates.push(status.textContent))
          .observe(status, {childList: true, characterData: true, subtree: true}); }"""
    )
    # Both replays on a busy machine: wait for the events, generously.
    browser.wait_for_function(
        "document.querySelector('#replay-status').textContent.includes('succeeded') && "
        "document.querySelector('#source-status').textContent.includes('succeeded')",
        timeout=900_000,
    )
    final = browser.locator("#replay-status").text_content()
    assert final == "replay: 215 / 215 turns · succeeded"
    # the row is labelled "source": its import by its own name, not "source: source: LoCoMo"
    assert browser.locator("#source-status").text_content().startswith("LoCoMo conv-26: 215 / 215 turns")
    # What the page showed on the way (none if the replay finished before the watch began).
    states = browser.evaluate("window.replayStates")
    assert not states or states[-1] == final
    experiment = Experiment.objects.select_related("source", "space").get(name="hotter and more lexical")
    assert (experiment.space.heat_threshold, experiment.space.lexical_weight) == (3.0, 0.8)
    changed = browser.locator("#changed").inner_text()
    assert "heat_threshold" in changed and "lexical_weight" in changed
    browser.wait_for_selector("#heat-overlay .uplot canvas")
    # each point at the turn that made it: an import consolidates 128 turns at once, and every point of a chunk sat
    # at its end (conv-26's at turns 128 and 215 only, both sides), so the lines read flat
    overlay = browser.locator("#heat-overlay table.points tr").evaluate_all(
        "rows => rows.map((r) => [...r.cells].map((c) => c.textContent))"
    )
    assert overlay[0][1] == "turn" and len({row[1] for row in overlay[1:]}) >= 6

    browser.select_option("#probe select[name=locomo_sample]", "conv-26")
    browser.click("#probe button[type=submit]")
    browser.wait_for_selector("#recall >> text=recall@10 over 150 questions", timeout=300_000)
    probes = [Probe(p["question"], tuple(p["evidence"]), p["category"]) for p in locomo_probes("conv-26")]
    compared = compare(experiment.source, experiment.space, probes, k=10)
    expected = compared["recall"]
    recall = browser.locator("#recall").inner_text()
    assert f"source {expected['source']:.3f}" in recall and f"experiment {expected['experiment']:.3f}" in recall
    # forked while its source was importing, the replay settled where the import did: no turn left short-term
    assert compared["experiment"]["tiers"]["short_term_pages"] == compared["source"]["tiers"]["short_term_pages"] == 0
    # what the comparison isolates, in a sentence
    assert browser.locator("#compare-verdict").inner_text() == compared["verdict"]
    assert compared["verdict"].startswith("Only this differs: Promotion threshold τ 5.0 → 3.0; Lexical weight")
    # The curve of the evidence each side's context shows, a row a budget: 1,500 tokens, the default.
    at_1500 = browser.locator("#curve tr[data-budget='1500'] td").all_inner_texts()
    assert [text.split(" ")[0] for text in at_1500] == [
        f"{next(p for p in compared['curve'][side] if p['budget'] == 1500)['evidence']:.3f}"
        for side in ("source", "experiment")
    ]
    assert browser.locator("#curve tr[data-budget]").count() == 7
    # each side's own budget marked (both kept the default 1,500), and why a sample's questions are fewer
    assert (
        browser.locator("#curve tr.own-budget")
        .all_inner_texts()[0]
        .startswith("1,500 tokens (source and experiment's budget)")
    )
    assert "adversarial questions" in browser.locator("#probe-status").inner_text()
    assert browser.locator("#probes > li.probe-result").count() == 150
    first = browser.locator("#probes > li.probe-result").first
    assert (
        first.locator(".probe-side.source li").count() == 10
        and first.locator("details").get_attribute("open") is not None
    )
    assert first.locator(".evidence").count() >= 1  # the questions that differ most come first: one side found it
    sides = browser.locator("#sides").inner_text()
    assert "LLM calls" in sides and "sessions promoted" in sides
    # The top of the page: the replays, the sides, the heat overlaid, recall and the first questions.
    browser.screenshot(
        path=str(screenshots / "experiment.png"), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": 2400}
    )


def test_an_export_is_restored_from_the_chat_page_into_an_empty_space(
    browser, live_server, ann, memory, django_user_model, tmp_path
):
    exported = tmp_path / "alice.json"
    exported.write_text(json.dumps(space_export(space=MemorySpace.objects.get(user__external_id="alice"))))
    account = django_user_model.objects.create_user("pat", password="pw-pat-12345")
    owned_user_create(owner=account, user_id="copy", display_name="Alice again")
    memory.space(user_id="pat:copy", assistant_id="helper")
    sign_in(browser, live_server, "pat", "pw-pat-12345")
    open_chat(browser, f"{live_server.url}/chat/pat:copy/helper/")
    browser.click("#import-panel summary")
    browser.set_input_files("input[name=transcript]", str(exported))
    browser.click("#import button[type=submit]")
    browser.wait_for_selector("#import-status >> text=restored: 4 turns")
    browser.wait_for_selector("#messages .bubble.user >> text=I'm a nurse and I have a cat named Milo.")
    assert browser.locator("#profile dd .value").first.inner_text() == "nurse"
    again = browser.locator("#import-status")
    browser.set_input_files("input[name=transcript]", str(exported))
    browser.click("#import button[type=submit]")
    browser.wait_for_selector("#import-status >> text=empty space")
    assert "holds memory" in again.inner_text()


def test_the_owner_edits_an_entry_in_place_and_the_next_reply_uses_it(browser, live_server, ann, fake_llm):
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("Noted.")
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    row = browser.locator("#profile dd").first
    row.locator(".value >> text=nurse").wait_for()
    row.locator("button.edit-toggle").click()
    browser.keyboard.press("Escape")  # left as it was
    assert row.locator(".value").inner_text() == "nurse" and row.locator("form.edit-entry").count() == 0
    row.locator("button.edit-toggle").click()
    browser.fill("form.edit-entry input", "paediatric nurse")
    browser.keyboard.press("Enter")
    browser.locator("#profile dd .value >> text=paediatric nurse").wait_for()
    entry = LongTermEntry.objects.get(space__user__external_id="alice", key="occupation")
    last = entry.versions.order_by("pk").last()
    assert (entry.value, last.cause, last.actor) == ("paediatric nurse", "owner", "ann")

    browser.locator("#profile dd").first.locator("button.history-toggle").click()
    edit = browser.locator("#profile .history li.version").last
    edit.wait_for()
    assert "owner" in edit.inner_text() and edit.locator("ins").inner_text() == "paediatric"
    browser.fill("#query", "What do I do for a living?")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Noted.")
    used = browser.locator(".bubble.assistant details.used").last
    used.locator("summary").click()
    assert "occupation: paediatric nurse" in used.inner_text()
    asked = [r for r in fake_llm.requests if "response_format" not in r][-1]
    assert "paediatric nurse" in json.dumps(asked["messages"])  # what the model was given


def test_the_chat_page_follows_the_systems_dark_mode_and_fits_a_phone(browser, live_server, ann, screenshots):
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#profile dd .value")

    def colours(selector: str) -> tuple[str, str]:
        script = "(q) => { const s = getComputedStyle(document.querySelector(q)); return [s.backgroundColor, s.color] }"
        return tuple(browser.evaluate(script, selector))

    light = colours(".conversation")
    browser.emulate_media(color_scheme="dark")
    dark = colours(".conversation")
    assert light == ("rgb(255, 255, 255)", "rgb(29, 35, 48)") and dark == ("rgb(27, 31, 39)", "rgb(233, 236, 239)")
    assert colours("#query")[0] == "rgb(27, 31, 39)"  # the text box too, not a white box on a dark page

    browser.set_viewport_size({"width": 390, "height": 844})  # a phone: one column, nothing wider
    conversation = browser.locator(".conversation").bounding_box()
    memory = browser.locator(".memory").bounding_box()
    assert memory["y"] >= conversation["y"] + conversation["height"] and memory["width"] <= 390
    assert browser.evaluate("document.documentElement.scrollWidth") <= 390
    browser.screenshot(path=str(screenshots / "chat-dark-phone.png"), full_page=False)
