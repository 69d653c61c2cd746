"""The playground in a real headless Chromium (Playwright driving Debian's chromium) against a live server:
sign in, chat, see the memory change; stored HTML stays text.

Screenshots go to the test's temporary folder; to refresh the ones in the README, run
`SCREENSHOTS_DIR=docs/screenshots scripts/test tests/system/test_browser.py`."""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from bench import chat_quality
from bench.fake_llm_server import extraction, reply
from memory_engine.engine import recall
from memory_engine.engine.retriever import retrieve
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.language.keywords import content_tokens
from memory_engine.models import EntryVersion, LongTermEntry, MemorySpace, MemoryUser, MidTermSession, Page
from memory_engine.services.conversation import turn_add
from memory_engine.services.spaces import sessions
from tests.conftest_browser import open_chat, sign_in
from tests.memory_helpers import COOKING_TALK, add_turns, days_ago, nothing_extracted, weak_offline_llm

DATA = Path(__file__).parents[1] / "data" / "imports"

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_chat_round_trip_shows_the_reply_what_it_used_and_the_memory(
    browser, live_server, ann, fake_llm, screenshots
):
    fake_llm.responder = lambda request: (
        nothing_extracted() if "response_format" in request else reply("Your cat is called Milo.")
    )
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.click("text=Open")
    browser.wait_for_selector("#messages .bubble.user")
    assert browser.locator("#profile dd .value").first.inner_text() == "nurse"

    browser.fill("#query", "What is my cat called?")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Your cat is called Milo.")
    used = browser.locator(".bubble.assistant details.used").last
    assert "What it used" in used.locator("summary").inner_text()
    used.locator("summary").click()
    assert "The user has a cat named Milo" in used.inner_text()
    browser.wait_for_function("document.querySelector('#consolidation').textContent === 'idle'")
    browser.screenshot(path=str(screenshots / "chat.png"), full_page=True)

    stored = Page.objects.filter(space__user__external_id="alice").order_by("-seq").first()
    assert (stored.user_input, stored.agent_response) == ("What is my cat called?", "Your cat is called Milo.")

    # After a reload the reply keeps "What it used", read again when opened, with the model's tokens.
    live_summary = used.locator("summary").inner_text()
    browser.reload()
    kept = browser.locator(".bubble.assistant details.used").last
    kept.wait_for()
    assert kept.locator("summary").inner_text() == live_summary and "tokens of memory" in live_summary
    kept.locator("summary").click()
    kept.locator(".used-item").first.wait_for()
    assert "The user has a cat named Milo" in kept.inner_text()


def test_what_it_used_links_to_the_turns_it_came_from(browser, live_server, ann, alice_space, memory, fake_llm):
    MemorySpace.objects.filter(pk=alice_space.pk).update(stm_capacity=40)  # no consolidation of the small talk
    # The small talk is the conversation in progress (two minutes apart, the last a few minutes ago).
    small_talk = [(f"Small talk number {i}.", "Mm-hm.") for i in range(32)]
    add_turns(memory, small_talk, start=timezone.now() - timedelta(minutes=70))
    fake_llm.responder = lambda request: (
        nothing_extracted() if "response_format" in request else reply("Your cat is called Milo.")
    )
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#messages .bubble.user")
    assert browser.locator("#messages .bubble", has_text="I'm a nurse").count() == 0  # older than the page shows

    browser.fill("#query", "What is my cat called?")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Your cat is called Milo.")
    used = browser.locator(".bubble.assistant details.used").last
    used.locator("summary").click()

    # The fact came from the first turn, which is not in the conversation shown: it is quoted in place.
    fact = used.locator(".used-item.kind-user_knowledge", has_text="cat named Milo")
    source = LongTermEntry.objects.get(space=alice_space, kind="user_knowledge", status="active").source_pages.get()
    link = fact.locator("a.source-link")
    assert link.inner_text() == f"turn #{source.seq}"
    link.click()
    quote = fact.locator(".source-quote:not(.loading)")
    quote.wait_for()  # the turn is fetched from the API first
    assert f"turn #{source.seq}" in quote.inner_text() and f"User: {source.user_input}" in quote.inner_text()

    # A recent turn it used is in the conversation: the link scrolls to it and highlights both bubbles.
    recent = used.locator(".used-item.kind-short_term a.source-link").last
    page_id = recent.get_attribute("data-page")
    browser.locator("#messages").evaluate("list => { list.scrollTop = list.scrollHeight; }")
    recent.click()
    turn = browser.locator(f'#messages .bubble[data-page="{page_id}"]')
    assert turn.count() == 2
    assert "flash" in turn.first.get_attribute("class") and "flash" in turn.last.get_attribute("class")
    assert turn.first.locator(".text").inner_text() == Page.objects.get(pk=page_id).user_input
    browser.wait_for_function(
        """id => { const list = document.querySelector('#messages').getBoundingClientRect();
        const turn = document.getElementById('turn-' + id).getBoundingClientRect();
        return turn.top >= list.top && turn.bottom <= list.bottom; }""",
        arg=page_id,
    )


