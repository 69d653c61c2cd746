"""Ingest a LoCoMo conversation through the real engine and report what it cost.

    manage.py ingest_locomo --sample conv-26 --report

speaker_a speaks as the user and speaker_b as the assistant (as the reference's evaluation did). Prints
progress, then: LLM calls and tokens per ingested page, the latency of storing a turn (the request
path) and of a whole add_memory with consolidation inline, and retrieval latency over the sample's
questions once everything is in; then a sample of the sessions, profile and knowledge it built.
"""

import sys
import time

from django.core.management.base import BaseCommand, CommandError

from memory_engine import index, long_term, updater
from memory_engine.latency import describe
from memory_engine.llm import get_llm
from memory_engine.locomo import DEV_FILE, iter_pages, load_samples
from memory_engine.memoryos import MemoryOS
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page
from memory_engine.retriever import retrieve
from memory_engine.short_term import page_store


class Command(BaseCommand):
    help = "Ingest a LoCoMo sample into a fresh memory space through the engine, with figures."

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(DEV_FILE), help="a LoCoMo JSON file")
        parser.add_argument("--sample", default=None, help="sample_id, e.g. conv-26 (default: the first)")
        parser.add_argument("--limit", type=int, default=None, help="ingest only the first N pages")
        parser.add_argument("--assistant", default="locomo", help="assistant id to use")
        parser.add_argument("--report", action="store_true", help="print figures and a sample of the memory")
        parser.add_argument("--keep", action="store_true", help="add to an existing space instead of replacing it")

    def handle(self, *args, file, sample, limit, assistant, report, keep, **options):
        samples = load_samples(file)
        chosen = next((s for s in samples if sample in (None, s["sample_id"])), None)
        if chosen is None:
            raise CommandError(f"no sample {sample!r} in {file}")
        conversation = chosen["conversation"]
        user_id = f"{chosen['sample_id']}-{conversation['speaker_a']}".lower()
        memory = MemoryOS(consolidate=False)
        memory.create_user(user_id, display_name=conversation["speaker_a"])
        memory.create_assistant(
            assistant, name=conversation["speaker_b"], persona=f"You are {conversation['speaker_b']}."
        )
        space = memory.space(user_id=user_id, assistant_id=assistant)
        if not keep and space.last_seq:
            self.stdout.write(f"replacing the existing space {space}")
            index.forget_space(space.pk, delete_files=True)
            space.delete()
            space = memory.space(user_id=user_id, assistant_id=assistant)

        pages = list(iter_pages(chosen))[:limit]
        llm = get_llm()
        usage_before = llm.usage()
        store_ms, add_ms, errors, rejected = [], [], [], 0
        for i, page in enumerate(pages, start=1):
            started = time.perf_counter()
            page_store(
                space=space,
                user_input=page.user_input,
                agent_response=page.agent_response,
                timestamp=page.timestamp,
                meta={"dia_ids": page.dia_ids},
            )
            stored = time.perf_counter()
            result = updater.consolidate(space, llm=llm)
            done = time.perf_counter()
            store_ms.append((stored - started) * 1000)
            add_ms.append((done - started) * 1000)
            errors += result.errors
            rejected += len(result.items_rejected)
            self.stderr.write(f"\ringested {i}/{len(pages)} pages", ending="")
            sys.stderr.flush()
        self.stderr.write("")
        usage = llm.usage()
        calls = usage.calls - usage_before.calls

        if not report:
            self.stdout.write(f"ingested {len(pages)} pages into {space}; {calls} LLM calls")
            return
        out = self.stdout.write
        self._show_memory(space)  # before the timing queries below add their hits to the heat
        questions = [qa["question"] for qa in chosen["qa"]]
        retrieve_ms = []
        for question in questions:
            started = time.perf_counter()
            retrieve(space, question)
            retrieve_ms.append((time.perf_counter() - started) * 1000)

        turns = sum(len(p.dia_ids) for p in pages)
        out(f"\n== {chosen['sample_id']}: {len(pages)} pages ({turns} dialogue turns) into {space}")
        out(f"LLM: {llm.name}")
        out(
            f"LLM calls: {calls} ({calls / len(pages):.3f} per page, {calls / turns:.3f} per dialogue turn), "
            f"prompt tokens "
            f"{usage.prompt_tokens - usage_before.prompt_tokens}, completion tokens "
            f"{usage.completion_tokens - usage_before.completion_tokens}"
        )
        out(f"store a turn (request path):            {describe(store_ms)}")
        out(f"add_memory with inline consolidation:   {describe(add_ms)}")
        out(f"retrieval at the end ({len(questions)} questions): {describe(retrieve_ms)}")
        out(f"extracted items rejected by validation: {rejected}; consolidation errors: {len(errors)}")
        for error in errors[:5]:
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
