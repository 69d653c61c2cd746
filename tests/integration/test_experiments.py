"""Experiments: a space forked into a shadow space with other parameters, its turns replayed there, the
two compared; the source never changes, the shadow is nobody's to reach but through its experiment."""

import json
import re

import pytest
from django.db.models import Sum

from memory_engine.errors import ExperimentConflict, InputTooLarge, InvalidParameter, MemoryInputError
from memory_engine.models import (
    BackgroundJob,
    ConsolidationRun,
    Experiment,
    HeatEvent,
    ImportedTurn,
    ImportJob,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    Page,
)
from memory_engine.services.comparison import (
    CURVE_BUDGETS,
    Probe,
    compare,
    dialogue_ids,
    distinct_turns,
    evidence_curve,
    evidence_recall,
    heat_by_turn,
    mean_curve,
    ranked_items,
)
from memory_engine.services.imports import import_create
from memory_engine.services.lab import MAX_EXPERIMENTS, experiment_create, locomo_probes, replay_turns
from memory_engine.services.spaces import space_delete
from memory_engine.store import index
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, COOKING_TALK, days_ago, extraction, nothing_extracted

TALK = [*CAT_TALK, *COOKING_TALK]


@pytest.fixture
def source(memory, alice_space, fake_llm):
    """alice's space after a chat of cats and curry, each page carrying the ids of its dialogue turns."""
    alice_space.stm_capacity = 2
    alice_space.heat_threshold = 3.5
    alice_space.save()
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)], user_facts=[("cat", "The user has a cat", 1)]))
    fake_llm.responder = nothing_extracted
    for number, (user_input, agent_response) in enumerate(TALK, start=1):
        memory.add_memory(
            user_id="alice",
            assistant_id="helper",
            user_input=user_input,
            agent_response=agent_response,
            timestamp=days_ago(5 - number * 0.1),
            meta={"dia_ids": [f"D1:{2 * number - 1}", f"D1:{2 * number}"]},
        )
    return alice_space


def state_of(space: MemorySpace) -> tuple:
    """Everything a replay or a comparison could change in a space."""
    return (
        list(Page.objects.filter(space=space).order_by("seq").values_list("seq", "tier", "session_id", "analyzed")),
        list(MidTermSession.objects.filter(space=space).order_by("pk").values_list("heat", "n_visit", "status")),
        list(LongTermEntry.objects.filter(space=space).order_by("pk").values_list("value", "status", "hits")),
        HeatEvent.objects.filter(space=space).count(),
        ConsolidationRun.objects.filter(space=space).count(),
        MemorySpace.objects.filter(pk=space.pk).values_list("heat_threshold", "stm_capacity", "last_seq").get(),
    )


def test_a_fork_replays_every_turn_into_a_shadow_space_with_other_parameters(source, fake_llm):
    before = state_of(source)
    experiment = experiment_create(
        source=source, name="  lower   threshold ", parameters={"heat_threshold": 2.0, "stm_capacity": 3}
    )
    assert experiment.name == "lower threshold"
    shadow = experiment.space
    # its memory user says what it is where the admin lists it, not "~experiment-0aa57..." alone
    assert re.fullmatch(r"~experiment-lower-threshold-of-alice-[0-9a-f]{8}", shadow.user.external_id)
    assert (shadow.heat_threshold, shadow.stm_capacity, shadow.merge_theta) == (2.0, 3, source.merge_theta)
    assert shadow.assistant_id == source.assistant_id and shadow.user.display_name == source.user.display_name
    assert experiment.replay.status == ImportJob.Status.SUCCEEDED  # inline here: replayed on return
    pages = Page.objects.filter(space=shadow).order_by("seq")
    assert [(p.user_input, p.agent_response, p.meta) for p in pages] == [
        (p.user_input, p.agent_response, p.meta) for p in Page.objects.filter(space=source).order_by("seq")
    ]
    assert pages.filter(tier=Page.Tier.SHORT).count() == 3
    assert state_of(source) == before


