"""The memory lab: a space forked into a shadow space with other parameters, the source's turns replayed
into it in a worker (an import job, so it shows progress as an import does) or an export restored there,
and the two compared on probe questions (services/comparison.py, done by a worker). The source is only
read: its pages, and the turns still waiting in its unfinished imports, so a space still being imported
can be forked and both replays watched at once.
"""

from django.db import IntegrityError, transaction
from django.db.models import Max, Q, QuerySet

from memory_engine import inputs
from memory_engine.errors import ExperimentConflict, MemoryInputError
from memory_engine.formats.locomo import CATEGORY_NAMES, clean_evidence, iter_pages
from memory_engine.models import Experiment, ImportedTurn, ImportJob, MemorySpace, Page
from memory_engine.services.background import restore_create, room_for_background_job
from memory_engine.services.dispatch import background_send, import_send
from memory_engine.services.imports import MAX_TURNS, import_create, locomo_sample, room_for_bulk_work
from memory_engine.services.space_llm import choice_copy
from memory_engine.services.spaces import SHADOW_PREFIX, shadow_space_create, space_delete

__all__ = [
    "MAX_EXPERIMENTS",
    "experiment_create",
    "experiment_delete",
    "experiment_of",
    "experiments",
    "locomo_probes",
    "replay_turns",
]

MAX_EXPERIMENTS = 10  # per space: each replay costs a worker the whole conversation again
PROBE_CATEGORIES = (1, 2, 3, 4)  # LoCoMo's questions with evidence to find (5 is adversarial)


def replay_turns(source: MemorySpace) -> list[dict]:
    """The source's turns in order, as an import takes them: every page stored, then the turns its
    unfinished imports have still to store. The last turn of each import is marked `settle` (the last its
    page stored, for one settled or with nothing left to store; its last turn still to come, for one under
    way, which settles when it ends), so that the replay moves its short-term memory to mid-term where the
    source's did or will (services.imports.import_run) and a fork with no change ends as its source stands.
    Read-only."""
    pages = list(
        Page.objects.filter(space=source)
        .order_by("seq")
        .values("seq", "user_input", "agent_response", "timestamp", "meta", "reply_withheld", "reply_source")
    )
    last_seq = pages[-1]["seq"] if pages else 0
    unfinished = list(
        ImportJob.objects.filter(space=source, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]).order_by(
            "created_at", "pk"
        )
    )
    # A turn is among the pages read when its page is; one stored since is still to come.
    to_come = {}
    for job in unfinished:
        stored = set(ImportedTurn.objects.filter(job=job, page__seq__lte=last_seq).values_list("number", flat=True))
        to_come[job.pk] = [turn for number, turn in enumerate(job.turns) if number not in stored]
    ended_on_a_page = ImportedTurn.objects.filter(job__space=source, page__isnull=False).filter(
        Q(job__settled_at__isnull=False) | Q(job__in=[job for job in unfinished if not to_come[job.pk]])
    )
    settled_after = set(ended_on_a_page.values("job").annotate(last=Max("page__seq")).values_list("last", flat=True))
    turns: list[dict] = []
    for p in pages:
        if not (p["user_input"] or p["agent_response"]):  # a turn whose every word was forgotten replays as nothing
            if p["seq"] in settled_after and turns:
                turns[-1]["settle"] = True  # but where the history settled stays
            continue
        turns.append(
            {
                "user_input": p["user_input"],
                "agent_response": p["agent_response"],
                "timestamp": p["timestamp"].isoformat(),
                "meta": p["meta"],
                "reply_withheld": p["reply_withheld"],
                "reply_source": p["reply_source"],
                "settle": p["seq"] in settled_after,
            }
        )
    for job in unfinished:
        if to_come[job.pk]:
            turns += [*to_come[job.pk][:-1], {**to_come[job.pk][-1], "settle": True}]
    return turns


