"""Speed and size of the engine as one memory space grows, on SQLite and on PostgreSQL.

`manage.py bench_scale` is a thin front for `run_benchmark` and `run_role`. The work is spread over
processes so that each figure is measured where it belongs:

    the command                 for each database, a subprocess of itself with DATABASE_URL set to a
                                dedicated benchmark database; then prints the tables (and JSON)
    database run (role db)      migrates and empties the benchmark database, grows one space to each
                                size (1k -> 10k -> 100k pages), and at each size times storing a turn
                                (short_term.page_store), retrieval (retriever.retrieve, query embedding
                                and hit counting included; the first one in a cold index cache apart), and
                                retrieval right after a consolidation (a turn stored and moved to mid-term,
                                so the retrieval first catches its indexes up, as a web process does next
                                to a worker); counts bytes stored per page; it starts:
    web probe (role web)        a fresh process that opens the grown space, stores turns and retrieves:
                                its peak RSS is a web process's
    worker probe (role worker)  a fresh process that ingests a LoCoMo stream (services.ingest: each turn
                                stored, then consolidated) with the bundled offline LLM: throughput, LLM
                                calls and tokens per turn, its peak RSS

Growing a space is bulk work, not a replay of the updater: synthetic pages (synthetic_chat.py) go straight
into the mid-term tier with the fields the updater would have given them (continuity, thread summary,
keywords, embedding, one session per subject refreshed by mid_term.session_refresh, heat events), under
one vector version claimed with the space locked; then index.rebuild_space_indexes writes the FAISS files.
Page embeddings are cached under the work folder (by generator seed and page range), so the second
database and later runs skip the ~200 texts/s of MiniLM.
"""

import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from bench.latency import percentile
from bench.locomo_run import ingest_conversation
from bench.synthetic_chat import GENERATOR_VERSION, synthetic_pages, synthetic_queries
from memory_engine.config import memory_settings
from memory_engine.engine import long_term, mid_term, updater
from memory_engine.engine.heat import heat, heat_params, recency
from memory_engine.engine.retriever import retrieve
from memory_engine.engine.short_term import page_store
from memory_engine.engine.summaries import thread_summary
from memory_engine.engine.timing import STAGES, timed
from memory_engine.formats.locomo import load_samples
from memory_engine.language.keywords import extract_keywords
from memory_engine.language.reading import split_sentences
from memory_engine.llm import get_llm
from memory_engine.models import HeatEvent, LongTermEntry, MemorySpace, MidTermSession, Page, page_text
from memory_engine.services.ingest import IngestCounters, TurnIn, ingest_turn
from memory_engine.services.spaces import assistant_create, space_get, user_create
from memory_engine.store import index
from memory_engine.store.embeddings import from_bytes, get_embedder, model_label, to_bytes
from memory_engine.store.writes import space_write
from playground.databases import database_from_url

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DATABASES = ("sqlite", "postgres")
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/memoryos_bench"
DEFAULT_WORK_DIR = Path(settings.BASE_DIR) / "var" / "bench"

# Targets on a 2-core machine (the issue).
STORE_P95_TARGET_MS = 10.0
RETRIEVE_P95_TARGETS_MS = ((10_000, 30.0), (100_000, 60.0))  # (up to this many pages, p95 target)
LLM_CALLS_PER_TURN_TARGET = 1.2  # a reply call per turn plus consolidation, amortised
# "No growth" of storing a turn: the median at the largest size within 25% + 0.5 ms of the smallest's.
STORE_GROWTH_FACTOR, STORE_GROWTH_SLACK_MS = 1.25, 0.5

BENCH_USER, BENCH_ASSISTANT = "bench-scale", "bench-scale"
WORKER_USER, WORKER_ASSISTANT = "bench-consolidation", "bench-consolidation"
CONVERSATION_START = datetime(2020, 1, 1, tzinfo=UTC)
EMBED_CHUNK = 2048
INSERT_BATCH = 1000
USER_FACTS, ASSISTANT_FACTS = 100, 40
PROFILE = {
    "occupation": "I work as a nurse at the hospital downtown.",
    "location": "I live in a small apartment in Chicago.",
    "hometown": "I grew up in a small town by the lake.",
    "pets": "I have a dog named Biscuit and a cat named Luna.",
    "hobbies": "I love pottery and watercolor painting.",
    "family": "My sister is getting married and my brother just had a baby.",
    "goals": "My dream is to become a counselor.",
    "languages": "I'm learning Spanish and Japanese.",
    "health": "I've been dealing with back pain and migraines.",
    "likes": "I love cooking mushroom risotto for friends.",
}

Progress = Callable[[str], None]


@dataclass
class BenchOptions:
    sizes: list[int] = field(default_factory=lambda: list(DEFAULT_SIZES))
    store_samples: int = 200
    queries: int = 100
    web_probe_turns: int = 20
    consolidation_pages: int = 100
    locomo_sample: str | None = None  # None: the first sample of the LoCoMo dev file
    seed: int = 1
    work_dir: str = str(DEFAULT_WORK_DIR)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: str) -> "BenchOptions":
        return cls(**json.loads(raw))