def test_the_owner_forgets_an_entry_and_deletes_the_space_from_the_page(browser, live_server, ann, memory):
    add_turns(memory, [("I fly planes for a living.", "Exciting!")], user="bob")
    bobs = Page.objects.filter(space__user__external_id="bob").count()
    fact = LongTermEntry.objects.get(space__user__external_id="alice", kind="user_knowledge", status="active")
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    item = browser.locator("#knowledge li", has_text="cat named Milo")
    item.wait_for()

    item.locator("button.forget").click()  # the confirmation is dismissed: nothing changes
    assert browser.dialogs[-1].startswith("Forget “The user has a cat named Milo”?")
    fact.refresh_from_db()
    assert fact.status == "active" and item.count() == 1

    browser.accept_dialogs = True
    item.locator("button.forget").click()
    item.wait_for(state="detached")
    fact.refresh_from_db()
    assert fact.status == "deleted"
    assert fact.versions.order_by("pk").last().actor == "ann"
    assert fact.versions.order_by("pk").last().cause == EntryVersion.Cause.OWNER  # forgotten on the page
    space = MemorySpace.objects.get(user__external_id="alice")
    assert fact.pk not in [i.id for i in retrieve(space, "What is my cat called?").user_knowledge]

    browser.click("#danger-panel summary")
    browser.click("#delete-space")
    browser.wait_for_url(f"{live_server.url}/")
    assert "Delete all of Alice with helper's memory?" in browser.dialogs[-1]
    assert "No memory yet" in browser.locator("main").inner_text()
    assert not MemorySpace.objects.filter(user__external_id="alice").exists()
    assert not Page.objects.filter(space__user__external_id="alice").exists()
    assert Page.objects.filter(space__user__external_id="bob").count() == bobs
    # the owner erases a memory user with every space of theirs: what someone asking to be forgotten is owed
    memory.create_user("carla")
    MemoryUser.objects.filter(external_id="carla").update(owner=ann, display_name="Carla")
    memory.create_assistant("coach")
    for assistant in ("helper", "coach"):
        add_turns(memory, [("I live in Porto.", "Noted.")], user="carla", assistant=assistant)
    open_chat(browser, f"{live_server.url}/chat/carla/helper/")
    browser.click("#danger-panel summary")
    browser.click("#erase-user")
    browser.wait_for_url(f"{live_server.url}/")
    assert "Erase Carla and all their memory?" in browser.dialogs[-1]
    assert not MemoryUser.objects.filter(external_id="carla").exists()
    assert not Page.objects.filter(space__user__external_id="carla").exists()
    assert Page.objects.filter(space__user__external_id="bob").count() == bobs  # another account's, untouched


def test_the_owner_erases_one_sentence_of_a_turn_after_seeing_what_it_would_take(
    browser, live_server, ann, screenshots
):
    """Erase was reachable over REST only, took any fragment ("e" erased every "e") and ran in the request.
    On the page: a turn's "Erase…" lists its sentences, shows what erasing one would take (a dry run), and
    erases it once confirmed; the page says when it is done."""
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    open_chat(browser, f"{live_server.url}/chat/alice/helper/")
    browser.locator(".bubble.user", has_text="nursing scrubs").locator("button.erase-link").click()
    sentence = "Milo likes to sleep on my nursing scrubs."
    browser.locator("#erase-choices label", has_text=f"You: “{sentence}”").click()
    browser.locator("#erase-confirm:enabled").wait_for()  # disabled while the chosen sentence's dry run runs
    assert browser.locator("#erase-preview .erase-words").inner_text().endswith(f"wherever they are: “{sentence}”")
    assert browser.locator("#erase-preview li").first.inner_text().startswith("1 turn changes: #")
    assert Page.objects.filter(user_input=sentence).exists()  # nothing erased yet
    browser.screenshot(path=str(screenshots / "erase.png"))
    browser.click("#erase-confirm")
    browser.locator("#curation-status", has_text="Erased for good: 1 turn changed.").wait_for()
    assert not Page.objects.filter(user_input__icontains="scrubs").exists()
    assert "scrubs" not in browser.locator("#messages").inner_text()
    assert "Cats love warm clothes" in browser.locator("#messages").inner_text()  # the reply stays


