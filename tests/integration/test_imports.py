"""Importing a conversation into a space: checked before anything is stored, turn by turn with
consolidation, progress on record, and a retry that goes on from where it stopped."""

import pytest
from django.core.cache import cache
from django.utils import timezone

from bench.fake_llm_server import status
from memory_engine.errors import MemoryInputError
from memory_engine.models import ConsolidationRun, ImportedKey, ImportedTurn, ImportJob, Page
from memory_engine.services.imports import import_create, import_run, locomo_turns, transcript_turns, turn_keys
from tests.api_helpers import client_for
from tests.memory_helpers import CAT_TALK, nothing_extracted

URL = "/api/v1/users/alice/spaces/helper/imports/"
TURNS = "/api/v1/users/alice/spaces/helper/turns/"
TRANSCRIPT = [
    {"user_input": u, "agent_response": a, "timestamp": f"2026-10-0{i + 1}T10:00:00+00:00"}
    for i, (u, a) in enumerate(CAT_TALK)
]


@pytest.fixture
def alice(memory, fake_llm):
    cache.clear()
    fake_llm.responder = nothing_extracted
    return client_for("alice")


def test_a_transcript_is_imported_turn_by_turn_and_consolidated(alice, alice_space):
    alice_space.stm_capacity = 1
    alice_space.save()
    job = alice.post(URL, {"transcript": TRANSCRIPT}, format="json")
    assert job.status_code == 202
    assert (job.data["status"], job.data["done"], job.data["total"]) == ("succeeded", 3, 3)  # inline here
    pages = list(Page.objects.filter(space=alice_space).order_by("seq"))
    assert [p.user_input for p in pages] == [u for u, _ in CAT_TALK]
    assert pages[0].timestamp.day == 1 and pages[0].tier == "mid"  # consolidated as it went
    assert alice.get(URL + f"{job.data['id']}/").data["done"] == 3
    assert alice.get(URL).data["results"][0]["source"] == "transcript"


def test_a_locomo_sample_is_imported_as_the_evaluation_maps_it():
    turns = locomo_turns("conv-26")
    assert len(turns) == 215 and turns[0]["user_input"].startswith("Hey Mel!")
    with pytest.raises(MemoryInputError, match="no LoCoMo sample"):
        locomo_turns("conv-999")


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "either a transcript, a locomo_sample or an upload"),
        ({"transcript": TRANSCRIPT, "locomo_sample": "conv-26"}, "either a transcript, a locomo_sample or an upload"),
        ({"transcript": []}, "non-empty list"),
        ({"transcript": [{"user_input": "", "agent_response": " "}]}, "turn 1: the turn is empty"),
        ({"transcript": [{"user_input": "hi", "timestamp": "yesterday"}]}, "is not an ISO 8601 date and time"),
        ({"transcript": [{"user_input": "hi", "timestamp": "9999-12-31T23:59:59-14:00"}]}, "between the years"),
        ({"transcript": [{"user_input": "x" * 9000}]}, "the limit is"),
        ({"locomo_sample": "conv-999"}, "no LoCoMo sample"),
    ],
)
def test_a_bad_import_is_refused_before_anything_is_stored(alice, body, message):
    answer = alice.post(URL, body, format="json")
    assert answer.status_code in (400, 413) and message in str(answer.data)
    assert not Page.objects.exists() and not ImportJob.objects.exists()


