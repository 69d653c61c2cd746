"""Reading LoCoMo conversations into QA pages."""

from datetime import UTC, datetime

import pytest

from memory_engine.config import memory_settings
from memory_engine.formats.locomo import iter_pages, iter_turns, load_samples, parse_session_datetime


def sample(*turns, speaker_a="Ann", speaker_b="Ben"):
    conversation = {"speaker_a": speaker_a, "speaker_b": speaker_b, "session_1_date_time": "1:56 pm on 8 May, 2023"}
    conversation["session_1"] = [
        {"speaker": speaker, "dia_id": f"D1:{i}", "text": text} for i, (speaker, text) in enumerate(turns, start=1)
    ]
    return {"conversation": conversation}


def test_session_dates_are_read_as_utc():
    assert parse_session_datetime("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_session_datetime("yesterday")


def test_speaker_a_is_the_user_and_the_next_speaker_b_turn_answers():
    pages = list(iter_pages(sample(("Ann", "Hi"), ("Ben", "Hello"), ("Ann", "Bye"), ("Ann", "Really"), ("Ben", "Ok"))))
    assert [(p.user_input, p.agent_response, p.dia_ids) for p in pages] == [
        ("Hi", "Hello", ["D1:1", "D1:2"]),
        ("Bye", "", ["D1:3"]),
        ("Really", "Ok", ["D1:4", "D1:5"]),
    ]
    assert pages[0].timestamp < pages[1].timestamp < pages[2].timestamp


def test_a_conversation_opened_by_speaker_b_keeps_that_turn():
    pages = list(iter_pages(sample(("Ben", "Morning!"), ("Ann", "Hey"))))
    assert [(p.user_input, p.agent_response) for p in pages] == [("", "Morning!"), ("Hey", "")]


def test_every_turn_of_the_dev_split_lands_in_exactly_one_page():
    for conversation in load_samples(memory_settings().locomo_file):
        turn_ids = [t.dia_id for t in iter_turns(conversation)]
        page_ids = [dia_id for page in iter_pages(conversation) for dia_id in page.dia_ids]
        assert sorted(page_ids) == sorted(turn_ids)
