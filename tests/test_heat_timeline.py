"""The heat timeline chart: a pure SVG renderer, and the admin page that draws it from a space's events."""

from datetime import UTC, datetime, timedelta

from django.urls import reverse

from memory_engine.engine.heat_timeline import Point, heat_timeline_svg
from memory_engine.models import HeatEvent
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, extraction, nothing_extracted

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_each_session_is_a_line_with_its_promotions_and_evictions_marked():
    points = [
        Point(1, at(0), 1.0, "created"),
        Point(1, at(5), 6.0, "merged"),
        Point(1, at(6), 1.0, "promoted"),
        Point(2, at(3), 2.0, "created"),
        Point(2, at(9), 2.0, "evicted"),
    ]
    svg = heat_timeline_svg(points, 5.0)
    assert svg.count('class="session"') == 2
    assert svg.count('class="event promoted"') == 1 and svg.count('class="event evicted"') == 1
    assert 'class="threshold"' in svg and "threshold 5" in svg
    assert 'data-session="1" points="56.0,' in svg  # the earliest point is at the left edge


def test_the_time_axis_shows_seconds_only_for_a_span_under_an_hour():
    short = heat_timeline_svg([Point(1, at(0), 1.0, "created"), Point(1, at(0.5), 2.0, "retrieved")], 5.0)
    assert ">2026-11-01 00:00:00<" in short and ">2026-11-01 00:00:30<" in short
    long = heat_timeline_svg([Point(1, at(0), 1.0, "created"), Point(1, at(90), 2.0, "retrieved")], 5.0)
    assert ">2026-11-01 00:00<" in long and ">2026-11-01 01:30<" in long


def test_the_hottest_sessions_are_shown_and_an_empty_timeline_says_so():
    points = [Point(sid, at(sid), float(sid), "created") for sid in range(1, 12)]
    svg = heat_timeline_svg(points, 3.0, sessions_shown=3)
    assert [f'data-session="{sid}"' in svg for sid in (11, 10, 9, 1)] == [True, True, True, False]
    assert "No heat recorded yet" in heat_timeline_svg([], 5.0)


def test_the_admin_draws_a_spaces_timeline_from_its_heat_events(admin_client, memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 3.5
    alice_space.save()
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + COOKING_TALK)
    assert HeatEvent.objects.filter(space=alice_space, cause="promoted").exists()
    page = admin_client.get(reverse("admin:memory_engine_memoryspace_heat", args=[alice_space.pk]))
    assert page.status_code == 200
    svg = page.content.decode()
    sessions = set(HeatEvent.objects.filter(space=alice_space).values_list("session_id", flat=True))
    assert all(f'data-session="{sid}"' in svg for sid in sessions)
    assert 'class="event promoted"' in svg and "threshold 3.5" in svg


def test_the_heat_timeline_is_for_staff_only(client, memory, alice_space):
    url = reverse("admin:memory_engine_memoryspace_heat", args=[alice_space.pk])
    assert client.get(url).status_code == 302