def test_stored_html_is_shown_as_text_and_never_runs(browser, live_server, ann):
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    bubble = browser.locator(".bubble.user", has_text="is my")
    bubble.wait_for()
    assert bubble.locator(".text").inner_text() == "<img src=x onerror=alert(1)> is my <b>bold</b> claim"
    assert browser.locator(".bubble img, .bubble b").count() == 0
    assert browser.dialogs == []


def test_another_account_cannot_open_the_chat_page(browser, live_server, ann, django_user_model):
    django_user_model.objects.create_user("ben", password="pw-ben-12345")
    sign_in(browser, live_server, "ben", "pw-ben-12345")
    response = browser.goto(f"{live_server.url}/chat/alice/helper/")
    assert response.status == 404
    api = browser.request.get(f"{live_server.url}/api/v1/users/alice/")
    assert api.status == 404


def test_the_heat_timeline_is_drawn_from_real_data_for_staff(
    browser, live_server, ann, memory, django_user_model, screenshots
):
    # Two topics; questions about them heat their sessions (visits) until they are promoted.
    add_turns(memory, COOKING_TALK, start=days_ago(2))
    questions = ["What is my cat called?", "Which curry could I cook?", "Where does Milo sleep?", "Rice or naan?"]
    for i, question in enumerate(questions * 2):
        memory.retrieve(user_id="alice", assistant_id="helper", query=question)
        add_turns(memory, [(question, "Let me think.")], start=days_ago(1 - i / 100))
    django_user_model.objects.create_superuser("sam", password="pw-sam-12345")
    space_id = MemoryUser.objects.get(external_id="alice").spaces.get().pk
    browser.goto(f"{live_server.url}/admin/login/?next=/admin/memory_engine/memoryspace/{space_id}/heat/")
    browser.fill("#id_username", "sam")
    browser.fill("#id_password", "pw-sam-12345")
    browser.click("input[type=submit]")
    chart = browser.locator("#heat-chart .heat-chart")  # the chat page's chart (charts.js, uPlot)
    chart.locator("canvas").wait_for()
    legend = chart.locator(".u-legend").inner_text()
    # each line named by its session's topic (its summary's first words); promotions drawn as dots, said so
    space = MemorySpace.objects.get(pk=space_id)
    topics = {s.topic for s in MidTermSession.objects.filter(heat_events__space=space).distinct()}
    assert sum(topic in legend for topic in topics) >= 2 and "session " not in legend
    assert "\u25cf promoted" in legend and "promotion threshold" in legend
    rows = chart.locator("table.points tr").all_text_contents()
    assert sum("promoted" in row for row in rows) >= 2  # the promotions, in the points' table too
    browser.screenshot(path=str(screenshots / "heat-timeline.png"), full_page=True)