# --- The command: one subprocess per database --------------------------------------------------------


def run_benchmark(*, databases: list[str], options: BenchOptions, postgres_url: str, progress: Progress) -> dict:
    """Run the benchmark on each database in a subprocess and return every figure with the machine.

    Creates the work folder, the SQLite file in it and the PostgreSQL database when missing; each run
    starts by emptying its benchmark database and index folder, so repeating it is safe. Never touches the
    configured database of this process.
    """
    work_dir = Path(options.work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    results = {
        "machine": machine_description(),
        "code": code_description(),
        "options": asdict(options),
        "databases": [],
    }
    for name in databases:
        url = f"sqlite:///{(work_dir / 'bench.sqlite3').resolve()}" if name == "sqlite" else postgres_url
        if name == "postgres":
            ensure_postgres_database(url)
        progress(f"== {name}: {redact(url)}")
        results["databases"].append(_run_child(name, url, options, work_dir))
    results["machine"]["load_average_end"] = list(os.getloadavg())
    results["seconds"] = round(time.time() - started, 1)
    return results


def _run_child(name: str, url: str, options: BenchOptions, work_dir: Path) -> dict:
    result_path = work_dir / f"result-{name}.json"
    result_path.unlink(missing_ok=True)
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "MEMORYOS_INDEX_DIR": str((work_dir / f"indexes-{name}").resolve()),
        # The consolidation figures are those of the bundled offline stack, whatever this shell points at.
        "MEMORYOS_LLM_PROVIDER": "offline",
        "MEMORYOS_LLM_BASE_URL": "",
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    command = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "bench_scale", "--role", "db"]
    command += ["--options-json", options.to_json(), "--result", str(result_path)]
    completed = subprocess.run(command, env=env, cwd=settings.BASE_DIR, stdout=subprocess.DEVNULL, check=False)
    if completed.returncode != 0 or not result_path.exists():
        raise RuntimeError(f"the {name} benchmark process failed (exit {completed.returncode}); see its output above")
    result = json.loads(result_path.read_text())
    result["database"] = name
    result["url"] = redact(url)
    return result


def ensure_postgres_database(url: str) -> None:
    """Create the PostgreSQL database of `url` if it does not exist. Safe to repeat."""
    from psycopg import sql

    name = _bench_database_name(url)
    with _server_connection(url) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def copy_postgres_database(source_url: str, target_url: str) -> None:
    """Make the database of `target_url` a fresh copy of that of `source_url` (dropped first if it is
    there), with PostgreSQL's file copy: seconds for a few GiB. Nobody may be connected to the source."""
    from psycopg import sql

    source, target = _bench_database_name(source_url), _bench_database_name(target_url)
    drop_postgres_database(target_url)
    with _server_connection(target_url) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
                sql.Identifier(target), sql.Identifier(source)
            )
        )


def drop_postgres_database(url: str) -> None:
    """Drop the database of `url` if it is there, closing its connections first."""
    from psycopg import sql

    name = _bench_database_name(url)
    with _server_connection(url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def url_with_database(url: str, name: str) -> str:
    """`url` with its database's name replaced by `name`. Pure."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def _bench_database_name(url: str) -> str:
    name = database_from_url(url)["NAME"]
    _require_bench_name(name)
    return name


@contextmanager
def _server_connection(url: str):
    """An autocommit connection to the `postgres` database of the server of `url`; a psycopg error
    becomes a RuntimeError that names the server."""
    import psycopg

    db = database_from_url(url)
    params = {"dbname": "postgres", "user": db["USER"], "host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432}
    if db["PASSWORD"]:
        params["password"] = db["PASSWORD"]
    try:
        with psycopg.connect(**params, autocommit=True) as conn:
            yield conn
    except psycopg.Error as exc:
        raise RuntimeError(f"cannot prepare the PostgreSQL benchmark database {redact(url)}: {exc}") from exc


def redact(url: str) -> str:
    return re.sub(r"//([^:/@]+):[^@/]*@", r"//\1:***@", url)


def machine_description() -> dict:
    mem_total = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "ram_bytes": mem_total,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "load_average_start": list(os.getloadavg()),
    }


def code_description() -> dict:
    """The commit measured, whether the working tree differed from it, and a digest of retriever.py (the
    ranking, which changes the retrieval figures most)."""
    import hashlib

    base = Path(settings.BASE_DIR)

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=base, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout.strip()

    retriever_file = base / "memory_engine" / "engine" / "retriever.py"
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "retriever_sha256": hashlib.sha256(retriever_file.read_bytes()).hexdigest()[:12],
    }


def peak_rss_bytes() -> int:
    """Peak resident memory of this process's address space (VmHWM; it is not inherited across exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --- Roles run in subprocesses -------------------------------------------------------------------------


def run_role(role: str, options: BenchOptions, result_path: Path, *, space_id: int | None, progress: Progress) -> None:
    """Run one subprocess role ("db", "web" or "worker") and write its figures to `result_path` as JSON."""
    if role == "db":
        result = database_run(options, progress=progress)
    elif role == "web":
        result = web_probe(options, space_id=space_id)
    elif role == "worker":
        result = worker_probe(options)
    else:
        raise ValueError(f"unknown role {role!r}")
    result_path.write_text(json.dumps(result, indent=2))


def _require_bench_name(name: object) -> None:
    if "bench" not in Path(str(name)).name:
        raise RuntimeError(f"refusing to empty database {name!r}: a benchmark database has 'bench' in its name")


def _spawn_probe(role: str, options: BenchOptions, *, space_id: int | None = None) -> dict:
    result_path = Path(options.work_dir) / f"probe-{role}-{os.getpid()}.json"
    result_path.unlink(missing_ok=True)
    command = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "bench_scale", "--role", role]
    command += ["--options-json", options.to_json(), "--result", str(result_path)]
    if space_id is not None:
        command += ["--space-id", str(space_id)]
    completed = subprocess.run(command, cwd=settings.BASE_DIR, stdout=subprocess.DEVNULL, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"the {role} probe failed (exit {completed.returncode})")
    result = json.loads(result_path.read_text())
    result_path.unlink()
    return result


