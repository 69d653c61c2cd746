"""What you curate is what it says (engine/statement_marks.py): an entry forgotten or edited changes every reader,
not only the entry: the quoted reply, a capable model's prompt, retrieval, the turns shown, the lab's fork.
Each scenario runs as its user would: the memory told in turns and consolidated with no key (the bundled
model's class: its extraction keeps the person's own sentences), then curated through a door."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse

from bench.fake_llm_server import nothing_extracted, reply
from memory_engine import services
from memory_engine.engine import recall, statement_marks
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.models import LongTermEntry, Page, StatementMark
from memory_engine.services.export import space_export
from memory_engine.services.lab import replay_turns
from memory_engine.services.restore import space_restore
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import add_turns, days_ago, told_with_no_key

TOLD = [
    ("Hi! I'm Maria Lindqvist.", "Hello Maria!"),
    ("My blood type is AB negative, in case that ever matters.", "Noted."),
    ("I'm a radiology nurse and I have a cat named Milo.", "Lovely."),
    ("The weather has been lovely.", "Glad to hear it."),
]
BLOOD = "What's my blood type?"
WORK = "What do I do for work?"


@pytest.fixture
def told(memory, alice_space, settings):
    """alice's memory told TOLD three days ago and consolidated with no key: every turn in mid-term memory
    and its entries drawn from her own words. Returns the MemoryOS that answers with the bundled model's
    class (a quoted answer never loads it)."""
    return told_with_no_key(alice_space, settings, TOLD)


def _ask(memory, query):
    return memory.get_response(user_id="alice", assistant_id="helper", query=query).text


def _retrieved(memory, query) -> str:
    found = memory.retrieve(user_id="alice", assistant_id="helper", query=query, count_hits=False)
    return "\n".join(item.text for item in [*found.items(), *found.cut, *found.filler])


def _entry(key_or_words: str) -> LongTermEntry:
    entries = LongTermEntry.objects.filter(status="active")
    return entries.filter(key=key_or_words).first() or entries.get(value__icontains=key_or_words)


LEEDS_TO_BRISTOL = "Good news: we moved to Bristol last weekend!"


def _told_then_changed(memory, earlier: str, later: str) -> None:
    """`earlier` told two days ago, `later` (which changes it) yesterday, then something else; consolidated
    with no key."""
    add_turns(memory, [(earlier, "Noted.")], start=days_ago(2))
    add_turns(memory, [(later, "Got it.")], start=days_ago(1))
    add_turns(memory, [("The weather has been grey.", "Oh well.")], start=days_ago(1) + timedelta(hours=1))
    memory.force_mid_term_analysis(user_id="alice", assistant_id="helper")


def _forget_every_entry_about(memory, words: str) -> None:
    for entry in LongTermEntry.objects.filter(status="active", value__icontains=words):
        memory.delete_entry(user_id="alice", assistant_id="helper", entry_id=entry.pk)


def test_a_forgotten_fact_is_neither_quoted_nor_retrieved_and_the_turn_keeps_its_words_marked(told):
    assert "AB negative" in _ask(told, BLOOD)  # quoted, and the quote is a turn of its own
    _forget_every_entry_about(told, "AB negative")

    assert _ask(told, BLOOD) == recall.ASKED_TO_FORGET  # nothing of it, nor a guess
    assert "AB negative" not in _retrieved(told, "blood type AB negative")
    page = Page.objects.get(seq=2)
    assert page.said["user_input"] == TOLD[1][0] and "AB negative" not in page.user_input
    # The reply that had quoted it is marked too: its words are nowhere the memory reads.
    quoting = Page.objects.get(user_input=BLOOD, said__isnull=False)
    assert "AB negative" in quoting.said["agent_response"] and "AB negative" not in quoting.agent_response
    assert {m.kind for m in StatementMark.objects.all()} == {"forgotten"}


def test_reverting_the_forgotten_entry_brings_its_words_and_the_answer_back(told):
    entry = _entry("AB negative")
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=entry.pk)
    assert "AB negative" not in _ask(told, BLOOD)
    created = entry.versions.order_by("at", "pk").first()
    told.revert_entry(user_id="alice", assistant_id="helper", entry_id=entry.pk, version_id=created.pk)

    assert "AB negative" in _ask(told, BLOOD)
    assert Page.objects.get(seq=2).user_input == TOLD[1][0] and Page.objects.get(seq=2).said is None
    assert not StatementMark.objects.exists()


def test_forgetting_one_clause_keeps_the_rest_of_what_was_said(told):
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=_entry("occupation").pk)

    assert "nurse" not in Page.objects.get(seq=3).user_input and "Milo" in Page.objects.get(seq=3).user_input
    assert "Milo" in _ask(told, "What's my cat called?")
    assert "nurse" not in _ask(told, WORK)
    # The fact drawn from the whole sentence keeps its other clause, changed with the entry forgotten.
    fact = LongTermEntry.objects.get(kind="user_knowledge", value__icontains="Milo")
    assert "nurse" not in fact.value and fact.versions.order_by("-at", "-pk").first().with_entry_id is not None


def test_an_edit_is_what_the_reply_gives_and_the_first_words_only_as_corrected(told):
    entry = _entry("occupation")
    alice = client_for("alice")
    edited = alice.patch(SPACE.format(user="alice") + f"profile/{entry.pk}/", {"value": "midwife"}, format="json")
    assert edited.status_code == 200, edited.data

    text = _ask(told, WORK)
    assert "midwife" in text and "(corrected earlier today)" in text
    assert "radiology nurse" not in text  # the old words are gone from answers (kept in the entry's history)
    assert "radiology nurse" not in _retrieved(told, "work job nurse midwife")
    assert "I'm a midwife and I have a cat named Milo." in Page.objects.get(seq=3).user_input
    fact = LongTermEntry.objects.get(kind="user_knowledge", value__icontains="Milo")
    assert fact.value == "I'm a midwife and I have a cat named Milo."  # the fact drawn from it, corrected with it
    assert edited.data["covers"] == {"statements": 1, "turns": [3], "entries": [fact.pk]}


def test_the_rest_door_says_what_a_forget_covers_and_shows_the_turns_as_said_with_marks(told):
    _ask(told, BLOOD)  # a reply that quotes it: a second turn holding the words
    entry = _entry("AB negative")
    alice = client_for("alice")
    url = SPACE.format(user="alice") + f"knowledge/{entry.pk}/"
    forgot = alice.delete(url)  # the answer says what went with it, as the entry's GET does after
    assert forgot.status_code == 200 and forgot.data["status"] == "deleted"
    covers = forgot.data["covers"]
    assert alice.get(url).data["covers"] == covers
    assert covers["statements"] == 2 and len(covers["turns"]) == 2 and covers["turns"][0] == 2  # said, quoted

    turns = {t["seq"]: t for t in alice.get(SPACE.format(user="alice") + "turns/?page_size=50").data["results"]}
    assert turns[2]["said"]["user_input"] == TOLD[1][0] and "AB negative" not in turns[2]["user_input"]
    assert [(m["kind"], m["field"], m["entry_id"]) for m in turns[2]["marks"]] == [
        ("forgotten", "user_input", entry.pk)
    ]
    assert turns[1]["said"] is None and turns[1]["marks"] == []


def test_the_rest_door_reverts_a_forget_and_refuses_what_it_cannot_revert(told):
    fact = _entry("AB negative")
    alice = client_for("alice")
    url = SPACE.format(user="alice") + f"knowledge/{fact.pk}/"
    assert alice.delete(url).status_code == 200
    assert "AB negative" not in _ask(told, BLOOD)
    back = alice.post(url + "revert/", {}, format="json")
    assert back.status_code == 200 and back.data["status"] == "active" and back.data["covers"]["statements"] == 0
    assert "AB negative" in _ask(told, BLOOD)
    assert alice.post(url + "revert/", {"version_id": 2**40}, format="json").status_code == 404
    assert client_for("bob").post(url + "revert/", {}, format="json").status_code == 404  # not bob's


def test_a_capable_models_prompt_holds_neither_forgotten_nor_corrected_words(told, settings, fake_llm):
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=_entry("AB negative").pk)
    told.edit_entry(user_id="alice", assistant_id="helper", entry_id=_entry("occupation").pk, value="midwife")
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("Noted.")
    capable = MemoryOS()  # the space's LLM: the fake OpenAI-compatible server

    for query in (BLOOD, WORK, "Tell me about myself, everything you know."):
        capable.get_response(user_id="alice", assistant_id="helper", query=query)
    replies = [r["messages"] for r in fake_llm.requests if "response_format" not in r]
    prompts = [str(messages) for messages in replies if messages[-1]["content"].endswith((BLOOD, WORK, "know."))]
    assert len(prompts) >= 3  # a reply the degeneration check refused is asked again
    assert all("AB negative" not in prompt and "radiology" not in prompt for prompt in prompts)
    assert all("occupation: midwife" in prompt for prompt in prompts)


def test_an_admin_delete_governs_the_reply_and_the_record_says_deleted(told, admin_client):
    entry = _entry("AB negative")
    delete = reverse("admin:memory_engine_longtermentry_delete", args=[entry.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302

    assert "AB negative" not in _ask(told, BLOOD)
    assert StatementMark.objects.filter(entry=entry, kind="forgotten").exists()


def test_a_fork_replays_what_the_memory_holds_now(told):
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=_entry("AB negative").pk)
    told.edit_entry(user_id="alice", assistant_id="helper", entry_id=_entry("occupation").pk, value="midwife")
    turns = replay_turns(told.space(user_id="alice", assistant_id="helper"))
    said = " ".join(f"{t['user_input']} {t['agent_response']}" for t in turns)
    assert "AB negative" not in said and "radiology" not in said and "midwife" in said


def test_a_turn_corrected_by_hand_keeps_the_words_given_and_drops_its_marks(told):
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=_entry("AB negative").pk)
    page = Page.objects.get(seq=2)
    services.curation.page_edit(page=page, user_input="My blood type is O positive.", agent_response="Noted.")

    page.refresh_from_db()
    assert page.user_input == "My blood type is O positive." and page.said is None
    assert not page.marks.exists()


def test_clauses_and_corrections_are_found_in_the_words_as_said():
    sentence = "I'm a radiology nurse and I have a cat named Milo."
    assert statement_marks.clauses(sentence) == ["I'm a radiology nurse and", "I have a cat named Milo."]
    assert statement_marks.statement_in("radiology nurse", sentence) == "I'm a radiology nurse and"
    assert (
        statement_marks.statement_in("AB negative", "My blood type is AB negative.") == "My blood type is AB negative."
    )
    whole = "My blood type is AB negative, in case that ever matters."
    assert statement_marks.statement_in(whole, whole) == whole  # a fact kept in the person's words goes whole
    assert (
        statement_marks.corrected(sentence, "radiology nurse", "midwife")
        == "I'm a midwife and I have a cat named Milo."
    )
    assert statement_marks.without(sentence, [("I'm a radiology nurse and", "")]) == "I have a cat named Milo."
    assert statement_marks.without(sentence, [("I have a cat named Milo.", "")]) == "I'm a radiology nurse"
    # Tidied where the sentence went, nowhere else: "so." ends a sentence as said, two quotes side by side stay.
    told = 'I think so. I\'m AB negative. She said "yes" "no", I hope so!'
    assert statement_marks.without(told, [("I'm AB negative.", "")]) == 'I think so. She said "yes" "no", I hope so!'
    assert statement_marks.without("You told me: \u201cI'm AB negative.\u201d", [("I'm AB negative.", "")]) == (
        "You told me: (forgotten)"
    )


def test_a_phrase_that_opens_a_clause_is_part_of_it():
    """Forgetting the token once left "For the VPN from home," to be quoted for "the VPN token I gave you"."""
    token = "For the VPN from home, IT gave me this token: VX-4471-KQ."
    assert statement_marks.clauses(token) == [token]
    assert statement_marks.clauses("On Monday, I see Dr. Patel, and on Tuesday, I see Dr. Singh.") == [
        "On Monday, I see Dr. Patel,",
        "and on Tuesday, I see Dr. Singh.",
    ]
    assert statement_marks.clauses("I live in Leeds, with my wife Moira.") == [
        "I live in Leeds,",
        "with my wife Moira.",
    ]
    # A word joined by "and" is no clause: forgetting "the tyre" left "... Between you" to be quoted.
    tyre = "Between you and me I let his tyre down last night."
    assert statement_marks.clauses(tyre) == [tyre]
    assert statement_marks.clauses("Tom and Ann are 5 and Bea is 7.") == ["Tom and Ann are 5 and", "Bea is 7."]
    assert statement_marks.clauses("I'm 34 and I live in Ghent.") == ["I'm 34 and", "I live in Ghent."]
    assert statement_marks.clauses("Dad died and I inherited his Volvo.") == ["Dad died and", "I inherited his Volvo."]


def test_a_fact_corrected_in_conversation_is_superseded_in_the_knowledge_and_answered_latest_first(told):
    _told_then_changed(told, "We live in Leeds for now, in a small flat in Roundhay.", LEEDS_TO_BRISTOL)

    leeds = LongTermEntry.objects.get(kind="user_knowledge", value__icontains="Leeds")
    assert leeds.status == "superseded" and leeds.versions.order_by("-at", "-pk").first().cause == "superseded"
    assert LongTermEntry.objects.get(kind="user_knowledge", value__icontains="Bristol").status == "active"
    assert told.get_user_profile(user_id="alice", assistant_id="helper")["location"] == "Bristol"
    text = _ask(told, "Where do I live now?")
    assert text.startswith("The latest you told me, yesterday:") and text.index("Bristol") < text.index("Leeds")
    assert "Leeds" not in "\n".join(
        i.text
        for i in told.retrieve(
            user_id="alice", assistant_id="helper", query="where do I live", count_hits=False
        ).user_knowledge
    )


def test_the_record_says_what_happened_and_who_did_it_and_an_entry_kept_without_an_llm_says_so(told, admin_client):
    entry = _entry("AB negative")
    assert entry.versions.get().get_cause_display() == "consolidation (the person's own words, no LLM)"
    words = entry.key.split()  # readable: the fact's own words, in its order, not stems
    assert len(words) >= 3 and all(w.lower() in entry.value.lower() for w in words)
    assert [entry.value.lower().find(w.lower()) for w in words] == sorted(
        entry.value.lower().find(w.lower()) for w in words
    )
    delete = reverse("admin:memory_engine_longtermentry_delete", args=[entry.pk])
    confirm = admin_client.get(delete).content.decode()
    banner = admin_client.post(delete, {"post": "yes"}, follow=True).content.decode()
    assert "marked deleted" in confirm and "marked deleted" in banner and "history is kept" in banner
    assert "deleted successfully" not in banner

    history = admin_client.get(reverse("admin:memory_engine_longtermentry_versions", args=[entry.pk])).content.decode()
    assert "Forgotten with it: 1 statement in turn #2." in history  # what the delete covers
    last = history.split('class="version')[-1]
    assert "deleted" in last and "admin admin" in last and "admin edit" not in history
    gone = entry.versions.order_by("-at", "-pk").first()
    assert gone.change == "deleted" and gone.get_cause_display() == "admin"


def test_an_export_marks_what_was_forgotten_or_corrected_and_a_restore_keeps_it_revertible(told, bob_space):
    fact = _entry("AB negative")
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=fact.pk)
    told.edit_entry(user_id="alice", assistant_id="helper", entry_id=_entry("occupation").pk, value="midwife")
    document = space_export(space=told.space(user_id="alice", assistant_id="helper"))
    page = next(p for p in document["pages"] if p["seq"] == 2)
    assert "AB negative" not in page["user_input"] and page["said"]["user_input"] == TOLD[1][0]
    assert [(m["kind"], m["entry_id"]) for m in page["marks"]] == [("forgotten", fact.pk)]
    assert {m["kind"] for p in document["pages"] for m in p["marks"]} == {"forgotten", "corrected"}

    space_restore(space=bob_space, document=document)
    restored = LongTermEntry.objects.get(space=bob_space, value__icontains="AB negative")
    assert StatementMark.objects.filter(space=bob_space, entry=restored).exists()
    assert "AB negative" not in Page.objects.get(space=bob_space, seq=2).user_input
    first = restored.versions.order_by("at", "pk").first()
    services.curation.entry_revert(entry=restored, version=first, actor="bob")
    assert Page.objects.get(space=bob_space, seq=2).user_input == TOLD[1][0]  # revertible where it was restored


def test_the_inspector_shows_neither_the_forgotten_words_nor_an_answer_from_them(told):
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=_entry("AB negative").pk)
    seen = client_for("alice").post(SPACE.format(user="alice") + "inspect/", {"query": BLOOD}, format="json")
    assert seen.status_code == 200, seen.data
    assert "AB negative" not in json.dumps(seen.data)
    assert seen.data["answer_from_memory"]["text"] == recall.ASKED_TO_FORGET


def test_an_admin_edit_is_what_the_reply_gives_and_reverting_it_gives_the_first_words_back(told, admin_client):
    entry = _entry("occupation")
    url = reverse("admin:memory_engine_longtermentry_change", args=[entry.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: form.initial.get(name, "") for name in form.fields} | {"value": "midwife"}
    data |= {"versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "0"}
    assert admin_client.post(url, data).status_code == 302
    assert "midwife" in _ask(told, WORK) and "corrected" in _ask(told, WORK)

    first = entry.versions.order_by("at", "pk").first()
    revert = reverse("admin:memory_engine_longtermentry_revert", args=[entry.pk, first.pk])
    assert admin_client.post(revert).status_code == 302
    assert Page.objects.get(seq=3).user_input == TOLD[2][0] and not StatementMark.objects.exists()
    text = _ask(told, WORK)
    assert "radiology nurse" in text and "midwife" not in text and "corrected" not in text
    assert LongTermEntry.objects.get(kind="user_knowledge", value__icontains="Milo").value == TOLD[2][0]


def test_what_was_forgotten_is_not_drawn_again_by_a_later_consolidation(told):
    told.delete_entry(user_id="alice", assistant_id="helper", entry_id=_entry("AB negative").pk)
    add_turns(told, [("Work was long today.", "Rest up."), ("I baked bread tonight.", "Nice!")], start=days_ago(1))
    told.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    assert not LongTermEntry.objects.filter(status="active", value__icontains="AB negative").exists()
    assert "AB negative" not in _ask(told, BLOOD)


def test_a_capable_models_prompt_gives_the_latest_of_a_fact_corrected_in_conversation(told, request):
    _told_then_changed(
        told, "We live in Leeds for now, in a small flat in Roundhay.", LEEDS_TO_BRISTOL
    )  # with no key: the person's words
    fake_llm = request.getfixturevalue("fake_llm")  # then a capable model is configured
    fake_llm.responder = lambda asked: nothing_extracted() if "response_format" in asked else reply("Bristol.")
    MemoryOS().get_response(user_id="alice", assistant_id="helper", query="Where do I live now?")
    prompt = next(str(r["messages"]) for r in fake_llm.requests if "response_format" not in r)
    assert "location: Bristol" in prompt and "location: Leeds" not in prompt
    # The superseded fact is not given as something known now (a dated turn may still say it was said).
    assert '- Maria Lindqvist said: "We live in Leeds' not in prompt


def test_a_change_no_profile_attribute_names_supersedes_the_earlier_fact_and_is_answered_latest_first(told):
    _told_then_changed(
        told,
        "Our team standup is at 9:30 every morning.",
        "Heads up: standup moved to 9:15 from Monday, not 9:30 anymore.",
    )

    earlier = LongTermEntry.objects.get(kind="user_knowledge", value__icontains="every morning")
    assert earlier.status == "superseded" and earlier.versions.order_by("-at", "-pk").first().cause == "superseded"
    assert LongTermEntry.objects.get(kind="user_knowledge", value__icontains="9:15").status == "active"
    text = _ask(told, "What time is standup?")
    assert text.index("9:15") < text.index("every morning")  # the latest first, the earlier after it
    knowledge = told.retrieve(user_id="alice", assistant_id="helper", query="standup time", count_hits=False)
    assert "every morning" not in "\n".join(item.text for item in knowledge.user_knowledge)
    # Another fact told the same day is about something else, and stays.
    assert LongTermEntry.objects.get(kind="user_knowledge", value__icontains="radiology").status == "active"


def test_a_correction_that_names_the_value_it_replaces_is_answered_as_the_latest_and_supersedes_it(told):
    _told_then_changed(
        told,
        "I am planning a Kyoto trip in autumn. I booked Hotel Sakuraya for 3 nights from 2 November.",
        "Sorry, I made a mistake. I booked Hotel Hanabusa, not Hotel Sakuraya.",
    )

    text = _ask(told, "Which hotel did I book in Kyoto?")
    assert text.startswith("The latest you told me, yesterday:") and text.index("Hanabusa") < text.index("trip in")
    earlier = LongTermEntry.objects.get(kind="user_knowledge", value__startswith="I booked Hotel Sakuraya")
    assert earlier.status == "superseded" and "Hanabusa" in earlier.superseded_by.value
    knowledge = told.retrieve(user_id="alice", assistant_id="helper", query="Kyoto hotel", count_hits=False)
    assert "I booked Hotel Sakuraya" not in "\n".join(item.text for item in knowledge.user_knowledge)


NEVER_TOLD = [
    ("I have a rendez-vous at the dentist on Thursday at 14h, so I need to leave early.", "Good luck."),
    ("My car, a grey Peugeot 308, shows an orange light.", "Get it checked."),
]


def test_what_was_never_told_is_said_to_be_unknown_in_the_persons_terms_not_guessed(told):
    add_turns(told, NEVER_TOLD, start=days_ago(1))
    told.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    # Close to something told (the dentist, the car), but asking what was not (a name, a plate).
    assert _ask(told, "What is the name of my dentist again?") == "You haven't told me your dentist's name yet."
    plate = _ask(told, "And what is the licence plate of my car?")
    assert "Peugeot" not in plate and plate.startswith("You haven't told me")
    # What was told is still answered.
    assert "Peugeot 308" in _ask(told, "What car do I drive?")


def test_the_rest_door_says_what_was_never_told_and_stores_the_exchange_as_said(told):
    add_turns(told, NEVER_TOLD, start=days_ago(1))
    alice = client_for("alice")
    asked = {"query": "What's the licence plate of my car?"}  # the car was told, its plate never
    answer = alice.post(SPACE.format(user="alice") + "chat/", asked, format="json")
    assert answer.status_code == 200
    assert answer.data["response"] == "You haven't told me your car's licence plate yet."
    assert answer.data["page"]["agent_response"] == answer.data["response"]