def test_changing_a_parameter_in_the_page_changes_the_memory(browser, live_server, ann, fake_llm):
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("Sure.")
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    open_chat(browser, f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_function("document.querySelector('input[name=stm_capacity]').value === '2'")
    browser.click("#parameters-panel summary")
    browser.fill("input[name=stm_capacity]", "5")
    browser.click("#parameters button[type=submit]")
    browser.wait_for_selector("#parameters-status >> text=saved")
    assert MemoryUser.objects.get(external_id="alice").spaces.get().stm_capacity == 5
    short_term = browser.locator("#short-term li")
    before = short_term.count()
    browser.fill("#query", "One more thing.")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=Sure.")
    browser.wait_for_function(f"document.querySelectorAll('#short-term li').length === {before + 1}")
    browser.fill("input[name=heat_alpha]", "10000000")  # the page allows it, the API refuses it
    browser.click("#parameters button[type=submit]")
    browser.wait_for_selector("#parameters-status >> text=out of range")
    assert MemoryUser.objects.get(external_id="alice").spaces.get().heat_alpha == 1.0


def test_parameters_being_edited_are_not_redrawn_when_the_memory_changes(browser, live_server, ann, alice_space):
    """A memory panel redrawn by a feed event between two edits must not put the stored value back in an
    input being edited: Save would store the old value."""
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    open_chat(browser, f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_function("document.querySelector('input[name=stm_capacity]').value === '2'")
    browser.click("#parameters-panel summary")
    browser.fill("input[name=stm_capacity]", "1")
    browser.click("input[name=heat_threshold]")  # on to the next field, as a person tabs on
    turn_add(space=alice_space, user_input="I repaint the fence on Sundays.", agent_response="Nice.", consolidate=False)
    browser.wait_for_selector("#short-term li >> text=I repaint the fence on Sundays.")  # the panel was redrawn
    assert browser.input_value("input[name=stm_capacity]") == "1"
    browser.fill("input[name=heat_threshold]", "0.5")
    browser.click("#parameters button[type=submit]")
    browser.wait_for_selector("#parameters-status >> text=saved")
    alice_space.refresh_from_db()
    assert (alice_space.stm_capacity, alice_space.heat_threshold) == (1, 0.5)


def test_an_admin_edit_shows_in_the_entrys_diff_history(browser, live_server, ann, django_user_model, screenshots):
    django_user_model.objects.create_superuser("sam", password="pw-sam-12345")
    entry = LongTermEntry.objects.get(space__user__external_id="alice", key="occupation")
    browser.goto(f"{live_server.url}/admin/login/?next=/admin/memory_engine/longtermentry/{entry.pk}/change/")
    browser.fill("#id_username", "sam")
    browser.fill("#id_password", "pw-sam-12345")
    browser.click("input[type=submit]")
    browser.fill("#id_value", "paediatric nurse")
    browser.click("input[name=_continue]")
    browser.click("text=every version, with diffs and revert")
    rows = browser.locator("#versions tr.version")
    rows.last.wait_for()
    assert rows.count() == 2
    last = rows.last
    assert last.locator("ins").inner_text() == "paediatric" and "admin sam" in last.inner_text()
    assert "edited" in last.inner_text() and "consolidation" not in last.inner_text()
    browser.screenshot(path=str(screenshots / "profile-history.png"), full_page=True)
    entry.refresh_from_db()
    assert entry.value == "paediatric nurse"


def test_an_import_fills_the_tiers_in_a_worker_with_progress(
    browser, live_server, ann, fake_llm, start_worker, screenshots, tmp_path
):
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("ok")
    start_worker()
    transcript = tmp_path / "transcript.json"
    turns = [{"user_input": f"We talked about gardening, part {i}.", "agent_response": "Lovely."} for i in range(10)]
    transcript.write_text(json.dumps(turns))
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    open_chat(browser, f"{live_server.url}/chat/alice/helper/")
    browser.click("#import-panel summary")
    browser.evaluate(
        """() => { window.importStates = []; const status = document.querySelector('#import-status');
        new MutationObserver(() => window.importStates.push(status.textContent))
          .observe(status, {childList: true, characterData: true, subtree: true}); }"""
    )
    browser.set_input_files("input[name=transcript]", str(transcript))
    browser.click("#import button[type=submit]")
    browser.wait_for_selector("#import-file >> text=transcript.json: a transcript, 1 conversations, 10 turns")
    browser.click("#import-choice button[type=submit]")
    browser.wait_for_function(
        "document.querySelector('#import-status').textContent.includes('succeeded')", timeout=600_000
    )
    states = [state for state in browser.evaluate("window.importStates") if "turns ·" in state]
    # The request returned before the work; the job then says what it waits for.
    assert states[0].startswith("transcript.json (a transcript): 0 / 10 turns · queued")
    assert states[-1] == "transcript.json (a transcript): 10 / 10 turns · succeeded"
    browser.wait_for_function("Number(document.querySelector('#counts dd:nth-of-type(2)').textContent) > 3")
    browser.wait_for_selector("#messages .bubble.user >> text=We talked about gardening, part 9.")
    browser.locator("#import-progress").scroll_into_view_if_needed()
    browser.screenshot(path=str(screenshots / "import.png"), full_page=True)
    assert Page.objects.filter(space__user__external_id="alice", user_input__startswith="We talked").count() == 10


def test_an_imported_history_ends_in_mid_term_memory_and_the_page_shows_what_it_taught(
    browser, live_server, ann, fake_llm, start_worker, screenshots, tmp_path
):
    """Imported, a short history is not left waiting in short-term memory: it is in mid-term sessions when
    the import ends, and the page says what it taught and shows the profile it learnt."""
    said = "I work as a paediatric nurse at the harbour clinic."
    fake_llm.responder = lambda request: (
        extraction(profile=[("occupation", "paediatric nurse", 1)]) if "response_format" in request else reply("ok")
    )
    start_worker()
    transcript = tmp_path / "history.json"
    turns = [{"user_input": said, "agent_response": "That is demanding work."}]
    turns += [
        {"user_input": f"The harbour clinic was busy again, day {i}.", "agent_response": "Rest well."} for i in range(4)
    ]
    transcript.write_text(json.dumps(turns))
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    open_chat(browser, f"{live_server.url}/chat/alice/helper/")
    browser.click("#import-panel summary")
    browser.set_input_files("input[name=transcript]", str(transcript))
    browser.click("#import button[type=submit]")
    browser.wait_for_selector("#import-file >> text=history.json: a transcript, 1 conversations, 5 turns")
    browser.click("#import-choice button[type=submit]")
    browser.wait_for_function(
        "document.querySelector('#import-status').textContent.includes('succeeded')", timeout=600_000
    )
    taught = browser.locator("#import-taught")
    taught.wait_for(state="visible")
    assert "What it taught: its turns are in 1 session of mid-term memory" in taught.inner_text()
    browser.wait_for_selector("#profile >> text=paediatric nurse")
    assert browser.locator("#import-cancel").is_hidden()
    history = Page.objects.filter(space__user__external_id="alice", user_input=said)
    assert history.get().tier == "mid" and not history.filter(tier="short").exists()
    browser.locator("#import-progress").scroll_into_view_if_needed()
    browser.screenshot(path=str(screenshots / "import-taught.png"), full_page=True)
    # What it taught follows the memory: the entry it taught deleted, the page counts it no longer.
    from memory_engine.models import ImportJob, LongTermEntry
    from memory_engine.services.curation import entry_delete
    from memory_engine.services.imports import import_taught

    job = ImportJob.objects.get(space__user__external_id="alice")
    before, entries = taught.inner_text(), import_taught(job)["entries"]
    assert f"and {entries} profile and knowledge entr" in before
    learnt = LongTermEntry.objects.get(space__user__external_id="alice", kind="profile", status="active")
    entry_delete(entry=learnt, actor="ann")
    browser.wait_for_function(
        "(before) => document.querySelector('#import-taught').textContent !== before", arg=before, timeout=120_000
    )
    entries_now = import_taught(job)["entries"]
    assert entries_now < entries and f"and {entries_now} profile and knowledge entr" in taught.inner_text()


def test_a_chatgpt_export_is_uploaded_two_conversations_chosen_and_a_told_fact_found_in_the_memory(
    browser, live_server, ann, fake_llm, start_worker, screenshots, tmp_path
):
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("ok")
    start_worker()
    export = json.loads((DATA / "chatgpt-conversations.json").read_text())
    work = json.loads(json.dumps(export[1])) | {"id": "c-work", "conversation_id": "c-work", "title": "Work"}
    work["mapping"]["s1"]["message"]["content"]["parts"] = ["I work night shifts at the harbour"]
    export.append(work)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export))
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#messages .bubble.user")
    # Dropped on the import panel, closed, as a file from the desktop.
    dropped = browser.evaluate_handle(
        """(text) => { const files = new DataTransfer();
        files.items.add(new File([text], "conversations.json", {type: "application/json"})); return files; }""",
        path.read_text(),
    )
    browser.dispatch_event("#import-panel", "drop", {"dataTransfer": dropped})
    browser.wait_for_selector("#import-file >> text=a ChatGPT export, 4 conversations, 7 turns")
    titles = browser.locator("#import-conversations li").all_inner_texts()
    assert [t.split()[0] for t in titles] == ["Pets", "Dinner", "Empty", "Work"] and "3 turns" in titles[0]
    browser.uncheck("#import-conversations input[value=c-work]")
    browser.locator("#import-choice").scroll_into_view_if_needed()
    browser.screenshot(path=str(screenshots / "import-choice.png"), full_page=True)
    browser.click("#import-choice button[type=submit]")
    browser.wait_for_function(
        "document.querySelector('#import-status').textContent.includes('5 / 5 turns · succeeded')", timeout=600_000
    )
    # The conversation is read again with the history in it; the import ended consolidated, so the told
    # fact is in a mid-term session, and the page says what the import taught.
    browser.wait_for_selector("#messages >> text=I am allergic to mushrooms", timeout=120_000)
    browser.locator("#import-taught").wait_for(state="visible")
    stored = Page.objects.filter(space__user__external_id="alice", meta__imported__format="chatgpt")
    assert stored.count() == 5 and not stored.filter(user_input__contains="harbour").exists()
    assert stored.get(user_input__contains="allergic to mushrooms").tier == "mid"


