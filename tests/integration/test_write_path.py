"""One write path (store/writes.space_write): a change made through any door is what the next retrieval
ranks. The admin's page and session edits used to save the row and leave the indexes on the old words."""

import pytest
from django.urls import reverse

from memory_engine.engine.retriever import retrieve
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page
from memory_engine.services import curation
from memory_engine.services.spaces import space_parameters_set
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, days_ago

ZEPPELIN = "My neighbour keeps an old zeppelin in his barn near Friedrichshafen."


@pytest.fixture
def talked(memory, alice_space):
    """Two conversations, days apart, past short-term memory: pages and sessions in mid-term."""
    alice_space.stm_capacity = 2
    alice_space.heat_threshold = 1000.0  # nothing is promoted: no LLM needed
    alice_space.save()
    add_turns(memory, CAT_TALK, start=days_ago(5))
    add_turns(memory, COOKING_TALK, start=days_ago(1))
    alice_space.refresh_from_db()
    assert Page.objects.filter(space=alice_space, tier=Page.Tier.MID).count() >= 4
    return alice_space


def admin_post(admin_client, name: str, row, **changes):
    url = reverse(f"admin:memory_engine_{name}_change", args=[row.pk])
    form = admin_client.get(url).context["adminform"].form
    initial = {field: form.initial.get(field) for field in form.fields}
    return admin_client.post(url, {k: "" if v is None else v for k, v in initial.items()} | changes)


def form_errors(response) -> dict:
    return response.context["adminform"].form.errors


def test_an_admin_edit_of_a_turns_words_is_what_retrieval_ranks_next(admin_client, talked):
    page = Page.objects.filter(space=talked, tier=Page.Tier.MID).order_by("seq").first()
    before = retrieve(talked, "zeppelin barn Friedrichshafen", top_pages=1, fill_pages=0, count_hits=False)
    assert not any("zeppelin" in item.text for item in before.pages)

    answer = admin_post(admin_client, "page", page, user_input=ZEPPELIN)

    assert answer.status_code == 302
    page.refresh_from_db()
    assert page.user_input == ZEPPELIN and page.vector_version == MemorySpace.objects.get(pk=talked.pk).vector_version
    found = retrieve(talked, "zeppelin barn Friedrichshafen", top_pages=1, fill_pages=0, count_hits=False)
    assert [item.id for item in found.pages] == [page.pk]
    assert "zeppelin" in found.pages[0].text
    assert "zeppelin" in " ".join(page.keywords)


def test_an_admin_edit_of_a_session_summary_is_what_retrieval_ranks_next(admin_client, talked):
    cooking = Page.objects.get(space=talked, user_input=COOKING_TALK[0][0]).session
    cats = MidTermSession.objects.filter(space=talked).exclude(pk=cooking.pk).first()
    summary = "A trip to the zeppelin museum in Friedrichshafen by the lake."

    answer = admin_post(admin_client, "midtermsession", cats, summary=summary)

    assert answer.status_code == 302
    cats.refresh_from_db()
    assert cats.summary == summary
    found = retrieve(talked, "zeppelin museum Friedrichshafen trip", top_sessions=1, count_hits=False)
    assert [item.id for item in found.sessions] == [cats.pk]


def test_the_admin_refuses_words_a_turn_may_not_hold_and_changes_nothing(admin_client, talked):
    page = Page.objects.filter(space=talked, tier=Page.Tier.MID).order_by("seq").first()
    version = talked.vector_version

    answer = admin_post(admin_client, "page", page, user_input="a\x00b")
    empty = admin_post(admin_client, "page", page, user_input="", agent_response="  ")

    assert answer.status_code == 200 and "Null characters are not allowed" in str(form_errors(answer))
    assert empty.status_code == 200 and "the turn is empty" in str(form_errors(empty))
    stored = Page.objects.get(pk=page.pk)
    assert (stored.user_input, stored.agent_response) == (page.user_input, page.agent_response)
    assert MemorySpace.objects.get(pk=talked.pk).vector_version == version


def test_turns_and_sessions_are_not_added_or_deleted_one_by_one_in_the_admin(admin_client, talked):
    page = Page.objects.filter(space=talked).first()
    session = MidTermSession.objects.filter(space=talked).first()
    assert (
        admin_client.post(reverse("admin:memory_engine_page_delete", args=[page.pk]), {"post": "yes"}).status_code
        == 403
    )
    delete_session = reverse("admin:memory_engine_midtermsession_delete", args=[session.pk])
    assert admin_client.post(delete_session, {"post": "yes"}).status_code == 403
    assert admin_client.get(reverse("admin:memory_engine_page_add")).status_code == 403
    assert Page.objects.filter(pk=page.pk).exists() and MidTermSession.objects.filter(pk=session.pk).exists()


def test_the_admin_refuses_an_entry_value_the_engine_refuses_and_changes_nothing(admin_client, memory, talked):
    entry = curation.profile_entry_add(space=talked, attribute="occupation", value="nurse", actor="test")
    for value, says in (("nur\x00se", "Null characters are not allowed"), ("v" * 2001, "the limit is 2000")):
        answer = admin_post(
            admin_client,
            "longtermentry",
            entry,
            value=value,
            **{"versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "0"},
        )
        assert answer.status_code == 200 and says in str(form_errors(answer)), form_errors(answer)
    stored = LongTermEntry.objects.get(pk=entry.pk)
    assert (stored.value, stored.versions.count()) == ("nurse", 1)


# --- A space's parameters --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"stm_capacity": 0}, "stm_capacity", "at least 1"),
        ({"recency_mu_seconds": 0}, "recency_mu_seconds", "more than 0"),  # heat would divide by it
        ({"heat_alpha": 1e9}, "heat_alpha", "out of range"),
    ],
)
def test_the_admin_and_the_api_refuse_the_same_space_parameters(admin_client, talked, change, field, says):
    answer = client_for("alice").patch(SPACE.format(user="alice"), change, format="json")
    assert answer.status_code == 400 and says in str(answer.data[field])
    form = admin_post(admin_client, "memoryspace", talked, **change)
    assert form.status_code == 200 and says in str(form_errors(form)[field])
    assert getattr(MemorySpace.objects.get(pk=talked.pk), field) == getattr(talked, field)


def test_a_change_of_parameters_writes_only_them_and_keeps_what_a_turn_wrote_meanwhile(memory, talked):
    stale = MemorySpace.objects.get(pk=talked.pk)  # read by the request before a chat turn was stored
    add_turns(memory, [("One more thing about Milo.", "Tell me.")], start=days_ago(0.5))
    written = MemorySpace.objects.get(pk=talked.pk)

    space_parameters_set(stale, {"heat_alpha": 2.0})

    stored = MemorySpace.objects.get(pk=talked.pk)
    assert stored.heat_alpha == 2.0
    assert (stored.last_seq, stored.vector_version) == (written.last_seq, written.vector_version)


def test_an_admin_edit_of_a_spaces_parameters_changes_them_and_nothing_else(admin_client, talked):
    answer = admin_post(admin_client, "memoryspace", talked, heat_threshold="7.5", stm_capacity="3")
    assert answer.status_code == 302, form_errors(answer)
    stored = MemorySpace.objects.get(pk=talked.pk)
    assert (stored.heat_threshold, stored.stm_capacity) == (7.5, 3)
    assert (stored.user_id, stored.last_seq, stored.vector_version) == (
        talked.user_id,
        talked.last_seq,
        talked.vector_version,
    )
