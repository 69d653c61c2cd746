"""What importing a large file costs: a generated ChatGPT export of each size, taken by the web
process's part (the body streamed to disk, as POST .../imports/files/ does, then checked whole and listed
as a worker has it done: services/uploads.upload_receive, services/background.background_run) and by the
worker's, each in a fresh process of its own, so that its peak memory is its own. The worker's part is
measured three ways, side by side:

- "embedder": the embedding model alone on the export's turns (the text each page is embedded by,
  models.page_text), EMBEDDER_SAMPLE of them spread through the file, in one encode (both cores): the
  physical bound of this machine for any path that embeds each turn once;
- "bulk": every turn of the file imported as a worker does (services/imports.import_run: chunks of
  MEMORYOS_INGEST_CHUNK_TURNS, each stored in one transaction and consolidated in one pass), the import
  ending consolidated;
- "turn by turn": the first `store_turns` turns' conversations imported a turn at a time
  (MEMORYOS_INGEST_CHUNK_TURNS=1: each stored, embedded and consolidated alone, as before the bulk path).

The export is synthetic (bench/synthetic_chat.py's pages as messages, 20 messages a conversation, every
fifth conversation with an edited message: a branch), written from its format's public description. The
space has the default parameters and the bundled model's class of LLM (offline, weak): promotion keeps the
person's own statements without asking a model (engine/long_term.extraction_from_words), so what is timed
is reading, storing, embedding, consolidating into sessions and promoting.
"""

import json
import logging
import os
import resource
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from bench.synthetic_chat import synthetic_pages

MESSAGES_A_CONVERSATION = 20
START = 1_700_000_000.0  # 2023-11-14, seconds since 1970
ROOT = Path(__file__).resolve().parent.parent


def _node(key: str, parent: str | None, children: list[str], role: str | None, text: str, at: float) -> dict:
    message = None
    if role:
        message = {
            "id": f"m-{key}",
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": {},
            "recipient": "all",
        }
    return {"id": key, "message": message, "parent": parent, "children": children}


def _conversation(number: int, pages: list, at: float) -> dict:
    mapping = {f"c{number}-root": _node(f"c{number}-root", None, [], None, "", at)}
    parent = f"c{number}-root"
    for i, page in enumerate(pages):
        for side, (role, text) in enumerate((("user", page.user_input), ("assistant", page.agent_response))):
            key = f"c{number}-{2 * i + side}"
            mapping[parent]["children"].append(key)
            mapping[key] = _node(key, parent, [], role, text, at + 60 * (2 * i + side))
            parent = key
    if number % 5 == 0 and len(pages) > 1:  # an edited first message: its old branch left behind
        old = f"c{number}-old"
        mapping[old] = _node(old, f"c{number}-root", [], "user", "an earlier wording, edited since", at)
        mapping[f"c{number}-root"]["children"].insert(0, old)
    return {
        "title": f"Synthetic conversation {number}",
        "create_time": at,
        "update_time": at + 60 * 2 * len(pages),
        "mapping": mapping,
        "current_node": parent,
        "conversation_id": f"conv-{number}",
        "id": f"conv-{number}",
    }


def write_export(path: Path, megabytes: float, seed: int = 11) -> dict:
    """A ChatGPT export of about `megabytes` at `path`, written a conversation at a time; returns its
    conversations, turns and bytes."""
    target = int(megabytes * 1024 * 1024)
    pages_each = MESSAGES_A_CONVERSATION // 2
    pool = synthetic_pages(seed, 2000)
    conversations = turns = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while out.tell() < target:
            first = (conversations * pages_each) % (len(pool) - pages_each)
            chunk = pool[first : first + pages_each]
            out.write(
                ("," if conversations else "")
                + json.dumps(_conversation(conversations, chunk, START + 3600 * conversations))
            )
            conversations += 1
            turns += len(chunk)
        out.write("]")
    return {"conversations": conversations, "turns": turns, "bytes": path.stat().st_size}


def rss_mib() -> float:
    """This process's resident memory now (Linux: /proc/self/statm, in pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 1024 / 1024


class PeakRss:
    """The highest resident memory seen while the block runs, sampled every 20 ms by a thread (ru_maxrss
    would report the model's load, before the part began)."""

    def __enter__(self):
        self.peak, self._stop = rss_mib(), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mib())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mib())


EMBEDDER_SAMPLE = 2000  # turns the embedder alone encodes: its rate, without encoding a 50 MB export twice