def test_a_file_of_more_conversations_than_are_listed_at_once_shows_the_rest_on_asking(
    browser, live_server, ann, tmp_path
):
    """The first 500 conversations come with the file's answer (a listing of 50,000 was once sent whole on
    every read); "show more" reads the next page, and those shown can be chosen like the first."""
    many = [
        {"id": f"c{n:03d}", "title": f"Chat {n}", "messages": [{"role": "user", "content": f"hi {n}"}]}
        for n in range(520)
    ]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many))
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#messages .bubble.user")
    # The memory panel is drawn after the page: a click before it lands where the summary was.
    browser.wait_for_selector("#profile dd .value")
    browser.click("#import-panel summary")
    browser.wait_for_selector("#import button[type=submit]", state="visible")
    browser.set_input_files("input[name=transcript]", str(path))
    browser.click("#import button[type=submit]")
    browser.wait_for_selector("#import-file >> text=chat messages, 520 conversations, 520 turns")
    assert browser.locator("#import-conversations li").count() == 500
    browser.click("#import-more >> text=show more (500 of 520)")
    browser.wait_for_selector("#import-conversations input[value=c519]")
    assert browser.locator("#import-conversations li").count() == 520 and browser.locator("#import-more").is_hidden()
    browser.uncheck("#import-conversations input[value=c510]")
    assert browser.locator("#import-conversations input:checked").count() == 519


