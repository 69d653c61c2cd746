"""Request latency of a chat turn, with consolidation on and off the request path, side by side.

    manage.py bench_chat --turns 30

Replays the user's lines of a LoCoMo conversation through get_response twice, into two fresh spaces:
once with consolidation inline (the request waits for it, as the reference did) and once with
consolidation in a Celery worker (which this command starts on the configured broker and stops).
Each request is timed from the call to the stored reply. Uses the configured LLM (offline by default).
"""

import os
import signal
import statistics
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench.latency import describe, percentile
from bench.worker import start_worker
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import iter_pages, load_samples
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.llm import get_llm
from memory_engine.models import ConsolidationRun, MemorySpace
from memory_engine.services.consolidation import has_pending_work
from memory_engine.store import index
from memory_engine.store.embeddings import get_embedder


class Command(BaseCommand):
    help = "Time chat turns with consolidation inline and in a Celery worker, side by side."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=30)
        parser.add_argument("--sample", default="conv-30")
        parser.add_argument("--stm-capacity", type=int, default=3, help="small, so consolidation happens often")

    def handle(self, *args, turns, sample, stm_capacity, **options):
        chosen = next((s for s in load_samples(memory_settings().locomo_file) if s["sample_id"] == sample), None)
        if chosen is None:
            raise CommandError(f"no sample {sample!r}")
        queries = [p.user_input for p in iter_pages(chosen) if p.user_input][:turns]
        get_embedder(), get_llm()  # a web process has both loaded before its first request
        memory = MemoryOS()
        memory.create_user("bench-user")
        results = {}
        for mode in ("inline", "celery"):
            assistant = f"bench-{mode}"
            memory.create_assistant(assistant, name="Bench")
            space = memory.space(user_id="bench-user", assistant_id=assistant)
            if space.last_seq:  # left by an earlier run: start fresh
                index.forget_space(space.pk, delete_files=True)
                space.delete()
                space = memory.space(user_id="bench-user", assistant_id=assistant)
            MemorySpace.objects.filter(pk=space.pk).update(stm_capacity=stm_capacity, heat_threshold=3.5)
            settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": mode}
            worker = start_worker() if mode == "celery" else None
            try:
                timings = []
                for i, query in enumerate(queries, start=1):
                    started = time.perf_counter()
                    memory.get_response(user_id="bench-user", assistant_id=assistant, query=query)
                    timings.append((time.perf_counter() - started) * 1000)
                    self.stderr.write(f"\r{mode}: {i}/{len(queries)} turns", ending="")
                self.stderr.write("")
                if worker:
                    self._wait_settled(space)
            finally:
                if worker:
                    os.killpg(worker.pid, signal.SIGTERM)
                    worker.wait(30)
            runs = ConsolidationRun.objects.filter(space=space)
            results[mode] = (timings, sum(r.llm_calls for r in runs), runs.count())

        out = self.stdout.write
        out(f"\nchat turns: {len(queries)} per mode, LLM: {get_llm().name}, short-term capacity {stm_capacity}")
        for mode, (timings, calls, count) in results.items():
            out(f"consolidation {mode:6s}: {describe(timings)}; {count} consolidation runs, {calls} LLM calls in them")
        inline, celery = results["inline"][0], results["celery"][0]
        out(
            f"ratio inline/celery: median {statistics.median(inline) / statistics.median(celery):.2f}x, "
            f"p95 {percentile(inline, 0.95) / percentile(celery, 0.95):.2f}x"
        )

    def _wait_settled(self, space: MemorySpace, timeout: float = 900) -> None:
        deadline = time.monotonic() + timeout
        while has_pending_work(space) or ConsolidationRun.objects.filter(space=space, status="running").exists():
            if time.monotonic() > deadline:
                raise CommandError("the worker did not finish consolidating in time")
            time.sleep(1)
