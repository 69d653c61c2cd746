"""How the assistant's replies read, per model and settings (see bench/chat_quality.py).

    manage.py bench_chat_quality                                   # the configured LLM, all conversations
    manage.py bench_chat_quality --models smollm2-135m gemma3-270m # offline models side by side
    manage.py bench_chat_quality --conversations 5 --no-baseline   # a quick run

Each model is run with memory (every turn through the reply path) and, unless --no-baseline, without
memory (each question asked of an empty space). Sampling comes from the MEMORYOS_CHAT_* settings.
Prints a markdown table (one column per run) and writes every reply to <out>/chat_quality.json.
Run it on a database of its own (it creates memory users named cq-...), e.g.
DATABASE_URL=sqlite:///var/bench.sqlite3, after `manage.py migrate`.
"""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from bench import chat_quality
from memory_engine.llm import get_llm, provider_name


class Command(BaseCommand):
    help = "Replay scripted conversations through the reply path and measure the replies."

    def add_arguments(self, parser):
        parser.add_argument("--file", default=str(chat_quality.DATA), help="the conversations (JSON)")
        parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
        parser.add_argument(
            "--models",
            nargs="*",
            default=None,
            help="offline models (smollm2-135m, gemma3-270m or .gguf paths); default: the configured LLM",
        )
        parser.add_argument("--no-baseline", action="store_true", help="skip the runs without memory")
        parser.add_argument("--out", default="var/bench", help="folder for chat_quality.json")

    def handle(self, *args, file, conversations, models, no_baseline, out, **options):
        # Consolidation runs in this process, as a chat's worker would do it after each turn.
        settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": "inline"}
        data = chat_quality.load_conversations(Path(file), conversations)
        results = []
        for model in models or [None]:
            if model is not None:
                settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "OFFLINE_LLM_MODEL": model}
            llm = get_llm()
            name = model or (settings.MEMORYOS["OFFLINE_LLM_MODEL"] if provider_name() == "offline" else repr(llm))
            name = Path(name).stem if name.endswith(".gguf") else name
            for memory in (True, False) if not no_baseline else (True,):
                label = f"{name}, {'memory' if memory else 'no memory'}"
                results.append(chat_quality.run(data, llm=llm, label=label, memory=memory, progress=self.stderr.write))
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        chat_quality.write_json(results, folder / "chat_quality.json")
        sampling = {k: v for k, v in settings.MEMORYOS.items() if k.startswith("CHAT_")}
        self.stdout.write(f"{len(data)} conversations; sampling {sampling}\n")
        self.stdout.write(chat_quality.markdown(results) + "\n")