def experiment_create(*, source: MemorySpace, name: object, parameters: dict, export: object = None) -> Experiment:
    """Fork `source`: a shadow space with its parameters but for `parameters`, into which a worker
    replays its turns (inline: replayed on return). With `export` (a space's export, services/export.py)
    the shadow space is that space restored instead, by a worker too (services/background.py), its parameters
    but for `parameters`: to compare
    memory built elsewhere, or earlier, with this one. Raises InvalidParameter for a bad parameter,
    MemoryInputError for a bad name or export, a shadow space, or a space with no turns or too many, and
    ExperimentConflict when the name is taken or the space has MAX_EXPERIMENTS; then nothing is stored."""
    name = inputs.experiment_name(name)
    inputs.space_parameters(parameters)
    if source.user.external_id.startswith(SHADOW_PREFIX):
        raise MemoryInputError("an experiment's space cannot be forked; fork its source")
    if Experiment.objects.filter(source=source, name=name).exists():
        raise ExperimentConflict(f"the space already has an experiment named {name!r}")
    if Experiment.objects.filter(source=source).count() >= MAX_EXPERIMENTS:
        raise ExperimentConflict(f"a space has at most {MAX_EXPERIMENTS} experiments; delete one first")
    turns = replay_turns(source) if export is None else []
    if export is None:
        room_for_bulk_work(source)  # the replay is bulk work of the source's holder
    else:
        room_for_background_job(source)  # so is the restore
    if export is None and not turns:
        raise MemoryInputError("the space has no turns to replay")
    if len(turns) > MAX_TURNS:
        raise MemoryInputError(f"an experiment replays at most {MAX_TURNS} turns; this space has {len(turns)}")
    try:
        with transaction.atomic():
            shadow = shadow_space_create(source=source, parameters=parameters, name=name)
            choice_copy(source=source, target=shadow)  # the replay's promotions ask the source's LLM
            if export is not None:
                restore = restore_create(space=shadow, document=export, parameters=parameters, holder=source)
                experiment = Experiment.objects.create(source=source, space=shadow, name=name, restore=restore)
            else:
                job = import_create(space=shadow, turns=turns, source=f"replay of {source} for {name!r}")
                experiment = Experiment.objects.create(source=source, space=shadow, name=name, replay=job)
    except IntegrityError:
        raise ExperimentConflict(f"the space already has an experiment named {name!r}") from None
    if experiment.restore is not None:
        background_send(experiment.restore)
    else:
        import_send(experiment.replay)
    return experiment


def experiment_delete(*, experiment: Experiment) -> None:
    """Delete the experiment, its shadow space and that space's memory user. The source is untouched.
    Safe to repeat."""
    space_delete(space=experiment.space)


def locomo_probes(sample_id: str, limit: int | None = None) -> list[dict]:
    """The questions of a sample of the LoCoMo file (services.imports.locomo_sample) that have evidence to
    find (categories 1-4), each {"question", "category", "evidence"}: the ids of the dialogue turns that
    answer it, which the pages of a LoCoMo import carry in their meta. With `limit`, that many spread over
    the sample."""
    sample = locomo_sample(sample_id)
    known = {dia_id for page in iter_pages(sample) for dia_id in page.dia_ids}
    probes = [
        {"question": qa["question"], "category": CATEGORY_NAMES[int(qa["category"])], "evidence": evidence}
        for qa in sample["qa"]
        if int(qa["category"]) in PROBE_CATEGORIES and (evidence := clean_evidence(qa.get("evidence", []), known))
    ]
    if limit is not None and len(probes) > limit:
        probes = [probes[i * len(probes) // limit] for i in range(limit)]
    return probes


def experiments(source: MemorySpace) -> QuerySet:
    """The experiments forked from `source`, newest first, with their shadow spaces and replays."""
    found = Experiment.objects.filter(source=source).select_related("source", "space", "replay")
    return found.defer("replay__turns").order_by("-created_at", "-pk")


def experiment_of(source: MemorySpace, experiment_id: object) -> Experiment | None:
    """The experiment of `source` with this id (its shadow space, user, assistant and replay fetched), or
    None."""
    if not inputs.is_row_id(experiment_id):
        return None
    found = Experiment.objects.select_related("space", "space__user", "space__assistant", "replay")
    experiment = found.defer("replay__turns").filter(source=source, pk=experiment_id).first()
    if experiment is not None:
        experiment.source = source
    return experiment