def test_a_reply_that_went_wrong_shows_as_withheld_and_is_not_kept(browser, live_server, ann, fake_llm):
    """A reply that degenerates twice is shown as an honest short answer, marked, and the
    looping text never reaches the page or the memory; after a reload the turn still says so."""
    loops = iter([reply("Milo Milo Milo Milo " * 50), reply("I am a cat, I am a cat, I am a cat, I am a cat")])
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else next(loops)
    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.wait_for_selector("#messages .bubble.user")

    browser.fill("#query", "What is my cat called?")
    browser.click("#send")
    withheld = browser.locator(".bubble.assistant.withheld:not(.pending)").last
    withheld.wait_for()
    live = (withheld.locator(".text").inner_text(), withheld.locator(".withheld-note").inner_text())
    assert "couldn't put together a proper answer" in live[0] and "was not kept in memory" in live[1]
    assert "Milo Milo" not in browser.locator("#messages").inner_text()
    stored = Page.objects.filter(space__user__external_id="alice").order_by("-seq").first()
    assert (stored.user_input, stored.agent_response, stored.reply_withheld) == ("What is my cat called?", "", True)

    browser.reload()  # the turn reads as it did live
    again = browser.locator(".bubble.assistant.withheld").last
    again.locator(".withheld-note").wait_for()
    assert (again.locator(".text").inner_text(), again.locator(".withheld-note").inner_text()) == live
    assert "Milo Milo" not in browser.locator("#messages").inner_text()


