"""What a restore and a comparison cost a web request, done in the request and as a worker's job: done in
the request, a 300-page restore held it 29 s and a 200-question comparison 68 s on a busy machine.

For a space of `pages` synthetic turns in mid-term sessions: the restore of its export as the request did
it before (check, embed and store, services/restore.space_restore), then as it does now (check and record a
job, services/background.restore_create) and the worker's part (background_run); and a comparison of
`questions` x k, before (services/comparison.compare in the request) and now (comparison_create, then the
worker). Runs in this process on the configured database, in spaces of a throwaway memory user that it
deletes afterwards.
"""

import json
import time
import uuid
from datetime import timedelta

from django.utils import timezone

from bench.synthetic_chat import synthetic_pages, synthetic_queries
from memory_engine.models import BackgroundJob, Experiment, MemoryUser
from memory_engine.services.background import background_run, comparison_create, restore_create
from memory_engine.services.comparison import Probe, compare
from memory_engine.services.restore import space_restore
from memory_engine.services.spaces import assistant_create, space_get, user_create, user_memory_delete
from memory_engine.store.embeddings import get_embedder

PAGES_A_SESSION = 10


def synthetic_export(pages: int, seed: int = 7) -> dict:
    """A space's export (services/export.py's shape) of `pages` turns in mid-term sessions of ten, each
    session summarised by its first turn: what a lived space holds, without an LLM to build it."""
    made = synthetic_pages(seed, pages)
    start = timezone.now() - timedelta(days=30)
    at = [(start + timedelta(minutes=2 * i)).isoformat() for i in range(pages)]
    sessions = [
        {
            "id": n + 1,
            "status": "active",
            "summary": made[n * PAGES_A_SESSION].user_input[:300],
            "keywords": [],
            "n_visit": 1,
            "l_interaction": PAGES_A_SESSION,
            "heat": 2.0,
            "total_visits": 1,
            "last_visit_at": at[n * PAGES_A_SESSION],
            "created_at": at[n * PAGES_A_SESSION],
        }
        for n in range((pages + PAGES_A_SESSION - 1) // PAGES_A_SESSION)
    ]
    turns = [
        {
            "id": i + 1,
            "seq": i + 1,
            "user_input": page.user_input,
            "agent_response": page.agent_response,
            "timestamp": at[i],
            "tier": "mid",
            "session_id": i // PAGES_A_SESSION + 1,
        }
        for i, page in enumerate(made)
    ]
    return {"parameters": {}, "sessions": sessions, "pages": turns, "entries": []}


def _timed(work) -> tuple[object, float]:
    began = time.perf_counter()
    value = work()
    return value, time.perf_counter() - began


def measure(*, pages: int, questions: int, k: int) -> dict:
    """Seconds of each path (see the module docstring), and the result sizes."""
    get_embedder().encode(["warm up"])
    name = f"bench-background-{uuid.uuid4().hex[:8]}"
    user_create(user_id=name)
    for assistant in ("before", "now", "shadow"):
        assistant_create(assistant_id=assistant)
    try:
        document = json.loads(json.dumps(synthetic_export(pages)))
        before = space_get(user_id=name, assistant_id="before")
        restored, restore_before = _timed(lambda: space_restore(space=before, document=document))
        now = space_get(user_id=name, assistant_id="now")
        job, restore_request = _timed(lambda: restore_create(space=now, document=document))
        _, restore_worker = _timed(lambda: background_run(job.pk))
        job.refresh_from_db()
        assert job.status == BackgroundJob.Status.SUCCEEDED, job.error

        shadow = space_get(user_id=name, assistant_id="shadow")
        space_restore(space=shadow, document=document, parameters={"lexical_weight": 0.9})
        experiment = Experiment.objects.create(source=now, space=shadow, name="bench")
        probes = [Probe(q) for q in synthetic_queries(11, questions)]
        compared, compare_before = _timed(lambda: compare(now, shadow, probes, k=k))
        job, compare_request = _timed(lambda: comparison_create(experiment=experiment, probes=probes, k=k))
        _, compare_worker = _timed(lambda: background_run(job.pk))
        job.refresh_from_db()
        assert job.status == BackgroundJob.Status.SUCCEEDED, job.error
        return {
            "pages": restored["pages"],
            "questions": questions,
            "k": k,
            "restore_before_s": restore_before,
            "restore_request_s": restore_request,
            "restore_worker_s": restore_worker,
            "compare_before_s": compare_before,
            "compare_request_s": compare_request,
            "compare_worker_s": compare_worker,
            "compare_answer_bytes": len(json.dumps(compared)),
        }
    finally:
        user_memory_delete(user=MemoryUser.objects.get(external_id=name))


def table(figures: dict) -> str:
    """The figures as a text table: the request's seconds before and now, with their ratio."""
    rows = [
        (f"restore of {figures['pages']} pages", "restore"),
        (f"comparison of {figures['questions']} questions x k={figures['k']}", "compare"),
    ]
    lines = [f"{'work':<42} {'request before':>15} {'request now':>12} {'ratio':>8} {'worker now':>11}"]
    for label, key in rows:
        was, now, worker = (figures[f"{key}_{part}_s"] for part in ("before", "request", "worker"))
        ratio = was / now if now > 0 else float("inf")
        lines.append(f"{label:<42} {was:>13.2f} s {now:>10.3f} s {ratio:>7.0f}x {worker:>9.2f} s")
    lines.append(f"a comparison's answer: {figures['compare_answer_bytes'] / 1024:.0f} KiB")
    return "\n".join(lines)
