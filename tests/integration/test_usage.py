"""What a reply used and cost, kept beside its turn, and what a space costs day by day: replies,
consolidation, imports and experiments, in calls, tokens and money at the operator's prices."""

import pytest
from django.utils import timezone

from bench.fake_llm_server import reply
from memory_engine.models import ConsolidationRun, LongTermEntry, Page, ReplyRecord
from memory_engine.services import curation, space_llm
from memory_engine.services.dispatch import import_start
from memory_engine.services.imports import transcript_turns
from memory_engine.services.lab import experiment_create
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted

PRICES = {"fake-model": (2.0, 8.0)}  # per million prompt / completion tokens


@pytest.fixture
def alice(memory):
    return client_for("alice")


@pytest.fixture
def told(memory, alice_space, fake_llm, settings):
    """alice told her assistant about her cat, and it learnt a fact from it (one LLM call)."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PRICES": PRICES}
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 1.5
    alice_space.save()
    fake_llm.script(extraction(user_facts=[("user's cat", "The user has a cat named Milo", 1)]))
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK)
    return alice_space


def ask(alice, fake_llm, question="What is my cat called?", answer="Your cat is Milo."):
    fake_llm.responder = lambda request: (
        reply(answer, usage=(900, 12)) if "response_format" not in request else nothing_extracted()
    )
    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": question}, format="json")
    assert answer.status_code == 200, answer.data
    return answer.data


def test_a_reply_keeps_what_it_used_and_its_tokens_and_shows_them_after_a_reload(told, alice, fake_llm):
    answer = ask(alice, fake_llm)
    assert answer["usage"] == {"prompt_tokens": 900, "completion_tokens": 12}
    record = ReplyRecord.objects.get()
    assert (record.model, record.prompt_tokens, record.completion_tokens) == ("fake-model", 900, 12)
    assert "Milo" not in str(record.used)  # references, not words

    turns = alice.get(SPACE.format(user="alice") + "turns/?newest=true").data["results"]
    assert turns[0]["reply"]["prompt_tokens"] == 900 and turns[0]["reply"]["used"]["knowledge"] >= 1
    assert all(turn["reply"] is None for turn in turns[1:])  # turns given whole: no reply of this space's
    used = alice.get(SPACE.format(user="alice") + f"turns/{turns[0]['id']}/used/").data
    live = answer["retrieval"]
    for section in ("pages", "profile", "user_knowledge", "short_term"):
        assert [i["id"] for i in used[section]] == [i["id"] for i in live[section]], section
    assert used["tokens_used"] == live["tokens_used"] and used["gone"] == 0
    assert any("Milo" in item["text"] for item in used["user_knowledge"])

    # Forgotten since: left out, and counted.
    fact = LongTermEntry.objects.get(value="The user has a cat named Milo")
    curation.entry_delete(entry=fact, actor="alice", cause="owner")
    again = alice.get(SPACE.format(user="alice") + f"turns/{turns[0]['id']}/used/").data
    assert not any("Milo" in item["text"] for item in again["user_knowledge"]) and again["gone"] == 1
    given = turns[1]["id"]
    assert alice.get(SPACE.format(user="alice") + f"turns/{given}/used/").status_code == 404


def test_a_list_of_turns_reads_the_turns_their_replies_used_in_one_query(told, alice, fake_llm):
    """The turns list links each reply to the turns it used (reply.turns) without a query per reply."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    listing = SPACE.format(user="alice") + "turns/?newest=true"

    def queries_to_list() -> tuple[int, list]:
        with CaptureQueriesContext(connection) as seen:
            turns = alice.get(listing).data["results"]
        return len(seen.captured_queries), turns

    ask(alice, fake_llm)
    one_reply, turns = queries_to_list()
    used = turns[0]["reply"]["turns"]
    stored = {page.pk: page.seq for page in Page.objects.filter(space=told)}
    assert used and all(stored[turn["page_id"]] == turn["seq"] for turn in used)
    assert [turn["seq"] for turn in used] == sorted(turn["seq"] for turn in used)

    ask(alice, fake_llm, question="And what does Milo eat?")
    ask(alice, fake_llm, question="Where does Milo sleep?")
    three_replies, turns = queries_to_list()
    assert sum(turn["reply"] is not None for turn in turns) == 3
    assert all(turn["reply"]["turns"] for turn in turns if turn["reply"] is not None)
    assert three_replies == one_reply


def test_another_account_reads_neither_what_a_reply_used_nor_the_usage(told, alice, fake_llm, memory):
    ask(alice, fake_llm)
    page = Page.objects.filter(reply_record__isnull=False).get()
    bob = client_for("bob")
    memory.space(user_id="bob", assistant_id="helper")
    assert bob.get(SPACE.format(user="alice") + f"turns/{page.pk}/used/").status_code == 404
    assert bob.get(SPACE.format(user="alice") + "usage/").status_code == 404
    assert bob.get(SPACE.format(user="bob") + f"turns/{page.pk}/used/").status_code == 404