@pytest.mark.offline_llm
def test_with_no_key_the_page_says_so_recalls_a_fact_told_in_passing_and_invents_nothing(
    browser, live_server, memory, django_user_model, settings, screenshots
):
    """With no key, as a new user meets it: the bundled SmolLM2 (not a fake) behind the page. The
    page says what the offline mode is; a fact told in passing comes back, quoted, to a question in other
    words after it has left short-term memory; nothing in the memory panel is in words the person never
    said; and no reply recites the prompt or takes the person's name."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "LLM_BASE_URL": ""}
    account = django_user_model.objects.create_user("maria", password="pw-maria-12345")
    memory.create_user("maria", display_name="Maria Lindqvist")
    MemoryUser.objects.filter(external_id="maria").update(owner=account)
    space = memory.space(user_id="maria", assistant_id="helper")
    MemorySpace.objects.filter(pk=space.pk).update(stm_capacity=2, heat_threshold=3.0)
    sign_in(browser, live_server, "maria", "pw-maria-12345")
    browser.goto(f"{live_server.url}/chat/maria/helper/")
    notice = browser.locator("#offline-notice")
    assert notice.is_visible() and "Offline mode." in notice.inner_text()

    told = (
        "Hi! I'm Maria Lindqvist.",
        "long day at the clinic, and Pepper (my cat) knocked my coffee over lol",
        "I live in Porto, in Portugal.",
        "It's been raining all week here.",
        "Any tips for sleeping better?",
    )
    asked = ("What's my cat called again?", "Which city do I live in?")
    replies = []
    for number, said in enumerate((*told, *asked), start=1):
        browser.fill("#query", said)
        browser.click("#send")
        # A reply with the real model on a busy machine takes seconds; wait for the bubble, generously.
        browser.wait_for_function(
            f"document.querySelectorAll('.bubble.assistant:not(.pending)').length === {number}", timeout=180_000
        )
        replies.append(browser.locator(".bubble.assistant").nth(number - 1).locator(".text").inner_text())

    cat, city = browser.locator(".bubble.assistant").nth(len(told)), browser.locator(".bubble.assistant").last
    assert "Pepper" in replies[-2] and "quoted" in cat.get_attribute("class"), replies
    assert "Porto" in replies[-1] and "Quoted from what you said" in city.inner_text(), replies
    for text in replies:
        assert chat_quality.prompt_leak(text) is None, text
        assert not chat_quality.names_user(text, "Maria Lindqvist", []), text
    # What was told gets the memory's plain voice (no model), which says so on the page (a phone has no
    # hover), and it made nothing up: no condolences, no name no one said, no "you told me".
    for number, text in enumerate(replies[: len(told)]):
        bubble = browser.locator(".bubble.assistant").nth(number)
        assert "plain" in bubble.get_attribute("class") and "Said by the memory" in bubble.inner_text(), text
        assert not chat_quality.offers_condolences(text, told), text
        assert chat_quality.claims_unsaid(text, told[: number + 1], ["Helper"]) is None, text

    # The memory the panel shows: every profile value, fact and session summary in the person's words.
    browser.wait_for_function("document.querySelector('#consolidation').textContent === 'idle'", timeout=180_000)
    browser.wait_for_selector("#profile dd .value")
    shown = [
        *browser.locator("#profile dd .value").all_inner_texts(),
        *browser.locator("#knowledge li .value").all_inner_texts(),
        *browser.locator("#sessions li .summary").all_inner_texts(),
    ]
    assert shown, "the memory panel shows nothing"
    said = set(content_tokens(" ".join((*told, *asked))))
    for text in shown:
        assert set(content_tokens(text)) <= said, text
    profile = LongTermEntry.objects.filter(space=space, kind="profile", status="active")
    assert {entry.key: entry.value for entry in profile}.get("location") == "Porto"
    # A session's counts say since when: its promotion, or its start (it said "since promotion" of all).
    heads = browser.locator("#sessions li .session-head").all_inner_texts()
    shown_sessions = list(sessions(space, status="active")[: len(heads)])
    assert heads and len(shown_sessions) == len(heads)
    for head, session in zip(heads, shown_sessions, strict=True):
        assert ("since its promotion" in head) == (session.promoted_at is not None), head
        assert ("not promoted yet" in head) == (session.promoted_at is None), head
    browser.screenshot(path=str(screenshots / "chat-offline.png"), full_page=True)


def _reply_to(browser, question: str):
    """Send `question` on the chat page and wait for its reply; the reply's bubble, whatever comes after it."""
    shown = browser.locator(".bubble.assistant").count()
    browser.fill("#query", question)
    browser.click("#send")
    browser.wait_for_function("n => document.querySelectorAll('.bubble.assistant:not(.pending)').length > n", arg=shown)
    return browser.locator(".bubble.assistant").nth(shown)


def _blood_type_told_with_no_key(django_user_model, alice_space, settings) -> None:
    """ann's alice, told her blood type and consolidated with no key, the turns in mid-term memory; the page
    answers with the bundled model's class."""
    account = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    MemoryUser.objects.filter(external_id="alice").update(owner=account, display_name="Alice")
    alice_space.stm_capacity, alice_space.heat_threshold = 1, 1.0
    alice_space.save()
    weak = MemoryOS(llm=weak_offline_llm(settings))
    told = [("My blood type is AB negative, in case that ever matters.", "Noted."), ("Lovely weather.", "It is!")]
    add_turns(weak, told)
    weak.force_mid_term_analysis(user_id="alice", assistant_id="helper")