def run_role(role: str, *, file: str, store_turns: int, result: str) -> None:
    """One part in this (fresh) process: "web" uploads the file; "embedder", "bulk" and "turn" are the
    worker's three measures (the module docstring); writes seconds, turns and memory (before, and the peak
    during) to `result`."""
    from memory_engine.store.embeddings import get_embedder

    get_embedder().encode_one("warm up")  # the model's own memory, before the part's
    before = rss_mib()
    began = time.perf_counter()
    parts = {
        "web": lambda: _web(file),
        "embedder": _embedder,
        "bulk": lambda: _worker(None),
        "turn": lambda: _worker(store_turns),
    }
    with PeakRss() as peak:
        figures = parts[role]()
    seconds = figures.pop("seconds", None) or time.perf_counter() - began
    figures |= {"seconds": round(seconds, 2), "peak_mib": round(peak.peak, 1), "before_mib": round(before, 1)}
    Path(result).write_text(json.dumps(figures))


def _web(file: str) -> dict:
    """What POST .../imports/files/ does with the body: into a throwaway space whose heat threshold is out
    of reach (no promotion, so no LLM call in the worker's part)."""
    from memory_engine.services.background import background_run
    from memory_engine.services.spaces import assistant_create, space_get, user_create
    from memory_engine.services.uploads import upload_receive

    user = user_create(user_id=f"bench-import-{uuid.uuid4().hex[:8]}", display_name="Bench")
    assistant_create(assistant_id="bench-import", name="Helper")
    space = space_get(user_id=user.external_id, assistant_id="bench-import")
    space.heat_threshold = 10**9
    space.save(update_fields=["heat_threshold"])
    # The file is checked in a process of its own (memory_engine/file_check.py), whose peak it logs.
    logged = _Logged()
    logging.getLogger("memory_engine.services.uploads").addHandler(logged)
    with open(file, "rb") as body:
        upload, job = upload_receive(space=space, chunks=iter(lambda: body.read(1 << 16), b""), name=Path(file).name)
    background_run(job.pk)  # the check, as a worker has it done, here to the end
    upload.refresh_from_db()
    peaks = [float(m.rsplit("peak ", 1)[1].split()[0]) for m in logged.messages if "peak " in m]
    check_peak = max(peaks, default=0.0)
    return {
        "upload": upload.pk,
        "conversations": upload.conversation_count,
        "turns": upload.turns,
        "check_peak_mib": round(check_peak, 1),
    }