def test_the_shadow_space_is_behind_no_door_but_its_experiment(source, client):
    experiment = experiment_create(source=source, name="hidden", parameters={})
    shadow_user = experiment.space.user
    assert shadow_user.owner is None and shadow_user.external_id.startswith("~")
    alice = client_for("alice")
    users = alice.get("/api/v1/users/").data["results"]
    assert [u["user_id"] for u in users] == ["alice"]
    assert alice.get(f"/api/v1/users/{shadow_user.external_id}/spaces/helper/").status_code == 404
    listed = alice.get(SPACE.format(user="alice") + "experiments/").data["results"]
    assert [e["name"] for e in listed] == ["hidden"]
    with pytest.raises(MemoryInputError, match="cannot be forked"):
        experiment_create(source=experiment.space, name="of a shadow", parameters={})


def test_a_space_still_importing_is_forked_with_the_turns_its_import_has_still_to_store(source):
    turns = [
        {"user_input": f"Turn {n} of the import.", "agent_response": "Noted.", "timestamp": None} for n in range(3)
    ]
    job = import_create(space=source, turns=turns, source="transcript")
    stored = Page.objects.create(
        space=source, seq=len(TALK) + 1, user_input="Turn 0 of the import.", agent_response="Noted.",
        timestamp=days_ago(1),
    )  # fmt: skip
    ImportedTurn.objects.create(job=job, number=0, page=stored)
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, done=1)
    replayed = [t["user_input"] for t in replay_turns(source)]
    assert replayed[: len(TALK)] == [u for u, _ in TALK]
    assert replayed[len(TALK) :] == ["Turn 0 of the import.", "Turn 1 of the import.", "Turn 2 of the import."]
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.FAILED)
    assert [t["user_input"] for t in replay_turns(source)][len(TALK) :] == ["Turn 0 of the import."]


def test_the_comparison_shows_each_sides_items_their_overlap_and_recall(source):
    # No page leaves short-term memory in the experiment: its pages, said days ago, are ranked by their match
    # as the source's mid-term pages are, and it finds the same evidence.
    experiment = experiment_create(source=source, name="all short-term", parameters={"stm_capacity": 100})
    before = (state_of(source), state_of(experiment.space))
    evidence = ("D1:1", "D1:2")  # the first turn: the cat's name
    result = compare(source, experiment.space, [Probe("What is my cat called?", evidence, "single-hop")], k=5)
    assert (state_of(source), state_of(experiment.space)) == before
    probe = result["probes"][0]
    assert probe["source"]["items"] and probe["experiment"]["items"] and probe["overlap"] > 0
    expected = evidence_recall(
        evidence, distinct_turns(ranked_items(source, "What is my cat called?", 25), dialogue_ids(source)), 5
    )
    assert probe["source"]["recall"] == expected == 1.0
    assert probe["experiment"]["recall"] == 1.0
    assert result["recall"] == {"source": 1.0, "experiment": 1.0, "questions": 1}
    assert result["source"]["turns"] == result["experiment"]["turns"] == len(TALK)
    assert result["experiment"]["tiers"]["short_term_pages"] == len(TALK)
    runs = ConsolidationRun.objects.filter(space=source).aggregate(n=Sum("llm_calls"))["n"]
    assert result["source"]["llm_calls"] == runs > 0 and result["experiment"]["llm_calls"] == 0
    # The curve counts the whole prompt context, short-term too: both sides show the evidence.
    for side in ("source", "experiment"):
        points = result["curve"][side]
        assert [p["budget"] for p in points] == list(CURVE_BUDGETS)
        assert all(p["tokens"] <= p["budget"] for p in points)
        assert points[-1]["evidence"] == 1.0
    assert result["curve"]["source"] == mean_curve(
        [(evidence_curve(source, "What is my cat called?", evidence, dialogue_ids(source)), 2)]
    )


