"""Temporal grounding: the days a turn speaks of and the dates a query names, as matching tokens."""

from datetime import UTC, date, datetime

import pytest

from memory_engine.engine.retriever import dated_query
from memory_engine.language.temporal import date_tokens, named_tokens, said_tokens
from tests.memory_helpers import add_turns

MONDAY = datetime(2023, 5, 8, 14, 30, tzinfo=UTC)  # Monday 8 May 2023


def test_a_date_gives_tokens_for_its_day_month_year_and_month_of_any_year():
    assert date_tokens(date(2023, 10, 13)) == ["dt2023", "dt202310", "dtm10", "dt20231013"]
    assert date_tokens(date(2023, 10, 1), "month") == ["dt2023", "dt202310", "dtm10"]
    assert date_tokens(date(2022, 1, 1), "year") == ["dt2022"]


@pytest.mark.parametrize(
    "text, resolved",
    [
        ("I went to a support group yesterday.", "dt20230507"),
        ("Last Saturday we hiked.", "dt20230506"),
        ("We went camping last weekend", "dt20230506"),
        ("I'll see her next Friday", "dt20230512"),
        ("Last Monday was hard", "dt20230501"),  # said on a Monday: a week before, not today
        ("We met 3 days ago", "dt20230505"),
        ("I adopted him two weeks ago", "dt202304"),  # 24 April: known to the month
        ("She moved here a few months ago", "dt202302"),
        ("I started painting last month", "dt202304"),
        ("Our trip is next month", "dt202306"),
        ("I moved from Sweden 4 years ago", "dt2019"),
        ("That was last year", "dt2022"),
    ],
)
def test_relative_expressions_resolve_against_the_day_they_were_said(text, resolved):
    tokens = said_tokens(text, MONDAY)
    assert tokens[:4] == date_tokens(MONDAY.date())  # the day it was said comes first
    assert resolved in tokens


def test_a_turn_with_no_time_in_it_has_only_its_own_day_and_nothing_repeats():
    assert said_tokens("I love my cat.", MONDAY) == ["dt2023", "dt202305", "dtm05", "dt20230508"]
    assert said_tokens("Today, today, today!", MONDAY) == ["dt2023", "dt202305", "dtm05", "dt20230508"]
    assert said_tokens("next month", datetime(2023, 12, 15, tzinfo=UTC))[-3:] == ["dt2024", "dt202401", "dtm01"]


@pytest.mark.parametrize(
    "query, tokens",
    [
        ("What painting did she show on October 13, 2023?", ["dt2023", "dt202310", "dtm10", "dt20231013"]),
        ("What did Gina find on 1 February, 2023?", ["dt2023", "dt202302", "dtm02", "dt20230201"]),
        ("Who had dinner with Maria on May 3rd 2023?", ["dt2023", "dt202305", "dtm05", "dt20230503"]),
        ("What did they paint in July 2023?", ["dt2023", "dt202307", "dtm07"]),
        ("When did Melanie go camping in June?", ["dtm06"]),
        ("How many times did she go to the beach in 2023?", ["dt2023"]),
        ("May I ask what you cooked?", []),
        ("What happened on February 30, 2023?", []),  # no such day
        ("What is her favourite colour?", []),
    ],
)
def test_a_query_names_dates_outright_in_the_usual_english_forms(query, tokens):
    assert named_tokens(query) == tokens


def test_only_a_query_that_names_a_date_is_changed_for_the_lexical_search():
    assert dated_query("What did she paint?") == "What did she paint?"
    assert dated_query("What did she paint in July 2023?").endswith(" dt2023 dt202307 dtm07")


def test_a_page_is_found_by_the_day_it_was_said_or_spoke_of_though_its_text_names_no_date(
    memory, alice_space, settings
):
    alice_space.stm_capacity = 1
    alice_space.save()
    oct_12 = datetime(2023, 10, 12, 18, 0, tzinfo=UTC)
    talk = [
        ("I finished a painting of a sunset over the lake.", "It sounds beautiful."),
        ("I painted a portrait of my grandmother too.", "What a lovely gift."),
        ("And I painted our old farmhouse from memory.", "You have been busy."),
        ("Work was long today.", "Rest well."),
    ]
    for days, turn in enumerate(talk):  # one turn a day, from 9 to 12 October 2023
        add_turns(memory, [turn], start=oct_12.replace(day=9 + days))
    add_turns(memory, [("The painting I showed you yesterday is framed now.", "Great!")], start=oct_12.replace(day=14))
    add_turns(memory, [("Nothing new.", "Okay.")], start=oct_12.replace(day=15))  # pushes the 14th to mid-term

    def best(query: str) -> str:
        found = memory.retrieve(user_id="alice", assistant_id="helper", query=query, count_hits=False)
        return found.pages[0].text

    asked = {
        "What did I paint on October 10, 2023?": "portrait of my grandmother",
        "What did I paint on 11 October 2023?": "farmhouse",
        "Which painting did I show on October 13, 2023?": "showed you yesterday",
    }
    assert {query: expected in best(query) for query, expected in asked.items()} == dict.fromkeys(asked, True)

    settings.MEMORYOS = {**settings.MEMORYOS, "RETRIEVAL_DATES": False}  # the switch of the ablation
    assert not all(expected in best(query) for query, expected in asked.items())