def test_a_fact_forgotten_on_the_page_is_neither_quoted_nor_used_until_it_is_reverted(
    browser, live_server, django_user_model, memory, alice_space, settings
):
    _blood_type_told_with_no_key(django_user_model, alice_space, settings)
    fact = LongTermEntry.objects.get(kind="user_knowledge", value__icontains="AB negative")

    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    item = browser.locator("#knowledge li", has_text="AB negative")
    item.wait_for()
    browser.accept_dialogs = True
    item.locator("button.forget").click()
    item.wait_for(state="detached")
    browser.wait_for_selector("#curation-status >> text=1 statement in turn #1")

    def ask(question: str) -> str:
        return _reply_to(browser, question).locator(".text").inner_text()

    assert ask("What's my blood type?") == recall.ASKED_TO_FORGET  # nothing of it, nor a guess
    browser.click("#curation-status button.undo")  # undone on the page: the entry and its words are back
    browser.wait_for_selector("#curation-status >> text=is back")
    browser.locator("#knowledge li", has_text="AB negative").wait_for()
    fact.refresh_from_db()
    assert fact.status == "active" and fact.versions.order_by("-at", "-pk").first().actor == "ann"
    assert "AB negative" in ask("What's my blood type?")

    browser.locator("#knowledge li", has_text="AB negative").locator("button.forget").click()
    browser.wait_for_selector("#curation-status >> text=Forgot")
    browser.reload()  # the turn is shown as it was said, the forgotten statement struck through
    struck = browser.locator(".bubble.user s.held-out.forgotten").first
    struck.wait_for()
    assert struck.inner_text() == "My blood type is AB negative, in case that ever matters."
    # and it reads on the blue of the person's bubble (it was the page's grey there: 1.3 to 1 against the blue)
    colours = struck.evaluate(
        "s => [getComputedStyle(s).color, getComputedStyle(s.closest('.bubble')).backgroundColor]"
    )
    assert _contrast(*colours) >= 4.5, colours
    # A quoted reply still links to the turn it quotes after the reload, as when it was written.
    quoting = browser.locator(".bubble.assistant.quoted").last
    assert quoting.locator(".quote-note a.source-link").all_inner_texts() == ["turn #1"]


def test_what_is_kept_is_listed_and_a_fact_forgotten_by_talking_is_not_known_until_undo_gives_it_back(
    browser, live_server, django_user_model, memory, alice_space, settings
):
    _blood_type_told_with_no_key(django_user_model, alice_space, settings)

    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")
    browser.locator("#knowledge li", has_text="AB negative").wait_for()

    listed = _reply_to(browser, "what do you know about me?").locator(".text").inner_text()
    assert listed.startswith("Here is what I keep about you") and "AB negative" in listed

    done = _reply_to(browser, "please forget my blood type")
    assert done.locator(".text").inner_text().startswith("Done: I've forgotten what I kept about your blood type")
    assert "Done by the memory" in done.inner_text()
    browser.locator("#knowledge li", has_text="AB negative").wait_for(state="detached")
    assert _reply_to(browser, "What's my blood type?").locator(".text").inner_text() == recall.ASKED_TO_FORGET

    done.locator("button.undo").click()  # Undo under the reply: the entry and its words are back
    done.locator("text=Undone").wait_for()
    browser.locator("#knowledge li", has_text="AB negative").wait_for()
    assert "AB negative" in _reply_to(browser, "What's my blood type?").locator(".text").inner_text()


def test_a_correction_by_talking_is_answered_as_the_latest_value(
    browser, live_server, django_user_model, memory, alice_space, settings
):
    _blood_type_told_with_no_key(django_user_model, alice_space, settings)
    weak = MemoryOS(llm=weak_offline_llm(settings))
    add_turns(weak, [("I booked Hotel Sakuraya in Kyoto for 3 nights from 2 November.", "Lovely.")])

    sign_in(browser, live_server, "ann", "pw-ann-12345")
    browser.goto(f"{live_server.url}/chat/alice/helper/")

    def ask(question: str) -> str:
        return _reply_to(browser, question).locator(".text").inner_text()

    ask("Sorry, I made a mistake: I booked Hotel Hanabusa, not Hotel Sakuraya.")
    answered = ask("Which hotel did I book in Kyoto?")
    assert answered.startswith("The latest you told me") and answered.index("Hanabusa") < answered.index("from 2")


def _contrast(foreground: str, background: str) -> float:
    """The WCAG contrast ratio of two CSS rgb() colours."""

    def luminance(colour: str) -> float:
        channels = [int(part) / 255 for part in re.findall(r"\d+", colour)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