def test_a_comparison_on_a_worker_goes_a_probe_at_a_time_and_ends_as_one_in_a_go(source):
    from memory_engine.services.background import background_run, comparison_create

    experiment = experiment_create(source=source, name="hotter", parameters={"heat_threshold": 2})
    probes = [
        Probe("What is my cat called?", ("D1:1",), "single-hop"),
        Probe("Which curry could I cook?", (), ""),
        Probe("Where does Milo sleep?", ("D1:2",), "single-hop"),
    ]
    job = comparison_create(experiment=experiment, probes=probes, k=5)
    parts = 0
    while not background_run(job.pk, seconds=0):
        parts += 1
        job.refresh_from_db()
        assert job.status == "queued" and (job.result["done"], job.result["of"]) == (parts, 3)
    job.refresh_from_db()
    assert parts == 2 and job.status == "succeeded"
    whole = json.loads(json.dumps(compare(source, experiment.space, probes, k=5)))
    assert job.result == whole


def test_a_comparison_says_when_either_side_is_still_being_built(source):
    """Compare once ran on a half-built source and an unstarted replay and reported recall 0.437 against
    0.000 with no word of it: each unfinished import or replay is now named, with how far it got."""
    experiment = experiment_create(source=source, name="done", parameters={})
    probes = [Probe("What is my cat called?", ("D1:1",), "single-hop")]
    assert compare(source, experiment.space, probes)["warnings"] == []

    turns = [{"user_input": f"Turn {n}.", "agent_response": "Noted.", "timestamp": None} for n in range(215)]
    importing = import_create(space=source, turns=turns, source="LoCoMo conv-26")
    ImportJob.objects.filter(pk=importing.pk).update(status=ImportJob.Status.RUNNING, done=120)
    import_create(space=experiment.space, turns=turns, source="replay of alice")  # queued, not started
    result = compare(source, experiment.space, probes)
    assert result["warnings"] == [
        "The source's LoCoMo conv-26 is not finished: 120 of 215 turns stored. "
        "Its figures will change; compare again when it ends.",
        "The experiment's replay of alice has not started: 0 of 215 turns stored. "
        "Its figures will change; compare again when it ends.",
    ]
    assert result["source"]["unfinished"] == [
        {"source": "LoCoMo conv-26", "status": "running", "done": 120, "total": 215}
    ]
    ImportJob.objects.update(status=ImportJob.Status.SUCCEEDED)
    assert compare(source, experiment.space, probes)["warnings"] == []


def test_the_same_parameters_rank_the_same_items_on_both_sides(source):
    experiment = experiment_create(source=source, name="same", parameters={"heat_threshold": 1000.0})
    result = compare(source, experiment.space, [Probe("Should the curry be spicy?")], k=3)
    probe = result["probes"][0]
    pages = [item for item in probe["source"]["items"] if item["kind"] == "page"]
    assert pages and all(item["shared"] for item in pages)
    assert probe["overlap"] >= len(pages) and probe["source"]["recall"] is None and result["recall"]["questions"] == 0
    assert result["curve"] == {"source": [], "experiment": []}  # no probe with evidence


def test_heat_by_turn_places_each_point_at_the_turns_stored_when_it_changed(source):
    points = heat_by_turn(source)
    assert points and [p["turn"] for p in points] == sorted(p["turn"] for p in points)
    assert all(1 <= p["turn"] <= len(TALK) for p in points)
    assert {p["cause"] for p in points} >= {"created", "merged"}


@pytest.mark.parametrize(
    ("name", "parameters", "error", "says"),
    [
        ("", {}, MemoryInputError, "name is empty"),
        ("x" * 101, {}, InputTooLarge, "the limit is 100"),
        ("bad", {"heat_threshold": "hot"}, InvalidParameter, "heat_threshold must be a number"),
        ("bad", {"lexical_weight": 2}, InvalidParameter, "lexical_weight must be from 0 to 1"),
        ("bad", {"last_seq": 1}, InvalidParameter, "last_seq is not a parameter"),
    ],
)
def test_a_bad_fork_is_refused_and_stores_nothing(source, name, parameters, error, says):
    counts = (MemorySpace.objects.count(), MemoryUser.objects.count(), ImportJob.objects.count())
    with pytest.raises(error, match=says):
        experiment_create(source=source, name=name, parameters=parameters)
    assert (MemorySpace.objects.count(), MemoryUser.objects.count(), ImportJob.objects.count()) == counts
    assert not Experiment.objects.exists()