class _Logged(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _upload_space():
    """The newest upload and a space of its own to import it into (the web part's was used to list it)."""
    from memory_engine.models import ImportUpload
    from memory_engine.services.spaces import space_get, user_create

    upload = ImportUpload.objects.select_related("space").order_by("-pk").first()
    user = user_create(user_id=f"bench-import-{uuid.uuid4().hex[:8]}", display_name="Bench")
    return upload, space_get(user_id=user.external_id, assistant_id="bench-import")


def _embedder() -> dict:
    """The embedding model alone on EMBEDDER_SAMPLE turns of the newest upload, spread through it."""
    from memory_engine.models import page_text
    from memory_engine.services.imports import upload_turns
    from memory_engine.store.embeddings import get_embedder

    upload, _ = _upload_space()
    texts = [page_text(turn.user_input, turn.agent_response) for turn in upload_turns(upload)]
    step = max(1, len(texts) // EMBEDDER_SAMPLE)
    sample = texts[::step][:EMBEDDER_SAMPLE]
    began = time.perf_counter()
    get_embedder().encode(sample)
    return {"turns": len(sample), "seconds": time.perf_counter() - began}


class _EmbeddingTime:
    """The seconds this process spends in the embedder and the texts it embeds (pages, facts, session
    summaries), counted around its two methods: how much of a part is embedding, and how much the rest."""

    def __init__(self) -> None:
        from memory_engine.store.embeddings import get_embedder

        self.seconds, self.texts, embedder = 0.0, 0, get_embedder()
        many, one = embedder.encode, embedder.encode_one

        def encode(texts):
            began = time.perf_counter()
            try:
                return many(texts)
            finally:
                self.seconds, self.texts = self.seconds + time.perf_counter() - began, self.texts + len(texts)

        def encode_one(text):
            began = time.perf_counter()
            try:
                return one(text)
            finally:
                self.seconds, self.texts = self.seconds + time.perf_counter() - began, self.texts + 1

        embedder.encode, embedder.encode_one = encode, encode_one


def _worker(store_turns: int | None) -> dict:
    """The newest upload imported as a worker does, into a space of its own: every conversation (None), or
    the first conversations up to `store_turns` turns, a turn at a time."""
    from memory_engine.models import LongTermEntry, MidTermSession, Page
    from memory_engine.services.imports import import_run, upload_import_create

    upload, space = _upload_space()
    upload.space = space
    upload.save(update_fields=["space"])
    chosen, total = [], 0
    for key, turns in upload.conversations.order_by("place").values_list("key", "turns"):
        if store_turns is not None and total >= store_turns:
            break
        chosen.append(key)
        total += turns
    job = upload_import_create(upload=upload, chosen=chosen)
    embedding = _EmbeddingTime()
    import_run(job.pk)
    job.refresh_from_db()
    return {
        "embedding_seconds": round(embedding.seconds, 2),
        "embedded_texts": embedding.texts,
        "turns": job.done,
        "status": job.status,
        "error": job.error,
        "short_term": Page.objects.filter(space=space, tier=Page.Tier.SHORT).count(),
        "sessions": MidTermSession.objects.filter(space=space).count(),
        "entries": LongTermEntry.objects.filter(space=space, status=LongTermEntry.Status.ACTIVE).count(),
    }


def _part(role: str, env: dict, work: Path, file: Path, store_turns: int) -> dict:
    result = work / f"{role}-{uuid.uuid4().hex[:6]}.json"
    command = [sys.executable, "manage.py", "bench_import", "--role", role, "--file", str(file)]
    command += ["--store-turns", str(store_turns), "--result", str(result)]
    subprocess.run(command, env=env, check=True, cwd=ROOT)
    return json.loads(result.read_text())


def measure(*, sizes_mb: list[float], store_turns: int, work_dir: str, progress=print) -> list[dict]:
    """For each size: the export written, then the web part and the worker's three measures each in a
    process of its own, on a SQLite database and index folder of their own under `work_dir`."""
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}",
        "MEMORYOS_INDEX_DIR": str(work / "indexes"),
        "MEMORYOS_IMPORT_DIR": str(work / "imports"),
        "MEMORYOS_CONSOLIDATION": "inline",
        "MEMORYOS_MAX_IMPORT_BYTES": str(10**11),
        "MEMORYOS_LLM_PROVIDER": "offline",
        "MEMORYOS_LLM_BASE_URL": "",
        "DEBUG": os.environ.get("DEBUG", "true"),
    }
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    rows = []
    for size in sizes_mb:
        file = work / f"export-{size:g}mb.json"
        progress(f"writing a {size:g} MB ChatGPT export")
        made = write_export(file, size)
        progress(f"web part: {file.name}")
        row = {"size_mb": size, "file": made, "web": _part("web", env, work, file, store_turns)}
        progress(f"the embedder alone: {EMBEDDER_SAMPLE} of its turns")
        row["embedder"] = _part("embedder", env, work, file, store_turns)
        progress(f"turn by turn: the first {store_turns} turns")
        row["turn"] = _part("turn", {**env, "MEMORYOS_INGEST_CHUNK_TURNS": "1"}, work, file, store_turns)
        progress(f"bulk: all {made['turns']} turns")
        row["bulk"] = _part("bulk", env, work, file, store_turns)
        rows.append(row)
    return rows


def _rate(part: dict) -> float:
    return part["turns"] / part["seconds"] if part["seconds"] else 0.0


def table(rows: list[dict]) -> str:
    lines = [
        "| export | conversations / turns | web: check and list | web peak RSS (before) | its check's peak RSS |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        web, made = row["web"], row["file"]
        lines.append(
            f"| {made['bytes'] / 1024 / 1024:.1f} MB | {made['conversations']:,} / {made['turns']:,} | "
            f"{web['seconds']:.1f} s ({made['bytes'] / 1024 / 1024 / max(web['seconds'], 1e-9):.1f} MB/s) | "
            f"{web['peak_mib']:.0f} MiB ({web['before_mib']:.0f}) | {web.get('check_peak_mib', 0):.0f} MiB |"
        )
    lines += [
        "",
        "| export | worker | turns | seconds | turns a second | x the embedder's | of which embedding: s (texts) | "
        "peak RSS (before) | left in short-term / sessions / entries |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        bound = _rate(row["embedder"])
        for name, label in (("embedder", "the embedder alone"), ("bulk", "bulk"), ("turn", "turn by turn")):
            part = row[name]
            made = "" if name == "embedder" else f"{part['short_term']} / {part['sessions']:,} / {part['entries']:,}"
            embedded = part["seconds"], part["turns"]
            if name != "embedder":
                embedded = part["embedding_seconds"], part["embedded_texts"]
            rate, memory = _rate(part), f"{part['peak_mib']:.0f} MiB ({part['before_mib']:.0f})"
            lines.append(
                f"| {row['size_mb']:g} MB | {label} | {part['turns']:,} | {part['seconds']:.1f} | {rate:.1f} | "
                f"{bound / max(rate, 1e-9):.2f} | {embedded[0]:.1f} ({embedded[1]:,}) | {memory} | {made} |"
            )
    return "\n".join(lines)
