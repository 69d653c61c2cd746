"""The admin's heat timeline of a space: the chat page's chart (static/js/charts.js), drawn from the points
the page carries (tests/system/test_browser.py draws it in Chromium)."""

import json
import re

from django.urls import reverse

from memory_engine.models import HeatEvent, MidTermSession, session_topic
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, extraction, nothing_extracted


def _heat_data(page) -> dict:
    found = re.search(r'<script id="heat-data" type="application/json">(.*?)</script>', page.content.decode(), re.S)
    return json.loads(found.group(1))


def test_the_admin_page_carries_a_spaces_heat_events_for_the_chart(admin_client, memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 3.5
    alice_space.save()
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + COOKING_TALK)
    assert HeatEvent.objects.filter(space=alice_space, cause="promoted").exists()
    # A promotion is drawn at the heat that crossed the threshold, then the drop it made: its visits and turns
    # counted again from zero ("cooled", at the same moment).
    for promoted in HeatEvent.objects.filter(space=alice_space, cause="promoted"):
        after = HeatEvent.objects.filter(session=promoted.session, pk__gt=promoted.pk).order_by("pk").first()
        assert promoted.heat >= alice_space.heat_threshold and promoted.l_interaction > 0
        assert (after.cause, after.at, after.n_visit, after.l_interaction) == ("cooled", promoted.at, 0, 0)
        assert after.heat < alice_space.heat_threshold
    page = admin_client.get(reverse("admin:memory_engine_memoryspace_heat", args=[alice_space.pk]))
    assert page.status_code == 200
    data = _heat_data(page)
    assert data["threshold"] == 3.5
    events = HeatEvent.objects.filter(space=alice_space).order_by("at", "pk")
    assert [(p["session"], p["cause"]) for p in data["points"]] == list(events.values_list("session_id", "cause"))
    # Each line named by what its session is about, not by its number alone.
    topics = {p["session"]: p["topic"] for p in data["points"]}
    for session in MidTermSession.objects.filter(pk__in=topics):
        assert topics[session.pk] and session.summary.startswith(topics[session.pk].rstrip("\u2026"))
    assert "js/charts.js" in page.content.decode()  # the chat page's chart, not a second one


def test_a_label_in_the_points_cannot_break_out_of_the_page(admin_client, memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.save()
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK[:3])
    HeatEvent.objects.filter(space=alice_space).update(cause="</script>")  # the column holds 10 characters
    page = admin_client.get(reverse("admin:memory_engine_memoryspace_heat", args=[alice_space.pk]))
    assert '"</script>"' not in page.content.decode()  # escaped, so the data cannot end the script
    assert _heat_data(page)["points"][0]["cause"] == "</script>"


def test_the_heat_timeline_is_for_staff_only(client, admin_client, django_user_model, memory, alice_space):
    url = reverse("admin:memory_engine_memoryspace_heat", args=[alice_space.pk])
    assert client.get(url).status_code == 302  # signed out
    client.force_login(django_user_model.objects.create_user("member", password="pw-member-12345"))
    assert client.get(url).status_code == 302  # signed in, not staff
    assert admin_client.get(url).status_code == 200  # staff


def test_the_heat_timelines_points_name_their_sessions_topic_through_rest(memory, alice_space, fake_llm):
    from tests.api_helpers import client_for

    alice_space.stm_capacity = 1
    alice_space.save()
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + COOKING_TALK)
    points = client_for("alice").get("/api/v1/users/alice/spaces/helper/heat/?page_size=500").data["results"]
    assert points
    summaries = dict(MidTermSession.objects.filter(space=alice_space).values_list("pk", "summary"))
    for point in points:
        assert summaries[point["session"]].startswith(point["topic"].rstrip("\u2026")) and point["topic"]


def test_each_point_is_made_by_a_turn_a_visit_by_the_turn_that_asks(memory, alice_space, fake_llm):
    from tests.api_helpers import client_for

    alice_space.stm_capacity = 1
    alice_space.save()
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + COOKING_TALK)
    memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    asked = alice_space.pages.order_by("-seq").first()
    visits = HeatEvent.objects.filter(space=alice_space, cause="retrieved")
    assert visits.exists() and {(e.turn, e.turn_at) for e in visits} == {(asked.seq, e.at) for e in visits}
    # every other point: a turn of its session, dated as that turn is
    for point in HeatEvent.objects.filter(space=alice_space).exclude(cause="retrieved"):
        page = point.session.pages.get(seq=point.turn)
        assert point.turn_at == page.timestamp
    points = client_for("alice").get("/api/v1/users/alice/spaces/helper/heat/?page_size=500").data["results"]
    assert {(p["turn"], p["cause"]) for p in points} == set(
        HeatEvent.objects.filter(space=alice_space).values_list("turn", "cause")
    )


def test_a_line_is_named_by_the_words_of_its_session_not_by_a_note_in_brackets():
    # LoCoMo's sessions open with what was shown: four of a chart's eight lines read "[shares a photo: a photo of..."
    summary = "[shares a photo: a photo of a dog on a beach] Max loves the sea, we go every weekend"
    assert session_topic(summary) == "Max loves the sea, we go…"
    assert session_topic("[shares a photo: a sunset]") == "[shares a photo: a sunset]"  # nothing else to name it by


def test_a_heat_point_is_one_document_in_the_admin_rest_and_the_lab(admin_client, memory, alice_space, fake_llm):
    """The admin's chart, REST's timeline and the lab's overlay give a point as one model's document
    (documents.HeatPointCard): the export's point, its session and that session's topic."""
    from memory_engine.documents import HeatPointCard
    from memory_engine.services.comparison import heat_by_turn
    from tests.api_helpers import client_for

    alice_space.stm_capacity = 1
    alice_space.save()
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + COOKING_TALK)
    over_rest = client_for("alice").get("/api/v1/users/alice/spaces/helper/heat/?page_size=500").data["results"]
    in_the_admin = _heat_data(admin_client.get(reverse("admin:memory_engine_memoryspace_heat", args=[alice_space.pk])))
    in_the_lab = heat_by_turn(alice_space)
    assert over_rest and json.loads(json.dumps(over_rest)) == in_the_admin["points"]
    by_id = {point["id"]: point for point in over_rest}
    assert in_the_lab and all(by_id[point["id"]] == point for point in in_the_lab)  # each point's turn is kept
    for point in over_rest:
        assert HeatPointCard.model_validate_json(json.dumps(point)).model_dump(mode="json") == point