def test_a_taken_name_or_one_experiment_too_many_is_a_conflict(source, bob_space):
    experiment_create(source=source, name="one", parameters={})
    with pytest.raises(ExperimentConflict, match="already has an experiment named 'one'"):
        experiment_create(source=source, name="one", parameters={})
    with pytest.raises(MemoryInputError, match="no turns to replay"):
        experiment_create(source=bob_space, name="empty", parameters={})
    for number in range(2, MAX_EXPERIMENTS + 1):
        experiment_create(source=source, name=f"n{number}", parameters={})
    spaces = MemorySpace.objects.count()
    with pytest.raises(ExperimentConflict, match=f"at most {MAX_EXPERIMENTS} experiments"):
        experiment_create(source=source, name="one too many", parameters={})
    assert MemorySpace.objects.count() == spaces


def test_deleting_an_experiment_or_its_source_deletes_the_shadow_and_its_user(source):
    first = experiment_create(source=source, name="first", parameters={})
    second = experiment_create(source=source, name="second", parameters={})
    for experiment in (first, second):
        ranked_items(experiment.space, "cat", 5)  # the index files are written by a search
    shadow_dirs = [index.index_dir(e.space_id) for e in (first, second)]
    assert all(folder.exists() for folder in shadow_dirs)
    alice = client_for("alice")
    assert alice.delete(SPACE.format(user="alice") + f"experiments/{first.pk}/").status_code == 204
    assert not MemorySpace.objects.filter(pk=first.space_id).exists()
    assert not MemoryUser.objects.filter(pk=first.space.user_id).exists()
    assert not shadow_dirs[0].exists() and shadow_dirs[1].exists()
    assert MemorySpace.objects.filter(pk=source.pk).exists()
    space_delete(space=source)
    assert not Experiment.objects.exists() and not shadow_dirs[1].exists()
    assert not MemoryUser.objects.filter(external_id__startswith="~").exists()


def test_the_rest_doors_fork_watch_compare_and_refuse_alike(source):
    alice = client_for("alice")
    url = SPACE.format(user="alice") + "experiments/"
    made = alice.post(
        url, {"name": "hotter", "parameters": {"heat_threshold": 2, "lexical_weight": 0.8}}, format="json"
    )
    assert made.status_code == 202, made.data
    assert made.data["changed"] == {"heat_threshold": [3.5, 2.0], "lexical_weight": [0.5, 0.8]}
    assert made.data["replay"]["done"] == made.data["replay"]["total"] == len(TALK)
    experiment = f"{url}{made.data['id']}/"
    shown = alice.get(experiment).data
    assert shown["replay"]["status"] == "succeeded"
    assert shown["sides"]["source"]["turns"] == shown["sides"]["experiment"]["turns"] == len(TALK)
    compared = alice.post(experiment + "compare/", {"questions": ["What is my cat called?"], "k": 5}, format="json")
    assert compared.status_code == 202, compared.data  # a worker compares (here inline: over on return)
    assert (compared.data["kind"], compared.data["status"]) == ("comparison", "succeeded")
    result = alice.get(SPACE.format(user="alice") + f"jobs/{compared.data['id']}/").data["result"]
    assert len(result["probes"]) == 1 and result["k"] == 5
    assert result["probes"][0]["question"] == "What is my cat called?"
    assert client_for("bob").get(SPACE.format(user="bob") + f"jobs/{compared.data['id']}/").status_code == 404
    heat = alice.get(experiment + "heat/").data
    assert heat["source"]["threshold"] == 3.5 and heat["experiment"]["threshold"] == 2.0
    assert heat["source"]["points"] and heat["experiment"]["points"]
    # the two sides' sessions have their own numbers; what they are about is the same words
    topics = {side: {p["topic"] for p in heat[side]["points"]} for side in ("source", "experiment")}
    assert topics["source"] & topics["experiment"] and "" not in topics["source"]
    refusals = [
        (url, {"name": "hotter"}, 409),
        (url, {"name": "bad", "parameters": {"top_pages": 0}}, 400),
        (url, {"name": "bad", "parameters": []}, 400),
        (url, {"parameters": {}}, 400),
        (experiment + "compare/", {}, 400),
        (experiment + "compare/", {"questions": []}, 400),
        (experiment + "compare/", {"questions": ["a"], "locomo_sample": "conv-26"}, 400),
        (experiment + "compare/", {"questions": ["a"], "k": 0}, 400),
        (experiment + "compare/", {"questions": ["a\x00"]}, 400),
        (experiment + "compare/", {"questions": ["a"] * 201}, 400),
        # bounded work and answer: questions x k, and each question's length (200 long ones at k 25 took 68 s
        # and answered 13 MB)
        (experiment + "compare/", {"questions": ["cat?"] * 200, "k": 25}, 413),
        (experiment + "compare/", {"questions": ["What is my cat called? " * 30]}, 413),
        (experiment + "compare/", {"locomo_sample": "conv-999"}, 400),
    ]
    for where, body, expected in refusals:
        answer = alice.post(where, body, format="json")
        assert answer.status_code == expected, (body, answer.status_code, answer.data)
    assert Experiment.objects.count() == 1
    assert BackgroundJob.objects.count() == 1  # the one comparison; no refusal recorded a job


