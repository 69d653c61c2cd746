"""Ingest a LoCoMo conversation through the real engine and report what it cost.

    manage.py ingest_locomo --sample conv-26 --report

speaker_a speaks as the user and speaker_b as the assistant (as the reference's evaluation did). Prints
progress, then: LLM calls and tokens per ingested page, the latency of storing a turn (the request
path) and of a whole add_memory with consolidation inline, and retrieval latency over the sample's
questions once everything is in; then a sample of the sessions, profile and knowledge it built.
"""

import time

from django.core.management.base import BaseCommand, CommandError

from bench.latency import describe
from bench.locomo_run import ingest_conversation
from bench.progress import ProgressBar
from memory_engine.config import memory_settings
from memory_engine.engine import long_term
from memory_engine.engine.retriever import retrieve
from memory_engine.formats.locomo import load_samples
from memory_engine.llm import get_llm
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page


class Command(BaseCommand):
    help = (
        "Ingest a LoCoMo sample into a fresh memory space (replacing an earlier one) through the engine, with figures."
    )

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(memory_settings().locomo_file), help="a LoCoMo JSON file")
        parser.add_argument("--sample", default=None, help="sample_id, e.g. conv-26 (default: the first)")
        parser.add_argument("--limit", type=int, default=None, help="ingest only the first N pages")
        parser.add_argument("--assistant", default="locomo", help="assistant id to use")
        parser.add_argument("--report", action="store_true", help="print figures and a sample of the memory")

    def handle(self, *args, file, sample, limit, assistant, report, **options):
        try:
            samples = load_samples(file)
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot read LoCoMo samples from {file}: {error}") from error
        chosen = next((s for s in samples if sample in (None, s["sample_id"])), None)
        if chosen is None:
            raise CommandError(f"no sample {sample!r} in {file}")
        user_id = f"{chosen['sample_id']}-{chosen['conversation']['speaker_a']}".lower()
        llm = get_llm()
        space, pages, stats = ingest_conversation(
            chosen,
            user_id=user_id,
            assistant_id=assistant,
            llm=llm,
            limit=limit,
            chunk_turns=1,  # what a turn costs a chat: stored, then consolidated, one at a time
            progress=ProgressBar(self.stderr),
        )
        if not report:
            self.stdout.write(f"ingested {stats.turns} pages into {space}; {stats.llm_calls} LLM calls")
            return
        out = self.stdout.write
        self._show_memory(space)  # before the timing queries below add their hits to the heat
        questions = [qa["question"] for qa in chosen["qa"]]
        retrieve_ms = []
        for question in questions:
            started = time.perf_counter()
            retrieve(space, question)
            retrieve_ms.append((time.perf_counter() - started) * 1000)

        dialogue_turns = sum(len(page.dia_ids) for page in pages)
        out(f"\n== {chosen['sample_id']}: {stats.turns} pages ({dialogue_turns} dialogue turns) into {space}")
        out(f"LLM: {llm.name}")
        out(
            f"LLM calls: {stats.llm_calls} ({stats.llm_calls / stats.turns:.3f} per page, "
            f"{stats.llm_calls / dialogue_turns:.3f} per dialogue turn), prompt tokens {stats.prompt_tokens}, "
            f"completion tokens {stats.completion_tokens}"
        )
        out(f"store a turn (request path):            {describe(stats.store_ms)}")
        out(f"add_memory with inline consolidation:   {describe(stats.add_ms)}")
        out(f"retrieval at the end ({len(questions)} questions): {describe(retrieve_ms)}")
        out(
            f"extracted items rejected by validation: {stats.items_rejected}; consolidation errors: {len(stats.errors)}"
        )
        for error in stats.errors[:5]:
            out(f"  error: {error}")

    def _show_memory(self, space: MemorySpace) -> None:
        out = self.stdout.write
        tiers = {t: Page.objects.filter(space=space, tier=t).count() for t in Page.Tier.values}
        sessions = MidTermSession.objects.filter(space=space, status="active").order_by("-heat")
        out(f"\ntiers: {tiers}; active sessions: {sessions.count()}")
        for session in sessions[:5]:
            out(
                f"- session {session.pk} heat {session.heat:.2f}, {session.pages.count()} pages, "
                f"keywords {session.keywords[:6]}\n    {session.summary}"
            )
        out("\nprofile:")
        for attribute, value in long_term.user_profile(space).items():
            out(f"- {attribute}: {value}")
        for kind in (LongTermEntry.Kind.USER_KNOWLEDGE, LongTermEntry.Kind.ASSISTANT_KNOWLEDGE):
            entries = list(long_term.knowledge_entries(space, kind))
            out(f"\n{kind} ({len(entries)} active):")
            for entry in entries[:12]:
                seqs = sorted(entry.source_pages.values_list("seq", flat=True))
                out(f"- [{entry.key}] {entry.value}  (pages {seqs})")