def database_run(options: BenchOptions, *, progress: Progress) -> dict:
    """Empty the benchmark database (refused unless its name says 'bench'), grow one space to each size
    and measure there; then run the worker probe. Returns the figures."""
    db = connection.settings_dict
    _require_bench_name(db["NAME"])
    label = "sqlite" if connection.vendor == "sqlite" else "postgres"
    call_command("migrate", verbosity=0, interactive=False)
    call_command("flush", verbosity=0, interactive=False)
    index_root = Path(memory_settings().index_dir)
    if index_root.resolve().is_relative_to(Path(options.work_dir).resolve()):
        shutil.rmtree(index_root, ignore_errors=True)
    index.forget_all()

    progress(f"{label}: loading the embedding model")
    get_embedder()
    user_create(user_id=BENCH_USER)
    assistant_create(assistant_id=BENCH_ASSISTANT, name="Bench")
    space = space_get(user_id=BENCH_USER, assistant_id=BENCH_ASSISTANT)
    turns = [(p.user_input, p.agent_response) for p in synthetic_pages(options.seed + 1, options.store_samples + 5)]
    queries = synthetic_queries(options.seed + 2, options.queries + 1)
    followed = max(5, options.queries // 5)
    later_turns = [(p.user_input, p.agent_response) for p in synthetic_pages(options.seed + 5, followed)]
    sizes = []
    for target in sorted(options.sizes):
        growth = space_grow(space, target=target, options=options, progress=lambda m: progress(f"{label}: {m}"))
        gc.collect()
        progress(f"{label}: {target:,} pages: timing {options.store_samples} stores, {options.queries} retrievals")
        store_ms = measure_store(space, turns)
        first_ms, retrieve_ms, stage_ms = measure_retrieval(space, queries)
        progress(f"{label}: {target:,} pages: web probe")
        web = _spawn_probe("web", options, space_id=space.pk)
        db_bytes, index_bytes = stored_bytes(space)
        pages = Page.objects.filter(space=space).count()
        mid_term_pages = Page.objects.filter(space=space, tier=Page.Tier.MID).count()
        sessions = MidTermSession.objects.filter(space=space, status="active").count()
        progress(f"{label}: {target:,} pages: {followed} retrievals each after a consolidation")
        after_ms = measure_retrieval_after_consolidation(space, later_turns, queries[1 : followed + 1])
        sizes.append(
            {
                "pages": target,
                "pages_counted": pages,
                "mid_term_pages": mid_term_pages,
                "active_sessions": sessions,
                "grow_seconds": round(growth.seconds, 1),
                "texts_embedded": growth.embedded,
                "store_ms": summarize(store_ms),
                "retrieve_ms": summarize(retrieve_ms),
                "retrieve_stages_ms": {name: summarize(values) for name, values in stage_ms.items()},
                "retrieve_after_consolidation_ms": summarize(after_ms),
                "first_retrieve_ms": round(first_ms, 1),
                "web_peak_rss_bytes": web["peak_rss_bytes"],
                "web_first_retrieve_ms": web["first_retrieve_ms"],
                "db_bytes": db_bytes,
                "index_bytes": index_bytes,
                "bytes_per_page": round((db_bytes + index_bytes) / pages) if pages else 0,
            }
        )
    consolidation = None
    if options.consolidation_pages > 0:
        progress(f"{label}: worker probe ({options.consolidation_pages} LoCoMo pages, offline LLM)")
        consolidation = _spawn_probe("worker", options)
    return {
        "vendor": label,
        "server_version": _server_version(),
        "sizes": sizes,
        "consolidation": consolidation,
    }


def _server_version() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sqlite_version()" if connection.vendor == "sqlite" else "SHOW server_version")
        return str(cursor.fetchone()[0])


def summarize(values: list[float]) -> dict:
    return {
        "median": round(statistics.median(values), 3),
        "p95": round(percentile(values, 0.95), 3),
        "max": round(max(values), 3),
        "n": len(values),
    }


# --- Measurements -------------------------------------------------------------------------------------


def measure_store(space: MemorySpace, turns: list[tuple[str, str]]) -> list[float]:
    """Time page_store for each turn (the first few untimed, as warm-up), then delete all but the newest
    short-term capacity of the pages it stored, so that retrieval sees a normal short-term memory."""
    timings = []
    for i, (user_input, agent_response) in enumerate(turns):
        started = time.perf_counter()
        page_store(space=space, user_input=user_input, agent_response=agent_response)
        if i >= 5:
            timings.append((time.perf_counter() - started) * 1000)
    short = list(Page.objects.filter(space=space, tier=Page.Tier.SHORT).order_by("-seq").values_list("pk", flat=True))
    Page.objects.filter(pk__in=short[space.stm_capacity :]).delete()
    return timings


def measure_retrieval(space: MemorySpace, queries: list[str]) -> tuple[float, list[float], dict[str, list[float]]]:
    """The first retrieval in a cold index cache (FAISS files read, BM25 built from the database), then
    the time of each further query, with hit counting as in normal use, and of each of its stages
    (engine/timing.py; "other" is what no stage covers: budgeting, building the result)."""
    index.forget_space(space.pk)
    started = time.perf_counter()
    retrieve(space, queries[0])
    first = (time.perf_counter() - started) * 1000
    timings = []
    stages: dict[str, list[float]] = {name: [] for name in (*STAGES, "other")}
    for query in queries[1:]:
        with timed() as clock:
            started = time.perf_counter()
            retrieve(space, query)
            total = (time.perf_counter() - started) * 1000
        timings.append(total)
        for name in STAGES:
            stages[name].append(clock.seconds.get(name, 0.0) * 1000)
        stages["other"].append(total - sum(clock.seconds.values()) * 1000)
    return first, timings, stages


def measure_retrieval_after_consolidation(
    space: MemorySpace, turns: list[tuple[str, str]], queries: list[str]
) -> list[float]:
    """Each sample: a turn stored and consolidated (its short-term overflow moved into mid-term, without
    the LLM, as a worker would do), then one timed retrieval, which first catches the indexes up with the
    change. The moved pages stay in the space."""
    timings = []
    for (user_input, agent_response), query in zip(turns, queries, strict=False):
        ingest_turn(space, TurnIn(user_input, agent_response), IngestCounters(), promotion=False)
        started = time.perf_counter()
        retrieve(space, query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def stored_bytes(space: MemorySpace) -> tuple[int, int]:
    """(bytes of the engine's database tables and their indexes, bytes of the space's index files).

    The benchmark database holds only the benchmark's spaces, and this is measured before the worker
    probe adds its own: the tables are the space's.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT COALESCE(SUM(d.pgsize), 0) FROM dbstat d JOIN sqlite_master m ON m.name = d.name "
                "WHERE m.tbl_name LIKE 'memory_engine_%'"
            )
        else:
            cursor.execute(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND c.relname LIKE 'memory\\_engine\\_%%' AND n.nspname = current_schema()"
            )
        db_bytes = int(cursor.fetchone()[0])
    folder = index.index_dir(space.pk)
    index_bytes = sum(f.stat().st_size for f in folder.glob("*") if f.is_file()) if folder.exists() else 0
    return db_bytes, index_bytes


def web_probe(options: BenchOptions, *, space_id: int) -> dict:
    """A web process: load the model, open the space, store turns and retrieve; peak RSS. Deletes the
    pages it stored."""
    get_embedder()
    space = MemorySpace.objects.get(pk=space_id)
    queries = synthetic_queries(options.seed + 3, options.web_probe_turns + 1)
    turns = synthetic_pages(options.seed + 4, options.web_probe_turns)
    started = time.perf_counter()
    retrieve(space, queries[0])
    first = (time.perf_counter() - started) * 1000
    stored = []
    for turn, query in zip(turns, queries[1:], strict=True):
        stored.append(page_store(space=space, user_input=turn.user_input, agent_response=turn.agent_response).pk)
        retrieve(space, query)
    Page.objects.filter(pk__in=stored).delete()
    return {"peak_rss_bytes": peak_rss_bytes(), "first_retrieve_ms": round(first, 1)}


def worker_probe(options: BenchOptions) -> dict:
    """A worker process: ingest the first pages of a LoCoMo sample into a fresh space (services.ingest) with
    the offline LLM, as ingest_locomo does. Throughput, LLM cost, peak RSS."""
    samples = load_samples(memory_settings().locomo_file)
    sample = next((s for s in samples if options.locomo_sample in (None, s["sample_id"])), None)
    if sample is None:
        raise ValueError(f"no LoCoMo sample {options.locomo_sample!r}")
    get_embedder()
    llm = get_llm()
    _, _, stats = ingest_conversation(
        sample, user_id=WORKER_USER, assistant_id=WORKER_ASSISTANT, llm=llm, limit=options.consolidation_pages
    )
    return {
        "sample": sample["sample_id"],
        "llm": llm.name,
        "turns": stats.turns,
        "seconds": round(stats.seconds, 2),
        "turns_per_second": round(stats.turns / stats.seconds, 3) if stats.seconds else 0.0,
        "llm_calls": stats.llm_calls,
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "pages_moved": stats.pages_moved,
        "sessions_promoted": stats.sessions_promoted,
        "items_stored": stats.items_stored,
        "errors": stats.errors,
        "peak_rss_bytes": peak_rss_bytes(),
    }


# --- Growing a space ----------------------------------------------------------------------------------


@dataclass
class Growth:
    pages_added: int
    embedded: int  # texts embedded now, not taken from the cache
    seconds: float


def space_grow(
    space: MemorySpace,
    *,
    target: int,
    options: BenchOptions,
    progress: Progress,
    analyze: bool = True,
    index_files: bool = True,
) -> Growth:
    """Bulk-insert synthetic mid-term pages until the space holds `target` of them, with sessions,
    heat events and (the first time) long-term entries as the updater would have left them; delete the
    short-term pages left by measurements first; then rebuild the space's index files.

    Continues the synthetic stream from the synthetic pages already there (it is prefix-stable), so
    growing 1k -> 10k -> 100k adds 1k, 9k and 90k pages; pages that measurements consolidated into
    mid-term stay too. On PostgreSQL, ANALYZEs the database afterwards. Safe to repeat: a space already at
    `target` gets nothing more. `analyze=False` and `index_files=False` leave the ANALYZE and the index
    files to the caller (the multi-tenant benchmark grows a thousand spaces, then analyzes once).
    """
    started = time.perf_counter()
    Page.objects.filter(space=space, tier=Page.Tier.SHORT).delete()
    synthetic = Page.objects.filter(space=space, meta__has_key="topic")
    have = synthetic.count()
    if have >= target:
        return Growth(0, 0, time.perf_counter() - started)
    stream = synthetic_pages(options.seed, target)
    new = stream[have:]
    texts = [page_text(p.user_input, p.agent_response) for p in new]
    vectors, embedded = cached_embeddings(texts, start=have, options=options, progress=progress)

    progress(f"growing to {target:,} pages: preparing {len(new):,} pages")
    previous = synthetic.order_by("-seq").first()
    prev_thread = stream[have - 1].thread if have else -1
    dim = vectors.shape[1]
    prev_vector = from_bytes(previous.embedding, dim) if previous is not None else None
    prev_time = previous.timestamp if previous is not None else None
    thread = space.thread_summary
    rows = []  # (synthetic page, timestamp, continues, thread summary, keywords)
    for i, page in enumerate(new):
        when = CONVERSATION_START + timedelta(minutes=page.minutes)
        continues = (
            page.thread == prev_thread
            and prev_vector is not None
            and updater.continues_thread((when - prev_time).total_seconds(), float(np.dot(prev_vector, vectors[i])))
        )
        thread = thread_summary(thread if continues else "", texts[i])
        rows.append((page, when, continues, thread, extract_keywords([texts[i]], k=mid_term.PAGE_KEYWORDS)))
        prev_thread, prev_vector, prev_time = page.thread, vectors[i], when

    progress(f"growing to {target:,} pages: inserting")
    with space_write(space.pk) as write:
        locked = write.space
        version = write.version
        params = heat_params(locked)
        sessions = _sessions_by_topic(locked)
        for page, when, *_ in rows:
            if page.topic not in sessions:
                sessions[page.topic] = MidTermSession.objects.create(
                    space=locked,
                    summary="",
                    keywords=[],
                    embedding=to_bytes(np.zeros(dim, dtype=np.float32)),
                    last_visit_at=when,
                    vector_version=version,
                )
        objects = [
            Page(
                space=locked,
                seq=locked.last_seq + 1 + i,
                user_input=page.user_input,
                agent_response=page.agent_response,
                timestamp=when,
                meta={"topic": page.topic},
                tier=Page.Tier.MID,
                session=sessions[page.topic],
                continues_previous=continues,
                thread_summary=summary,
                keywords=keywords,
                embedding=to_bytes(vectors[i]),
                analyzed=True,
                vector_version=version,
            )
            for i, (page, when, continues, summary, keywords) in enumerate(rows)
        ]
        for start in range(0, len(objects), INSERT_BATCH):
            Page.objects.bulk_create(objects[start : start + INSERT_BATCH])
        locked.last_seq += len(objects)
        MemorySpace.objects.filter(pk=locked.pk).update(last_seq=locked.last_seq, thread_summary=thread)
        space.last_seq, space.thread_summary = locked.last_seq, thread
        _heat_history(locked, sessions, rows, params)
        progress(f"growing to {target:,} pages: refreshing sessions")
        touched = {page.topic for page, *_ in rows}
        for topic in sorted(touched):
            _session_settle(sessions[topic], rows, topic, params, version)
        if not LongTermEntry.objects.filter(space=locked).exists():
            _long_term_entries(locked, objects, version)
    if analyze and connection.vendor == "postgresql":
        # What autovacuum would have done by the time a space is this big (it is off on some servers,
        # e.g. these machines'): without statistics the planner scans every page of the space for the
        # retriever's page lookups (56 ms instead of 1.6 ms at 100k pages, measured).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    if not index_files:
        return Growth(len(new), embedded, time.perf_counter() - started)
    progress(f"growing to {target:,} pages: rebuilding index files")
    counts = index.rebuild_space_indexes(space)
    expected = Page.objects.filter(space=space, tier=Page.Tier.MID).count()
    if counts["pages"] != expected:
        raise RuntimeError(f"the pages index holds {counts['pages']} vectors, expected {expected}")
    return Growth(len(new), embedded, time.perf_counter() - started)


def _sessions_by_topic(space: MemorySpace) -> dict[str, MidTermSession]:
    found = {}
    for session in mid_term.active_sessions(space):
        meta = Page.objects.filter(session=session).values_list("meta", flat=True).first()
        if meta and "topic" in meta:
            found[meta["topic"]] = session
    return found


def _heat_history(space: MemorySpace, sessions: dict[str, MidTermSession], rows, params) -> None:
    """One heat event per thread placed, as the updater records one per segment: created or merged."""
    events, seen = [], set(HeatEvent.objects.filter(space=space).values_list("session_id", flat=True).distinct())
    by_thread: dict[int, list] = {}
    for row in rows:
        by_thread.setdefault(row[0].thread, []).append(row)
    for thread_rows in by_thread.values():
        session = sessions[thread_rows[0][0].topic]
        at = thread_rows[-1][1]
        since = max(0.0, (at - session.last_visit_at).total_seconds())
        value = heat(n_visit=0, l_interaction=len(thread_rows), seconds_since_visit=since, params=params)
        cause = HeatEvent.Cause.MERGED if session.pk in seen else HeatEvent.Cause.CREATED
        seen.add(session.pk)
        events.append(
            HeatEvent(
                space=space,
                session=session,
                at=at,
                cause=cause,
                heat=value,
                n_visit=0,
                l_interaction=len(thread_rows),
                recency=recency(since, params.mu_seconds),
            )
        )
    HeatEvent.objects.bulk_create(events, batch_size=INSERT_BATCH)


def _session_settle(session: MidTermSession, rows, topic: str, params, version: int) -> None:
    """Refresh a session's summary, keywords and embedding from its pages (mid_term.session_refresh), and
    leave it as after its last promotion: every page analysed, its last thread's pages not yet counted."""
    mid_term.session_refresh(session, version=version)
    last_thread = max(page.thread for page, *_ in rows if page.topic == topic)
    last = [row for row in rows if row[0].thread == last_thread]
    session.n_visit, session.l_interaction = 0, len(last)
    session.promoted_at = last[0][1]
    session.save(update_fields=["n_visit", "l_interaction", "promoted_at"])
    mid_term.record_heat(session, HeatEvent.Cause.MERGED, params, last[-1][1], mid_term.turn_of_session(session))


def _long_term_entries(space: MemorySpace, pages: list[Page], version: int) -> None:
    """A profile and a full knowledge store, from the user's and the assistant's own sentences."""
    now = pages[-1].timestamp
    for attribute, value in PROFILE.items():
        long_term.profile_set(
            space, attribute=attribute, value=value, pages=[pages[0]], cause="consolidation", actor="bench", now=now
        )
    for kind, side, wanted in (
        (LongTermEntry.Kind.USER_KNOWLEDGE, "user_input", USER_FACTS),
        (LongTermEntry.Kind.ASSISTANT_KNOWLEDGE, "agent_response", ASSISTANT_FACTS),
    ):
        facts, seen = [], set()
        for page in pages:
            for sentence in split_sentences(getattr(page, side)):
                if len(sentence) > 30 and sentence not in seen:
                    seen.add(sentence)
                    facts.append((page, sentence))
                    break
            if len(facts) >= wanted * 2:
                break
        vectors = get_embedder().encode([sentence for _, sentence in facts])
        for (page, sentence), vector in zip(facts, vectors, strict=True):
            long_term.knowledge_add(
                space,
                kind=kind,
                topic=page.meta["topic"].split("/")[1],
                fact=sentence,
                vector=vector,
                pages=[page],
                cause="consolidation",
                actor="bench",
                now=now,
                version=version,
                supersede=False,
            )
        long_term.knowledge_enforce_capacity(space, kind=kind, actor="bench", now=now, version=version)


def cached_embeddings(texts: list[str], *, start: int, options: BenchOptions, progress: Progress) -> tuple:
    """Embeddings of `texts`, the synthetic pages start .. start + len(texts) of the seed, and how many
    were embedded now. Read from any cached file whose range covers them (each text checked by CRC),
    otherwise embedded and cached as one new file (written atomically). The cache is keyed by generator
    seed and version and by the embedding model."""
    embedder = get_embedder()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", model_label(embedder)).strip("-")
    folder = Path(options.work_dir) / "embeddings" / f"seed{options.seed}-v{GENERATOR_VERSION}-{slug}"
    end = start + len(texts)
    crc = np.fromiter((zlib.crc32(t.encode()) for t in texts), dtype=np.uint32, count=len(texts))
    for path in sorted(folder.glob("*.npz")) if folder.exists() else []:
        match = re.fullmatch(r"(\d+)-(\d+)\.npz", path.name)
        if not match or not (int(match.group(1)) <= start and end <= int(match.group(2))):
            continue
        with np.load(path) as cached:
            offset = start - int(match.group(1))
            if np.array_equal(cached["crc"][offset : offset + len(texts)], crc):
                progress(f"embeddings of pages {start:,}-{end:,} from the cache ({path.name})")
                return np.ascontiguousarray(cached["vectors"][offset : offset + len(texts)]), 0
    chunks = []
    began = time.perf_counter()
    for first in range(0, len(texts), EMBED_CHUNK):
        chunks.append(embedder.encode(texts[first : first + EMBED_CHUNK]))
        done = first + len(chunks[-1])
        rate = done / (time.perf_counter() - began)
        progress(f"embedding pages {start:,}-{end:,}: {done:,}/{len(texts):,} ({rate:.0f}/s)")
    vectors = np.vstack(chunks) if chunks else np.zeros((0, embedder.dim), dtype=np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{start}-{end}.npz.tmp"
    with open(tmp, "wb") as handle:
        np.savez(handle, vectors=vectors, crc=crc)
    os.replace(tmp, folder / f"{start}-{end}.npz")
    return vectors, len(texts)


# --- Report ------------------------------------------------------------------------------------------


def retrieve_target_ms(pages: int) -> float | None:
    for limit, target in RETRIEVE_P95_TARGETS_MS:
        if pages <= limit:
            return target
    return None


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def _mib(value: int) -> str:
    return f"{value / 2**20:,.0f} MiB"


def render_report(results: dict) -> str:
    """The figures as plain-text tables, each next to its target, and a line of verdicts per database."""
    machine, options, code = results["machine"], results["options"], results.get("code", {})
    load = ", ".join(f"{x:.2f}" for x in machine["load_average_start"])
    end_load = ", ".join(f"{x:.2f}" for x in machine.get("load_average_end", []))
    lines = [
        f"MemoryOS scale benchmark: {machine['cores']} cores, {machine['ram_bytes'] / 2**30:.1f} GiB RAM, "
        f"Python {machine['python']}, {machine['platform']}",
        f"code: commit {code.get('commit') or '?'}{' + uncommitted changes' if code.get('uncommitted_changes') else ''}"
        f", retriever.py sha256 {code.get('retriever_sha256', '?')}; load average at start {load}, at end {end_load}",
        f"{options['store_samples']} stores and {options['queries']} retrievals per size; seed {options['seed']}",
        "",
        "Storing a turn (short_term.page_store) and retrieval (retriever.retrieve: query embedding, all tiers, "
        "hit counting); ms.",
        "'after consolidation': a turn stored and moved to mid-term, then the retrieval (index catch-up "
        "included); 'cold 1st': the first retrieval with no index in memory.",
        f"{'database':<9} {'pages':>8}  {'store med':>9} {'store p95':>9} {'target':>7}     "
        f"{'retr med':>8} {'retr p95':>8} {'target':>7}     {'after consolidation med/p95':>27} {'cold 1st':>8}",
    ]
    for db in results["databases"]:
        for size in db["sizes"]:
            store, retr, after = size["store_ms"], size["retrieve_ms"], size["retrieve_after_consolidation_ms"]
            target = retrieve_target_ms(size["pages"])
            retr_target = f"<={target:.0f}" if target else "-"
            retr_ok = _verdict(retr["p95"] <= target) if target else "  "
            lines.append(
                f"{db['database']:<9} {size['pages']:>8,}  {store['median']:>9.2f} {store['p95']:>9.2f} "
                f"{'<=' + format(STORE_P95_TARGET_MS, '.0f'):>7} {_verdict(store['p95'] <= STORE_P95_TARGET_MS):<4} "
                f"{retr['median']:>8.1f} {retr['p95']:>8.1f} {retr_target:>7} {retr_ok:<4} "
                f"{after['median']:>18.1f} / {after['p95']:>6.1f} {size['first_retrieve_ms']:>8.0f}"
            )
    lines += ["", "Where a retrieval's time goes: median / p95 of each stage, ms (engine/timing.py)"]
    stage_names = (*STAGES, "other")
    lines.append(f"{'database':<9} {'pages':>8}  " + " ".join(f"{name:>13}" for name in stage_names))
    for db in results["databases"]:
        for size in db["sizes"]:
            stages = size.get("retrieve_stages_ms")
            if stages:
                cells = " ".join(f"{stages[name]['median']:>6.2f}/{stages[name]['p95']:>6.2f}" for name in stage_names)
                lines.append(f"{db['database']:<9} {size['pages']:>8,}  {cells}")
    lines += [
        "",
        "Memory and disk",
        f"{'database':<9} {'pages':>8}  {'web peak RSS':>12} {'bytes/page':>10} {'database':>10} "
        f"{'index files':>11} {'sessions':>8} {'grow s':>7}",
    ]
    for db in results["databases"]:
        for size in db["sizes"]:
            lines.append(
                f"{db['database']:<9} {size['pages']:>8,}  {_mib(size['web_peak_rss_bytes']):>12} "
                f"{size['bytes_per_page']:>10,} {_mib(size['db_bytes']):>10} {_mib(size['index_bytes']):>11} "
                f"{size['active_sessions']:>8} {size['grow_seconds']:>7.0f}"
            )
    consolidations = [(db["database"], db["consolidation"]) for db in results["databases"] if db["consolidation"]]
    if consolidations:
        first = consolidations[0][1]
        lines += [
            "",
            f"Consolidation: ingestion (store, then consolidate) of the first {first['turns']} pages of LoCoMo "
            f"{first['sample']}, LLM {first['llm']}",
            f"{'database':<9} {'turns/s':>8} {'LLM calls':>9} {'per turn':>8} {'+1 reply':>8} {'target':>7}     "
            f"{'prompt tok/turn':>15} {'compl tok/turn':>14} {'worker peak RSS':>15} {'errors':>6}",
        ]
        for name, c in consolidations:
            per_turn = c["llm_calls"] / c["turns"] if c["turns"] else 0.0
            lines.append(
                f"{name:<9} {c['turns_per_second']:>8.2f} {c['llm_calls']:>9} {per_turn:>8.3f} {1 + per_turn:>8.3f} "
                f"{'<=' + str(LLM_CALLS_PER_TURN_TARGET):>7} {_verdict(1 + per_turn <= LLM_CALLS_PER_TURN_TARGET):<4} "
                f"{c['prompt_tokens'] / c['turns']:>15.1f} {c['completion_tokens'] / c['turns']:>14.1f} "
                f"{_mib(c['peak_rss_bytes']):>15} {len(c['errors']):>6}"
            )
    lines += ["", "Targets"]
    lines += [f"{db['database']}: {'; '.join(assess(db))}" for db in results["databases"]]
    return "\n".join(lines)


def assess(db: dict) -> list[str]:
    """One verdict per target for a database's figures."""
    sizes = sorted(db["sizes"], key=lambda s: s["pages"])
    verdicts = []
    if sizes:
        worst = max(s["store_ms"]["p95"] for s in sizes)
        ok = _verdict(worst <= STORE_P95_TARGET_MS)
        verdicts.append(f"store p95 <= {STORE_P95_TARGET_MS:.0f} ms: {ok} (worst {worst:.2f})")
    if len(sizes) > 1:
        small, large = sizes[0]["store_ms"]["median"], sizes[-1]["store_ms"]["median"]
        flat = large <= small * STORE_GROWTH_FACTOR + STORE_GROWTH_SLACK_MS
        verdicts.append(
            f"store no growth {sizes[0]['pages']:,} -> {sizes[-1]['pages']:,}: {_verdict(flat)} "
            f"(median {small:.2f} -> {large:.2f})"
        )
    for limit, target in RETRIEVE_P95_TARGETS_MS:
        at = [s for s in sizes if s["pages"] == limit]
        if at:
            p95 = at[0]["retrieve_ms"]["p95"]
            verdicts.append(f"retrieval p95 <= {target:.0f} ms at {limit:,}: {_verdict(p95 <= target)} ({p95:.1f})")
    c = db.get("consolidation")
    if c and c["turns"]:
        calls = 1 + c["llm_calls"] / c["turns"]
        verdicts.append(
            f"LLM calls per turn <= {LLM_CALLS_PER_TURN_TARGET}: {_verdict(calls <= LLM_CALLS_PER_TURN_TARGET)} "
            f"({calls:.3f} with the reply)"
        )
    return verdicts