def test_a_locomo_samples_questions_probe_with_their_evidence():
    probes = locomo_probes("conv-26")
    assert len(probes) == 150  # categories 1-4 with evidence in the dev split's conv-26
    assert all(p["evidence"] and p["category"] != "adversarial" for p in probes)
    assert len(locomo_probes("conv-26", limit=20)) == 20
    with pytest.raises(MemoryInputError, match="no LoCoMo sample"):
        locomo_probes("conv-999")


def test_forks_and_comparisons_share_the_chat_rate_and_their_reads_do_not(source, settings):
    from rest_framework.throttling import SimpleRateThrottle

    rates = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {"api": "100/min", "chat": "2/min"}
    try:
        alice = client_for("alice")
        url = SPACE.format(user="alice") + "experiments/"
        made = alice.post(url, {"name": "first"}, format="json")
        compare_url = f"{url}{made.data['id']}/compare/"
        assert alice.post(compare_url, {"questions": ["cat?"]}, format="json").status_code == 202
        assert [alice.get(url).status_code for _ in range(3)] == [200, 200, 200]  # a page polls freely
        limited = alice.post(url, {"name": "second"}, format="json")
        assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
        assert Experiment.objects.count() == 1
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates


def test_staff_see_experiments_in_the_admin_and_deleting_one_takes_its_shadow(admin_client, source):
    from django.urls import reverse

    experiment = experiment_create(source=source, name="for the admin", parameters={"stm_capacity": 4})
    listed = admin_client.get(reverse("admin:memory_engine_experiment_changelist"))
    assert listed.status_code == 200 and "for the admin" in listed.content.decode()
    assert f"{len(TALK)}/{len(TALK)} succeeded" in listed.content.decode()
    deleted = admin_client.post(reverse("admin:memory_engine_experiment_delete", args=[experiment.pk]), {"post": "yes"})
    assert deleted.status_code == 302
    assert not MemorySpace.objects.filter(pk=experiment.space_id).exists()
    assert not MemoryUser.objects.filter(pk=experiment.space.user_id).exists()
    assert MemorySpace.objects.filter(pk=source.pk).exists()