def test_an_interrupted_import_goes_on_from_where_it_stopped(memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    job = ImportJob.objects.create(space=alice_space, source="t", turns=transcript_turns(TRANSCRIPT), total=3)
    import_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("succeeded", 3)
    job.status, job.done = "running", 2  # as if a worker died after the second turn, and delivered again
    job.save()
    Page.objects.filter(space=alice_space, seq=3).delete()  # the third turn's transaction rolled back whole
    ImportedTurn.objects.filter(job=job, number=2).delete()
    ImportedKey.objects.filter(space=alice_space, key=turn_keys(job.turns)[2]).delete()
    import_run(job.pk)
    assert list(Page.objects.filter(space=alice_space).values_list("user_input", flat=True).order_by("seq")) == [
        u for u, _ in CAT_TALK
    ]
    import_run(job.pk)  # finished: nothing more
    assert Page.objects.filter(space=alice_space).count() == 3


def test_another_users_imports_are_out_of_sight(alice, bob_space):
    bob = client_for("bob")
    job = bob.post("/api/v1/users/bob/spaces/helper/imports/", {"transcript": TRANSCRIPT}, format="json")
    assert alice.get(f"/api/v1/users/bob/spaces/helper/imports/{job.data['id']}/").status_code == 404
    assert (
        alice.post("/api/v1/users/bob/spaces/helper/imports/", {"transcript": TRANSCRIPT}, format="json").status_code
        == 404
    )


def test_a_failed_promotion_in_an_import_is_tried_again_at_the_next_turn_not_after_a_cooldown(
    memory, alice_space, fake_llm
):
    """An import stores in seconds what was said over days: what it remembers must not depend on how fast
    the machine ran, so a failed promotion does not wait out the cooldown (counted in seconds)."""
    alice_space.stm_capacity, alice_space.heat_threshold = 1, 1.5
    alice_space.save()
    fake_llm.script(status(503), status(503))  # the first promotion's call fails, its retry too
    fake_llm.responder = nothing_extracted
    talk = [{"user_input": f"My cat Milo did a funny thing number {n}.", "agent_response": "Ha!"} for n in range(6)]
    job = import_create(space=alice_space, turns=transcript_turns(talk), source="transcript")
    import_run(job.pk)
    runs = ConsolidationRun.objects.filter(space=alice_space).order_by("started_at", "pk")
    failed = runs.filter(status=ConsolidationRun.Status.FAILED).first()
    assert failed is not None and failed.llm_calls == 0
    assert runs.filter(pk__gt=failed.pk, status=ConsolidationRun.Status.SUCCEEDED, llm_calls__gt=0).exists()


def test_an_import_says_what_it_is_doing_waiting_behind_another_storing_or_consolidating(alice, alice_space):
    first = import_create(space=alice_space, turns=transcript_turns(TRANSCRIPT), source="LoCoMo conv-26")
    second = import_create(space=alice_space, turns=transcript_turns(TRANSCRIPT), source="transcript")

    def activity(job):
        return alice.get(URL + f"{job.pk}/").data["activity"]

    assert activity(first) == "waiting for a worker"
    assert activity(second) == "waiting behind LoCoMo conv-26 (0 / 3 turns)"
    ImportJob.objects.filter(pk=first.pk).update(status=ImportJob.Status.RUNNING, done=1)
    assert activity(first) == "storing turns 2-3 of 3"  # a chunk at a time
    assert activity(second) == "waiting behind LoCoMo conv-26 (1 / 3 turns)"
    ConsolidationRun.objects.create(space=alice_space, kind="import", started_at=timezone.now())
    assert activity(first).startswith("consolidating after turn 1, since ") and "LLM" in activity(first)
    ImportJob.objects.filter(pk=first.pk).update(status=ImportJob.Status.SUCCEEDED, done=3)
    assert activity(first) == "" and activity(second) == "waiting for a worker"


def test_an_import_ends_with_its_history_in_mid_term_memory_and_says_what_it_taught(alice, alice_space, settings):
    from tests.memory_helpers import weak_offline_llm

    weak_offline_llm(settings)  # the bundled model's class: the person's own statements, no call
    talk = [
        ("I moved to Porto last spring with my partner Ana.", "That sounds like a big change."),
        ("I work as a nurse at the children's hospital there.", "Demanding work."),
        ("My sister Inês visits us every second weekend.", "Nice to have family close."),
        ("We adopted a grey cat called Pepper in May.", "Lovely name."),
        ("I am learning to surf on Sunday mornings.", "Brave in the Atlantic!"),
    ]
    transcript = [
        {"user_input": u, "agent_response": a, "timestamp": f"2026-10-01T10:0{i}:00+00:00"}
        for i, (u, a) in enumerate(talk)
    ]
    job = alice.post(URL, {"transcript": transcript}, format="json").data  # inline here
    assert job["status"] == "succeeded" and job["seconds_left"] is None
    # Short-term memory is the conversation going on; an imported history is over.
    assert not Page.objects.filter(space=alice_space, tier="short").exists()
    assert Page.objects.filter(space=alice_space, tier="mid").count() == 5
    assert job["taught"]["sessions"] >= 1 and job["taught"]["entries"] >= 3
    profile = alice.get("/api/v1/users/alice/spaces/helper/profile/").data["profile"]
    assert (profile.get("occupation"), profile.get("location")) == ("nurse", "Porto"), profile
    # What it taught is read from the memory as it is: an entry deleted since is no longer counted.
    from memory_engine.models import LongTermEntry
    from memory_engine.services.curation import entry_delete

    entry_delete(entry=LongTermEntry.objects.filter(space=alice_space, status="active").first(), actor="alice")
    assert alice.get(URL + f"{job['id']}/").data["taught"]["entries"] < job["taught"]["entries"]


def test_a_replay_settles_where_its_source_did_and_ends_as_the_source_stands(alice, alice_space):
    from memory_engine.services.lab import experiment_create

    alice_space.stm_capacity = 5
    alice_space.save()
    job = alice.post(URL, {"transcript": TRANSCRIPT}, format="json").data
    assert job["status"] == "succeeded" and not Page.objects.filter(space=alice_space, tier="short").exists()
    for said in ("and now a chat", "of two turns"):  # the conversation going on after the history
        assert alice.post(TURNS, {"user_input": said, "agent_response": "ok"}, format="json").status_code == 201
    experiment = experiment_create(source=alice_space, name="same", parameters={})
    assert experiment.replay.status == "succeeded"  # inline here

    def tiers(space):
        return list(Page.objects.filter(space=space).order_by("seq").values_list("seq", "tier"))

    assert (
        tiers(experiment.space)
        == tiers(alice_space)
        == [(1, "mid"), (2, "mid"), (3, "mid"), (4, "short"), (5, "short")]
    )


def test_an_import_is_cancelled_between_chunks_and_keeps_what_it_stored(alice, alice_space, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "INGEST_CHUNK_TURNS": 1}
    job = import_create(space=alice_space, turns=transcript_turns(TRANSCRIPT), source="transcript")
    assert import_run(job.pk, seconds=0) is False  # a part: one chunk, one turn
    running = alice.get(URL + f"{job.pk}/").data
    assert (running["status"], running["done"]) == ("running", 1) and running["seconds_left"] >= 0
    assert running["taught"] is None
    cancelled = alice.post(URL + f"{job.pk}/cancel/")
    assert cancelled.status_code == 200 and cancelled.data["status"] == "cancelled"
    assert import_run(job.pk) is True  # the next part finds it cancelled and stores nothing
    assert Page.objects.filter(space=alice_space).count() == 1
    assert alice.get(URL + f"{job.pk}/").data["taught"] is not None
    # What it stored settles as a finished import's history does: into mid-term memory (it was left in
    # short-term), once: the person's own turn after it stays short-term when the part is delivered again.
    assert list(Page.objects.filter(space=alice_space).values_list("tier", flat=True)) == ["mid"]
    said = alice.post(TURNS, {"user_input": "and now?", "agent_response": "ok"}, format="json")
    assert said.status_code == 201, said.data
    assert import_run(job.pk) is True
    assert sorted(Page.objects.filter(space=alice_space).values_list("tier", flat=True)) == ["mid", "short"]
    again = alice.post(URL + f"{job.pk}/cancel/")
    assert again.status_code == 409 and "ended already (cancelled)" in again.data["detail"]
    # Another account cannot see it, nor stop it.
    other = client_for("bob").post(URL + f"{job.pk}/cancel/")
    assert other.status_code in (403, 404)


@pytest.mark.parametrize(
    "body", [{"transcript": TRANSCRIPT}, {"locomo_sample": "conv-26"}], ids=["transcript", "locomo"]
)
def test_an_import_stopped_and_brought_again_stores_only_what_is_missing(alice, alice_space, settings, body):
    settings.MEMORYOS = {**settings.MEMORYOS, "INGEST_CHUNK_TURNS": 2}
    source = "transcript" if "transcript" in body else "LoCoMo conv-26"
    turns = transcript_turns(TRANSCRIPT) if "transcript" in body else locomo_turns("conv-26")
    stopped = import_create(space=alice_space, turns=turns, source=source)
    assert import_run(stopped.pk, seconds=0) is False  # a part: one chunk, then Stop
    assert alice.post(URL + f"{stopped.pk}/cancel/").data["status"] == "cancelled"
    assert Page.objects.filter(space=alice_space).count() == 2
    again = alice.post(URL, body, format="json").data  # inline here
    assert (again["status"], again["done"], again["skipped"]) == ("succeeded", len(turns), 2)
    said = list(Page.objects.filter(space=alice_space).order_by("seq").values_list("user_input", flat=True))
    assert said == [turn["user_input"] for turn in turns]  # each once, in the order said
    twice = alice.post(URL, body, format="json").data
    assert (twice["done"], twice["skipped"]) == (len(turns), len(turns))
    assert Page.objects.filter(space=alice_space).count() == len(turns)


def test_a_longer_transcript_of_the_same_talk_adds_its_new_turns_and_the_same_words_elsewhere_are_new(
    alice, alice_space
):
    assert alice.post(URL, {"transcript": TRANSCRIPT[:2]}, format="json").data["done"] == 2
    longer = alice.post(URL, {"transcript": TRANSCRIPT}, format="json").data
    assert (longer["done"], longer["skipped"]) == (3, 2)
    # The first turn's words again, after other turns: another time the person said it, stored.
    later = alice.post(URL, {"transcript": TRANSCRIPT[2:] + TRANSCRIPT[:1]}, format="json").data
    assert (later["done"], later["skipped"]) == (2, 0)
    assert Page.objects.filter(space=alice_space).count() == 5
    # Another account importing the same talk stores all of it: what one space holds says nothing of another.
    bob = client_for("bob").post("/api/v1/users/bob/spaces/helper/imports/", {"transcript": TRANSCRIPT}, format="json")
    assert (bob.data["done"], bob.data["skipped"]) == (3, 0)


def test_a_fork_made_while_its_source_imports_settles_where_the_source_will(alice, alice_space, settings):
    from memory_engine.services.lab import experiment_create

    settings.MEMORYOS = {**settings.MEMORYOS, "INGEST_CHUNK_TURNS": 1}
    alice_space.stm_capacity = 5
    alice_space.save()
    job = import_create(space=alice_space, turns=transcript_turns(TRANSCRIPT), source="transcript")
    assert import_run(job.pk, seconds=0) is False  # one turn stored, two to come
    experiment = experiment_create(source=alice_space, name="while importing", parameters={})
    assert experiment.replay.status == "succeeded"  # inline here
    assert import_run(job.pk) is True

    def tiers(space):
        return list(Page.objects.filter(space=space).order_by("seq").values_list("seq", "tier"))

    assert tiers(experiment.space) == tiers(alice_space) == [(1, "mid"), (2, "mid"), (3, "mid")]
