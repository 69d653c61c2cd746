"""How the assistant's replies read and what it remembers, per conversation set (see bench/chat_quality.py).

    manage.py bench_chat_quality                                   # both sets, the configured LLM
    manage.py bench_chat_quality --sets fresh --no-baseline --load # and replies while a worker promotes
    manage.py bench_chat_quality --models smollm2-135m gemma3-270m # offline models side by side
    manage.py bench_chat_quality --conversations 5 --no-baseline   # a quick run

Each set ("old": data/chat_quality.json, written with the reply path; "fresh": data/chat_fresh.json, written
afterwards by someone else) is run with memory (every turn through the reply path) and, unless
--no-baseline, without memory (each question asked of an empty space). With --load (or --load-only), a
last pass plays the set's first --load-conversations conversations again while a Celery worker (started
here, on the configured broker) imports LoCoMo conversations into spaces of its own, consolidating and
promoting after every turn; that pass stops when the imports end, and its replies give the p95 under
load. Sampling comes from the MEMORYOS_CHAT_* settings. Prints a markdown table (one column per run) and
writes every reply and every memory entry found unsupported to <out>/chat_quality.json. Run it on a
database of its own (it creates memory users named cq-... and bench-load-...), e.g.
DATABASE_URL=sqlite:///var/bench.sqlite3, after `manage.py migrate`.
"""

import os
import signal
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import chat_quality
from bench.worker import start_worker
from memory_engine.config import memory_settings
from memory_engine.jobs.tasks import run_import
from memory_engine.llm import get_llm, provider_name
from memory_engine.models import ImportJob
from memory_engine.services.imports import import_create, locomo_turns
from memory_engine.services.spaces import assistant_create, space_get, user_create

SETS = {"old": chat_quality.DATA, "fresh": chat_quality.FRESH}
LOAD_SAMPLES = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")


class Command(BaseCommand):
    help = "Replay scripted conversations through the reply path and measure the replies and the memory."

    def add_arguments(self, parser):
        parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS), help="conversation sets")
        parser.add_argument("--file", nargs="+", default=None, help="other sets of conversations (JSON), instead")
        parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
        parser.add_argument(
            "--models",
            nargs="*",
            default=None,
            help="offline models (smollm2-135m, gemma3-270m or .gguf paths); default: the configured LLM",
        )
        parser.add_argument("--no-baseline", action="store_true", help="skip the runs without memory")
        parser.add_argument("--load", action="store_true", help="also measure replies while a worker promotes")
        parser.add_argument("--load-only", action="store_true", help="only the pass under load")
        parser.add_argument(
            "--load-conversations", type=int, default=8, help="conversations played under load (its replies' times)"
        )
        parser.add_argument("--out", default="var/bench", help="folder for chat_quality.json")

    def handle(
        self, *args, sets, file, conversations, models, no_baseline, load, load_only, load_conversations, out, **options
    ):
        # Consolidation runs in this process, as a chat's worker would do it after each turn.
        settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": "inline"}
        chosen = {Path(name).stem: Path(name) for name in file} if file else {name: SETS[name] for name in sets}
        results = []
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        for model in models or [None]:
            if model is not None:
                settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "OFFLINE_LLM_MODEL": model}
            llm = get_llm()
            name = model or (memory_settings().offline_llm_model if provider_name() == "offline" else repr(llm))
            name = Path(name).stem if name.endswith(".gguf") else name
            for set_name, path in chosen.items():
                data = chat_quality.load_conversations(path, conversations)
                for memory in () if load_only else (True, False) if not no_baseline else (True,):
                    label = f"{name}, {set_name}, {'memory' if memory else 'no memory'}"
                    results.append(
                        chat_quality.run(data, llm=llm, label=label, memory=memory, progress=self.stderr.write)
                    )
                    chat_quality.write_json(results, folder / "chat_quality.json")  # a long run keeps each part
                if load or load_only:
                    label = f"{name}, {set_name}, under load"
                    results.append(self._under_load(data[:load_conversations], llm=llm, label=label))
                    chat_quality.write_json(results, folder / "chat_quality.json")
        sampling = {k: v for k, v in settings.MEMORYOS.items() if k.startswith("CHAT_")}
        self.stdout.write(f"sets {', '.join(chosen)}; sampling {sampling}\n")
        self.stdout.write(chat_quality.markdown(results) + "\n")

    def _under_load(self, data: list[dict], *, llm, label: str) -> chat_quality.RunResult:
        """The conversations played while a worker imports LoCoMo conversations, promoting as it goes: how
        fast replies come when a worker shares the machine. This process consolidates after each turn without
        promoting (the worker's promotions are the load), so the pass measures time, not memory."""
        assistant_create(assistant_id="bench-load", name="Load")
        stamp = str(int(time.time()))
        job_ids = []
        for sample in LOAD_SAMPLES:
            user_id = f"bench-load-{stamp}-{sample}"
            user_create(user_id=user_id)
            space = space_get(user_id=user_id, assistant_id="bench-load")
            job_ids.append(import_create(space=space, turns=locomo_turns(sample), source=f"locomo:{sample}").pk)
        worker = start_worker()
        try:
            for job_id in job_ids:
                run_import.delay(job_id)
            deadline = time.monotonic() + 300
            while not ImportJob.objects.filter(pk__in=job_ids, status=ImportJob.Status.RUNNING).exists():
                if time.monotonic() > deadline:
                    raise CommandError("the worker did not start the imports; see var/bench-worker.log")
                time.sleep(0.5)

            def busy() -> bool:
                return ImportJob.objects.filter(pk__in=job_ids, status=ImportJob.Status.RUNNING).exists()

            result = chat_quality.run(data, llm=llm, label=label, progress=self.stderr.write, load=busy, promote=False)
            done = ImportJob.objects.filter(pk__in=job_ids).values_list("done", flat=True)
            self.stderr.write(f"{label}: the worker stored {sum(done)} imported turns meanwhile")
            return result
        finally:
            ImportJob.objects.filter(pk__in=job_ids).update(status=ImportJob.Status.FAILED)
            # A warm shutdown would wait for the import under way, which would go on for an hour: kill it.
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(60)