def test_a_fork_with_no_change_of_an_imported_locomo_sample_reports_what_its_source_does(memory, alice_space, fake_llm):
    """The control of a comparison: the same turns, the same parameters, the same starting state (its history
    settled where the source's was, none of it left in short-term memory), so the same figures."""
    from memory_engine.services.imports import import_run, locomo_turns

    fake_llm.responder = nothing_extracted
    job = import_create(space=alice_space, turns=locomo_turns("conv-26"), source="LoCoMo conv-26")
    assert import_run(job.pk) is True
    experiment = experiment_create(source=alice_space, name="control", parameters={})
    probes = [Probe(p["question"], tuple(p["evidence"]), p["category"]) for p in locomo_probes("conv-26", limit=12)]
    result = compare(alice_space, experiment.space, probes, k=10)
    for figure in ("turns", "tiers", "sessions_promoted", "sessions_ever", "llm_calls", "pages_moved"):
        assert result["source"][figure] == result["experiment"][figure], figure
    assert result["source"]["tiers"]["short_term_pages"] == 0
    assert result["recall"]["source"] == result["recall"]["experiment"]
    assert result["curve"]["source"] == result["curve"]["experiment"]
    assert all(probe["overlap"] == 10 for probe in result["probes"])
    assert result["parameters"] == [] and result["same_figures"] is True
    assert result["verdict"] == "The same parameters on both sides: a control, and every figure is the same."

    def heat(space):
        # to the chart's precision: a replay's recency is read at its own clock (about 1e-8 apart)
        return [(p["turn"], p["topic"], round(p["heat"], 4), p["cause"]) for p in heat_by_turn(space)]

    assert heat(alice_space) == heat(experiment.space)
    # Fewer pages in the prompt: the same memory, ranked the same, but the context its chat gives the model
    # (the curve at the space's own budget) is another.
    fewer = experiment_create(source=alice_space, name="fewer pages", parameters={"top_pages": 3})
    result = compare(alice_space, fewer.space, probes, k=10)
    own = str(alice_space.context_token_budget)
    source_at, fewer_at = ([p for p in result["curve"][side] if str(p["budget"]) == own] for side in result["curve"])
    assert result["recall"]["source"] == result["recall"]["experiment"] and source_at != fewer_at
    assert result["same_figures"] is False and result["verdict"].endswith("Every difference below comes from it.")


def test_a_comparison_names_the_parameters_that_differ_and_says_when_they_change_nothing_here(source, fake_llm):
    # the fork's promotion asks the model what the source's did, and hears the same
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)], user_facts=[("cat", "The user has a cat", 1)]))
    ranked = experiment_create(source=source, name="fewer pages", parameters={"top_pages": source.top_pages - 1})
    result = compare(source, ranked.space, [Probe("Should the curry be spicy?")], k=3)
    assert result["parameters"] == [
        {
            "parameter": "top_pages",
            "label": "Pages ranked (top-k)",
            "source": source.top_pages,
            "experiment": source.top_pages - 1,
        }
    ]
    # what the prompt is given, not what is ranked or kept: nothing the comparison measures moves
    assert result["same_figures"] is True
    assert result["verdict"] == (
        f"Only this differs: Pages ranked (top-k) {source.top_pages} \u2192 {source.top_pages - 1}. Every figure is "
        "the same: on these turns and questions, it changes nothing."
    )
    colder = experiment_create(source=source, name="never promoted", parameters={"heat_threshold": 1000.0})
    result = compare(source, colder.space, [Probe("Should the curry be spicy?")], k=3)
    assert [d["parameter"] for d in result["parameters"]] == ["heat_threshold"]
    assert result["same_figures"] is False and result["verdict"].endswith("Every difference below comes from it.")


def test_an_import_and_a_background_job_are_one_document_at_every_door(source):
    from memory_engine.documents import BackgroundJobCard, ImportJobCard

    alice = client_for("alice")
    space = SPACE.format(user="alice")
    made = alice.post(space + "experiments/", {"name": "same"}, format="json").data
    shown = alice.get(f"{space}experiments/{made['id']}/").data
    replay = shown["replay"]  # the lab's replay is an import of the shadow space, given as REST gives an import
    assert ImportJobCard.model_validate_json(json.dumps(replay)).model_dump(mode="json") == replay
    assert replay == made["replay"] and replay["status"] == "succeeded" and replay["taught"] is not None
    compared = alice.post(f"{space}experiments/{made['id']}/compare/", {"questions": ["Cat?"], "k": 3}, format="json")
    polled = alice.get(space + f"jobs/{compared.data['id']}/").data
    assert BackgroundJobCard.model_validate_json(json.dumps(polled)).model_dump(mode="json") == polled
    assert polled == compared.data and polled["progress"] is None and polled["result"]["k"] == 3
    imported = alice.post(
        space + "imports/", {"transcript": [{"user_input": "hi", "agent_response": "yo"}]}, format="json"
    )
    listed, one = alice.get(space + "imports/").data["results"][0], alice.get(space + f"imports/{imported.data['id']}/")
    assert imported.data == listed == one.data
    assert ImportJobCard.model_validate_json(json.dumps(one.data)).model_dump(mode="json") == one.data