def test_the_usage_counts_replies_consolidation_imports_and_experiments_by_day_with_their_cost(
    told, alice, fake_llm, memory
):
    ask(alice, fake_llm)
    ask(alice, fake_llm, "And what does Milo eat?", "Tuna, you told me.")
    chat_runs = ConsolidationRun.objects.filter(space=told, llm_calls__gt=0)
    assert chat_runs.exists() and {run.model for run in chat_runs} == {"fake-model"}

    fake_llm.responder = lambda request: extraction(user_facts=[("user's dog", "The user has a dog named Rex", 1)])
    turns = transcript_turns(
        [{"user_input": f"My dog Rex did trick {n}.", "agent_response": "Nice."} for n in range(4)]
    )
    import_start(space=told, turns=turns, source="transcript")  # inline here: imported on return
    experiment = experiment_create(source=told, name="replayed", parameters={})
    assert ConsolidationRun.objects.filter(space=experiment.space, llm_calls__gt=0).exists()

    usage = alice.get(SPACE.format(user="alice") + "usage/?days=7").data
    assert [day["day"] for day in usage["days"]][-1] == timezone.now().date().isoformat() and len(usage["days"]) == 7
    today = usage["days"][-1]
    assert today["replies"] == {
        "calls": 2,
        "quoted": 0,
        "prompt_tokens": 1800,
        "completion_tokens": 24,
        "cost": pytest.approx(0.003792),
    }
    for kind, spaces in (("consolidation", [told]), ("experiments", [experiment.space])):
        runs = ConsolidationRun.objects.filter(space__in=spaces, llm_calls__gt=0)
        if kind == "consolidation":
            runs = runs.exclude(kind="import")
        calls = sum(run.llm_calls for run in runs)
        assert today[kind]["calls"] == calls > 0, kind
        prompt, completion = sum(r.prompt_tokens for r in runs), sum(r.completion_tokens for r in runs)
        assert today[kind]["cost"] == pytest.approx((prompt * 2.0 + completion * 8.0) / 1e6)
    assert (
        today["imports"]["calls"]
        == sum(run.llm_calls for run in ConsolidationRun.objects.filter(space=told, kind="import"))
        > 0
    )
    assert usage["totals"]["replies"]["calls"] == 2 and usage["unpriced_models"] == []
    assert usage["prices"] == {"fake-model": [2.0, 8.0]} and usage["currency"] == "USD"


def test_a_reply_quoted_from_memory_is_counted_apart_from_the_models(told, alice, fake_llm, settings):
    """No model ran for it: it was counted as a call (the page said "2 calls" where the model wrote one)."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PRICE_CURRENCY": "EUR"}
    ask(alice, fake_llm)  # the model writes it
    space_llm.choice_set(space=told, values={"provider": "offline"}, actor="alice")  # the bundled model: quotes
    quoted = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What is my cat called?"}, format="json")
    assert quoted.status_code == 200 and quoted.data["page"]["reply_source"] == "quoted", quoted.data
    usage = alice.get(SPACE.format(user="alice") + "usage/?days=1").data
    replies = usage["totals"]["replies"]
    assert (replies["calls"], replies["quoted"], replies["prompt_tokens"]) == (1, 1, 900)
    assert usage["currency"] == "EUR"


def test_a_model_with_no_price_has_no_cost_and_is_named(told, alice, fake_llm, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PRICES": {}}
    ask(alice, fake_llm)
    usage = alice.get(SPACE.format(user="alice") + "usage/?days=1").data
    assert usage["days"][0]["replies"]["cost"] is None and usage["totals"]["replies"]["cost"] is None
    assert usage["unpriced_models"] == ["fake-model"]


@pytest.mark.parametrize("days", ["0", "367", "-1", "ten", "1e3", "9" * 30])
def test_a_bad_number_of_days_is_refused(told, alice, days):
    answer = alice.get(SPACE.format(user="alice") + f"usage/?days={days}")
    assert answer.status_code == 400 and "days" in answer.data


def test_prices_come_from_the_environment_and_a_bad_one_stops_the_process(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from memory_engine.config import envprices

    monkeypatch.setenv("X_PRICES", "gpt-4o-mini=0.15/0.60; other = 1/2 ;")
    assert envprices("X_PRICES") == {"gpt-4o-mini": (0.15, 0.6), "other": (1.0, 2.0)}
    for bad in ("gpt=cheap", "=1/2", "gpt=1", "gpt=-1/2", "gpt=nan/1"):
        monkeypatch.setenv("X_PRICES", bad)
        with pytest.raises(ImproperlyConfigured, match="X_PRICES"):
            envprices("X_PRICES")


def test_staff_see_a_spaces_usage_and_each_replys_record_in_the_admin(told, alice, fake_llm, admin_client):
    from django.urls import reverse

    ask(alice, fake_llm)
    page = admin_client.get(reverse("admin:memory_engine_memoryspace_change", args=[told.pk])).content.decode()
    usage = page[page.index('<table id="usage">') :]
    assert "<td>replies</td><td>1</td><td>900</td><td>12</td><td>0.0019</td>" in usage.replace("\n", "")
    listed = admin_client.get(reverse("admin:memory_engine_replyrecord_changelist"))
    assert listed.context["cl"].result_count == 1
    assert admin_client.get(reverse("admin:memory_engine_replyrecord_add")).status_code == 403
