"""Many users at once: the production stack under a multi-tenant load, driven by Locust.

    manage.py bench_tenants                                  # 1,000 spaces, 1/4/16 clients, bounded and not
    manage.py bench_tenants --spaces 100 --seconds 20 --clients 1 4

1. **Population** (once; kept for the next run with the same options): N memory spaces in a benchmark
   PostgreSQL database (its name must contain "bench"), sizes drawn from a long-tailed (log-normal)
   distribution up to --max-pages, the largest few at the maximum. Every space holds a prefix of the same
   synthetic conversation (bench/synthetic_chat.py), so its embeddings are computed once and cached.
   Every space's index files are then written once, as a deployment's index volumes hold them.
2. **Runs.** For each cache setting (the bound of --cache-mb, then no bound) and each client count, a fresh
   copy of the population's database (PostgreSQL's file copy; so no run retrieves over an earlier run's
   turns, and each run's turns are counted on their own) and a fresh stack through the production
   entrypoint (`scripts/serve web` with gunicorn and --web-workers, a Celery worker and a private Redis, an
   OpenAI-compatible fake LLM on 127.0.0.1), its index folders a copy of the population's files; a warm-up
   Locust run, then the measured one: closed-loop clients (no think
   time) choosing spaces by a Zipf law over a shuffled order, 70% retrievals, 20% stored turns, 10% chat
   replies.
3. **Cold loads next to warm traffic** (bounded cache): warm clients on the most popular spaces alone,
   then the same with one client loading large spaces never touched before, one after another; the
   warm requests' p99 of the two phases side by side.

Throughout, the resident memory of every web and worker process is sampled each second (plotted to
--plot), each web process's index cache is read from /ops/process/ (a staff account), and after each run
the pages its copy holds beyond the population are counted against the turns the server accepted. Figures
print as tables and go to --json.
"""

import csv
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from django.db import connection

from bench.fake_llm_server import FakeLLMServer, nothing_extracted, reply
from bench.processes import RedisServer, Role, free_port, healthy, wait_until
from bench.scale import (
    BenchOptions,
    cached_embeddings,
    copy_postgres_database,
    drop_postgres_database,
    ensure_postgres_database,
    machine_description,
    redact,
    space_grow,
    url_with_database,
)
from bench.synthetic_chat import synthetic_pages, synthetic_queries
from memory_engine.config import memory_settings
from memory_engine.models import Page, page_text
from playground.databases import database_from_url

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/memoryos_bench_tenants"
DEFAULT_WORK_DIR = ROOT / "var" / "bench-tenants"
ASSISTANT = "helper"
MIX = {"retrieve": 70, "store turn": 20, "chat": 10}


@dataclass
class TenantOptions:
    spaces: int = 1000
    max_pages: int = 10_000
    median_pages: int = 100
    largest_at_max: int = 3  # spaces forced to --max-pages, so the tail is there whatever the draw
    clients: list[int] = field(default_factory=lambda: [1, 4, 16])
    seconds: int = 60
    warmup_seconds: int = 20
    cache_mb: float = 1024.0
    web_workers: int = 2
    zipf_s: float = 1.1
    seed: int = 1
    work_dir: str = str(DEFAULT_WORK_DIR)
    postgres_url: str = DEFAULT_POSTGRES_URL

    def population_key(self) -> str:
        return f"spaces={self.spaces} max={self.max_pages} median={self.median_pages} seed={self.seed}"


def space_sizes(options: TenantOptions) -> list[int]:
    """Pages of each space: log-normal around the median (sigma 1.5), at least 10, at most the maximum,
    the largest few set to the maximum. Pure."""
    rng = random.Random(options.seed)
    sizes = [
        max(10, min(options.max_pages, int(rng.lognormvariate(math.log(options.median_pages), 1.5))))
        for _ in range(options.spaces)
    ]
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i])[: options.largest_at_max]:
        sizes[i] = options.max_pages
    return sizes


def zipf_weights(count: int, s: float, seed: int) -> list[float]:
    """Access weight of each space: 1 / rank^s, the ranks shuffled so popularity is not size. Pure."""
    ranks = list(range(1, count + 1))
    random.Random(seed + 7).shuffle(ranks)
    return [1 / rank**s for rank in ranks]


# --- Population (in a child process on the benchmark database) ---------------------------------------


def populate(options: TenantOptions, progress) -> dict:
    """Fill the benchmark database with the spaces (unless it holds this population already) and make a
    fresh API token for each; returns the plan the load runs read."""
    from django.core.management import call_command

    from memory_engine.models import ApiToken, MemoryUser
    from memory_engine.services.spaces import assistant_create, space_get, user_create
    from memory_engine.services.tokens import token_create

    if "bench" not in connection.settings_dict["NAME"]:
        raise RuntimeError("refusing to populate a database whose name does not contain 'bench'")
    call_command("migrate", verbosity=0, interactive=False)
    marker = MemoryUser.objects.filter(external_id="bench-population").first()
    sizes = space_sizes(options)
    if marker is None or marker.display_name != options.population_key():
        progress(f"populating {options.spaces:,} spaces ({sum(sizes):,} pages)")
        call_command("flush", verbosity=0, interactive=False)
        grow = BenchOptions(seed=options.seed, work_dir=options.work_dir)
        pages = synthetic_pages(options.seed, max(sizes))
        cached_embeddings(
            [page_text(p.user_input, p.agent_response) for p in pages], start=0, options=grow, progress=progress
        )
        assistant_create(assistant_id=ASSISTANT, name="Helper")
        began = time.perf_counter()
        for number, size in enumerate(sizes):
            user_create(user_id=f"tenant{number:05d}")
            space = space_get(user_id=f"tenant{number:05d}", assistant_id=ASSISTANT)
            space_grow(space, target=size, options=grow, progress=lambda _: None, analyze=False, index_files=False)
            if number % 50 == 49:
                rate = (number + 1) / (time.perf_counter() - began)
                progress(f"populating: {number + 1:,}/{options.spaces:,} spaces ({rate:.1f}/s)")
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        user_create(user_id="bench-population", display_name=options.population_key())
    write_index_files(options, progress)
    ApiToken.objects.all().delete()
    tokens = []
    for number in range(options.spaces):
        user = MemoryUser.objects.get(external_id=f"tenant{number:05d}")
        tokens.append(token_create(memory_user=user, name="bench")[1])
    from django.contrib.auth import get_user_model

    staff = get_user_model().objects.filter(username="bench-ops").first()
    if staff is None:
        get_user_model().objects.create_user("bench-ops", password="bench-ops-password", is_staff=True)
    return {
        "spaces": [
            {"user": f"tenant{n:05d}", "token": tokens[n], "pages": sizes[n], "weight": w}
            for n, w in enumerate(zipf_weights(options.spaces, options.zipf_s, options.seed))
        ],
        "queries": synthetic_queries(options.seed + 2, 200),
        "pages_total": Page.objects.count(),
    }


def kept_index_dir(options: TenantOptions) -> Path:
    """The population's index files, which every run's processes start from."""
    return Path(options.work_dir) / "populate-indexes"


def write_index_files(options: TenantOptions, progress) -> None:
    """Write every space's index files into this process's index folder (the population's), once per
    population: each run's processes start from a copy, as a deployment's processes start from the files
    their volumes kept (docs/deploying.md), so a first use reads a file rather than every vector."""

    from memory_engine.models import MemorySpace
    from memory_engine.store.index import forget_space, rebuild_space_indexes

    folder = Path(memory_settings().index_dir)
    marker = folder / "population"
    if marker.exists() and marker.read_text() == options.population_key():
        return
    shutil.rmtree(folder, ignore_errors=True)
    spaces = list(MemorySpace.objects.order_by("pk"))
    for number, space in enumerate(spaces):
        rebuild_space_indexes(space)
        forget_space(space.pk)
        if number % 100 == 99:
            progress(f"index files: {number + 1:,}/{len(spaces):,} spaces")
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text(options.population_key())


def database_counts(window: list[float] | None = None) -> dict:
    """Pages stored; with a window (two Unix times), the consolidation jobs that started in it and the
    pages they moved (a job that found nothing to do leaves no run)."""
    from datetime import UTC, datetime

    from django.db.models import Count, Sum

    from memory_engine.models import ConsolidationRun

    counts = {"pages": Page.objects.count()}
    if window:
        began, ended = (datetime.fromtimestamp(at, tz=UTC) for at in window)
        runs = ConsolidationRun.objects.filter(started_at__gte=began, started_at__lt=ended)
        counts |= runs.aggregate(jobs=Count("id"), pages_moved=Sum("pages_moved", default=0))
    return counts


# --- The stack ------------------------------------------------------------------------------------------


def rss_of(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


CPU_GROUPS = ("web", "worker", "postgres", "locust", "other")  # "locust": see cores_used
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(stack: "Stack") -> dict[str, float]:
    """CPU seconds (user + system) used so far by every live process on the machine, by group: the
    stack's web server (gunicorn) and Celery worker, PostgreSQL, and the rest (the benchmark itself, the
    fake LLM, Redis, anything else running, another stack's gunicorn or Celery included: one that exits
    between two readings would take its seconds out of the group's difference); "locust" is what this
    process's ended children used (Locust runs as one and has ended by the second reading). "machine" is
    the whole machine's busy time, from /proc/stat."""
    own = {"web": set(stack.web.pids()), "worker": set(stack.worker.pids())}
    used = dict.fromkeys(CPU_GROUPS, 0.0)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        group = _cpu_group(stat[stat.index("(") + 1 : stat.rindex(")")], command)
        if group in own and int(entry.name) not in own[group]:
            group = "other"
        used[group] += _stat_cpu_seconds(stat)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    used["locust"] = children.ru_utime + children.ru_stime
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    busy = sum(int(value) for value in cpu) - int(cpu[3]) - int(cpu[4])  # less idle and iowait
    used["machine"] = busy / TICKS
    return used


def process_cpu_seconds(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user + system) each of the given processes has used so far."""
    used = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        used[pid] = _stat_cpu_seconds(stat)
    return used


def _stat_cpu_seconds(stat: str) -> float:
    """utime + stime of a /proc/<pid>/stat line, in seconds."""
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def serving_pids(role: Role) -> list[int]:
    """The processes of a role that serve: gunicorn's master only forks and watches its workers."""
    pids = role.pids()
    return pids[1:] if role.role == "web" and len(pids) > 1 else pids


def _cpu_group(name: str, command: str) -> str:
    if "gunicorn" in command:
        return "web"
    if "celery" in command:
        return "worker"
    if name in ("postgres", "postmaster") or command.startswith("postgres:"):
        return "postgres"
    return "other"


def cores_used(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    """The cores each group kept busy on average between two readings of cpu_seconds."""
    return {group: round(max(0.0, after[group] - before[group]) / seconds, 2) for group in before}


class RssSampler(threading.Thread):
    """Every second, the RSS of each process of the given roles: (seconds since start, label, role, pid, bytes)."""

    def __init__(self, label: str, roles: list[Role], began: float) -> None:
        super().__init__(daemon=True)
        self.label, self.roles, self.began = label, roles, began
        self.samples: list[tuple[float, str, str, int, int]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(1.0):
            now = time.time() - self.began
            for role in self.roles:
                for pid in serving_pids(role):
                    self.samples.append((round(now, 1), self.label, role.role, pid, rss_of(pid)))


@dataclass
class Stack:
    base: str
    web: Role
    worker: Role
    redis: RedisServer
    llm: object

    def stop(self) -> None:
        """SIGTERM to each process; one still running after its grace period is killed (and logged)."""
        for role in (self.web, self.worker):
            try:
                role.stop()
            except subprocess.TimeoutExpired:
                with open(role.log, "a") as log:
                    log.write(f"\nbench_tenants: {role.role} did not stop on SIGTERM in time and was killed\n")
        self.redis.stop()
        self.llm.__exit__(None, None, None)


def production_env(*, url: str, redis: RedisServer, llm, run_dir: Path, web_workers: int) -> dict:
    """The environment of a benchmark's production processes: DEBUG off, the benchmark database, a private
    Redis as broker and shared cache, the fake LLM, the embedder loaded at start."""
    return {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + os.urandom(24).hex(),
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": redis.url,
        # As docker-compose.yml has it: the rate limits, sign-in counts and consolidation markers are
        # shared by the web processes.
        "CACHE_URL": redis.url.removesuffix("/0") + "/1",
        "STATIC_ROOT": str(run_dir / "static"),
        "WEB_WORKERS": str(web_workers),
        "MEMORYOS_LLM_PROVIDER": "openai",
        "MEMORYOS_LLM_BASE_URL": llm.base_url,
        "MEMORYOS_LLM_MODEL": "fake-model",
        "MEMORYOS_LLM_API_KEY": "bench",
        "HF_HUB_OFFLINE": "1",
        "MEMORYOS_WARM_UP": "true",  # the embedder loads at start, not in the first measured request
    }


def start_stack(options: TenantOptions, url: str, run_dir: Path, cache_mb: float) -> Stack:
    replies = iter(range(10**9))
    llm = FakeLLMServer(model="fake-model").__enter__()
    llm.responder = lambda request: (
        nothing_extracted()
        if "response_format" in request
        else reply(f"Thanks for telling me; I will remember it (note {next(replies)}).")
    )
    redis = RedisServer(run_dir)
    redis.start()
    port = free_port()
    env = {
        **production_env(url=url, redis=redis, llm=llm, run_dir=run_dir, web_workers=options.web_workers),
        "BEAT_SCHEDULE_FILE": str(run_dir / "beat"),
        "MEMORYOS_INDEX_CACHE_MB": str(cache_mb),
        # The benchmark measures the engine, not the per-account limits: a popular space gets hundreds of
        # requests a minute here.
        "MEMORYOS_API_RATE": "1000000/min",
        "MEMORYOS_API_CHAT_RATE": "1000000/min",
    }
    kept = kept_index_dir(options)
    for folder in ("web-indexes", "worker-indexes"):
        # Hard links: an index file is only ever replaced (written aside, then renamed), never changed.
        shutil.copytree(kept, run_dir / folder, copy_function=os.link)
    web = Role(
        "web",
        {**env, "BIND": f"127.0.0.1:{port}", "MEMORYOS_INDEX_DIR": str(run_dir / "web-indexes")},
        run_dir / "web.log",
    )
    worker = Role("worker", {**env, "MEMORYOS_INDEX_DIR": str(run_dir / "worker-indexes")}, run_dir / "worker.log")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
        wait_until(lambda: " ready." in worker.output() or not worker.running(), timeout=600, what="the worker")
        if not (web.running() and worker.running()):
            raise RuntimeError(f"the stack did not start; see {run_dir}")
    except BaseException:
        Stack(base, web, worker, redis, llm).stop()
        raise
    return Stack(base, web, worker, redis, llm)


# --- Locust ---------------------------------------------------------------------------------------------


def run_locust(base: str, plan_path: Path, *, clients: int, seconds: int, mode: str, csv_prefix: Path) -> dict:
    """Run bench/locustfile.py headless; the figures of each request name from its CSV."""
    env = {"TENANTS_PLAN": str(plan_path), "TENANTS_MODE": mode}
    return run_locust_file(
        base, ROOT / "bench" / "locustfile.py", env, clients=clients, seconds=seconds, csv_prefix=csv_prefix
    )


def run_locust_file(base: str, locustfile: Path, env: dict, *, clients: int, seconds: int, csv_prefix: Path) -> dict:
    """Run a locustfile headless with `env` added; the figures of each request name from its CSV."""
    command = [
        str(Path(sys.executable).parent / "locust"),
        "-f",
        str(locustfile),
        "--headless",
        "-u",
        str(clients),
        "-r",
        str(clients),
        "--run-time",
        f"{seconds}s",
        "--host",
        base,
        "--csv",
        str(csv_prefix),
        "--only-summary",
        "--stop-timeout",
        "30",
        "--loglevel",
        "WARNING",
    ]
    completed = subprocess.run(
        command, env={**os.environ, **env}, cwd=ROOT, capture_output=True, text=True, timeout=seconds + 300
    )
    stats_file = Path(f"{csv_prefix}_stats.csv")
    if not stats_file.exists():
        raise RuntimeError(f"locust wrote no figures (exit {completed.returncode}): {completed.stderr[-2000:]}")
    figures = {}
    with open(stats_file) as handle:
        for row in csv.DictReader(handle):
            figures[row["Name"]] = {
                "requests": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "per_second": float(row["Requests/s"]),
                "p50": _number(row["50%"]),
                "p95": _number(row["95%"]),
                "p99": _number(row["99%"]),
                "max": _number(row["Max Response Time"]),
            }
    return figures


def locust_errors(csv_prefix: Path) -> list[dict]:
    """The failed requests of a Locust run, from its CSV: request name, error, occurrences."""
    failures_file = Path(f"{csv_prefix}_failures.csv")
    if not failures_file.exists():
        return []
    with open(failures_file) as handle:
        return [
            {"name": row["Name"], "error": row["Error"], "occurrences": int(row["Occurrences"])}
            for row in csv.DictReader(handle)
        ]


def _number(cell: str) -> float:
    """A Locust percentile cell ("N/A" when nothing was sent)."""
    try:
        return float(cell)
    except ValueError:
        return 0.0


def process_stats(base: str, tries: int = 30) -> dict[int, dict]:
    """Each web process's /ops/process/ answer, by pid (asked `tries` times to reach each of them)."""
    import httpx2

    with httpx2.Client(base_url=base, timeout=30) as client:
        login = client.get("/accounts/login/")
        token = login.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        client.post(
            "/accounts/login/",
            data={"username": "bench-ops", "password": "bench-ops-password", "csrfmiddlewaretoken": token},
        )
        seen = {}
        for _ in range(tries):
            answer = client.get("/ops/process/", headers={"Connection": "close"})
            if answer.status_code == 200:
                data = answer.json()
                seen[data["pid"]] = data
        return seen


def cache_summary(stats: dict[int, dict]) -> dict:
    caches = [s["index_cache"] for s in stats.values()]
    hits, misses = sum(c["hits"] for c in caches), sum(c["misses"] for c in caches)
    loads = [c["load_ms_p95"] for c in caches if c["load_ms_p95"] is not None]
    return {
        "processes": len(caches),
        "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None,
        "evictions": sum(c["evictions"] for c in caches),
        "spaces_held": [c["spaces"] for c in caches],
        "bytes_held": [c["bytes"] for c in caches],
        "index_load_p95_ms": max(loads) if loads else None,
    }


# --- The whole benchmark --------------------------------------------------------------------------------


def run_benchmark(options: TenantOptions, progress) -> dict:
    work = Path(options.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    url = options.postgres_url
    ensure_postgres_database(url)
    plan_path = work / "plan.json"
    progress(f"population: {redact(url)}")
    child = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bench_tenants",
            "--role",
            "populate",
            "--options-json",
            json.dumps(asdict(options)),
            "--result",
            str(plan_path),
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": url,
            "HF_HUB_OFFLINE": "1",
            "MEMORYOS_INDEX_DIR": str(kept_index_dir(options)),
        },
        check=False,
    )
    if child.returncode != 0:
        raise RuntimeError("the population step failed; see its output above")
    plan = json.loads(plan_path.read_text())
    results = {
        "machine": machine_description(),
        "options": {**asdict(options), "postgres_url": redact(url)},
        "runs": [],
        "cold": None,
        "rss": [],
    }
    began = time.time()
    pages_before = plan["pages_total"]
    # Every run starts from a copy of the population, so no run retrieves over the turns an earlier one
    # stored, and each run's turns are counted on their own.
    run_url = url_with_database(url, database_from_url(url)["NAME"] + "_run")
    settings_runs = [("bounded", options.cache_mb), ("no bound", 0.0)]
    for label, cache_mb in settings_runs:
        for clients in options.clients:
            run_dir = fresh_dir(work / "runs" / f"{label.replace(' ', '-')}-{clients}")
            progress(f"{label} cache, {clients} clients: a fresh copy of the population, starting the stack")
            copy_postgres_database(url, run_url)
            stack = start_stack(options, run_url, run_dir, cache_mb)
            sampler = RssSampler(f"{label}, {clients} clients", [stack.web, stack.worker], began)
            sampler.start()
            try:
                load = partial(run_locust, stack.base, plan_path, clients=clients, mode="mix")
                progress(f"{label} cache, {clients} clients: warm-up {options.warmup_seconds}s")
                load(seconds=options.warmup_seconds, csv_prefix=run_dir / "warmup")
                progress(f"{label} cache, {clients} clients: measuring {options.seconds}s")
                cpu_before, measured_from, window = cpu_seconds(stack), time.monotonic(), [time.time()]
                web_before = process_cpu_seconds(serving_pids(stack.web))
                figures = load(seconds=options.seconds, csv_prefix=run_dir / "run")
                measured = time.monotonic() - measured_from
                window.append(time.time())
                cores = cores_used(cpu_before, cpu_seconds(stack), measured)
                web_after = process_cpu_seconds(list(web_before))
                # Each web process's share: an uneven spread of the connections shows here.
                cores["web processes"] = sorted(
                    (
                        round((web_after[pid] - used) / measured, 2)
                        for pid, used in web_before.items()
                        if pid in web_after
                    ),
                    reverse=True,
                )
                cache = cache_summary(process_stats(stack.base))
            finally:
                sampler.stopping.set()
                sampler.join()
                stack.stop()
            counts = counts_in(run_url, window)
            turns = {"accepted": accepted_turns_in(stack.web.log), "stored": counts["pages"] - pages_before}
            jobs = {
                "jobs": counts["jobs"],
                "per_second": round(counts["jobs"] / measured, 2),
                "pages_per_job": round(counts["pages_moved"] / counts["jobs"], 2) if counts["jobs"] else None,
                "worker_ms_per_job": round(cores["worker"] * measured * 1000 / counts["jobs"], 1)
                if counts["jobs"]
                else None,
            }
            results["rss"] += sampler.samples
            results["runs"].append(
                {
                    "cache": label,
                    "cache_mb": cache_mb,
                    "clients": clients,
                    "figures": figures,
                    "errors": locust_errors(run_dir / "warmup") + locust_errors(run_dir / "run"),
                    "index_cache": cache,
                    "cores": cores,
                    "peak_rss": peak_rss(sampler.samples),
                    "turns": turns,
                    "consolidation": jobs,
                }
            )
            progress(f"{label} cache, {clients} clients: {summary_line(figures)}")

    run_dir = fresh_dir(work / "runs" / "cold-loads")
    progress("cold loads next to warm traffic")
    copy_postgres_database(url, run_url)
    stack = start_stack(options, run_url, run_dir, options.cache_mb)
    try:
        clients = max(options.clients)
        load = partial(run_locust, stack.base, plan_path)
        load(clients=clients, seconds=options.warmup_seconds, mode="warm", csv_prefix=run_dir / "warmup")
        alone = load(clients=clients, seconds=options.seconds, mode="warm", csv_prefix=run_dir / "alone")
        beside = load(clients=clients + 1, seconds=options.seconds, mode="warm+cold", csv_prefix=run_dir / "beside")
        results["cold"] = {
            "clients": clients,
            "alone": alone,
            "beside": beside,
            "errors": [error for run in ("warmup", "alone", "beside") for error in locust_errors(run_dir / run)],
            "index_cache": cache_summary(process_stats(stack.base)),
        }
    finally:
        stack.stop()

    cold_turns = {"accepted": accepted_turns_in(stack.web.log), "stored": counts_in(run_url)["pages"] - pages_before}
    drop_postgres_database(run_url)
    every_run = [run["turns"] for run in results["runs"]] + [cold_turns]
    results["turns"] = {key: sum(turns[key] for turns in every_run) for key in ("accepted", "stored")}
    results["seconds"] = round(time.time() - began, 1)
    return results


def counts_in(url: str, window: list[float] | None = None) -> dict:
    """database_counts() of the database of `url`, in a child process."""
    command = [sys.executable, "manage.py", "bench_tenants", "--role", "count"]
    if window:
        command += ["--options-json", json.dumps(window)]
    counted = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "DATABASE_URL": url}, check=True
    )
    return json.loads(counted.stdout.strip().splitlines()[-1])


def fresh_dir(path: Path) -> Path:
    """An empty folder at `path` (a run's logs, CSVs and index folders)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def accepted_turns_in(log: Path) -> int:
    """Turns the web server answered as stored (a new turn: 201; a chat reply: 200), from its access log:
    Locust's own counts miss requests in flight when a run ends."""
    accepted = 0
    for line in log.read_text(errors="replace").splitlines():
        if ('/turns/ HTTP/1.1" 201' in line or '/chat/ HTTP/1.1" 200' in line) and '"POST ' in line:
            accepted += 1
    return accepted


def peak_rss(samples) -> dict[str, int]:
    peaks: dict[str, int] = {}
    for _, _, role, _, rss in samples:
        peaks[role] = max(peaks.get(role, 0), rss)
    return peaks


def summary_line(figures: dict) -> str:
    total = figures.get("Aggregated", {})
    return (
        f"{total.get('per_second', 0):.1f} req/s, p95 {total.get('p95', 0):.0f} ms, {total.get('failures', 0)} failures"
    )


# --- Report ---------------------------------------------------------------------------------------------


def render_report(results: dict) -> str:
    options, machine = results["options"], results["machine"]
    lines = [
        f"MemoryOS multi-tenant benchmark: {machine['cores']} cores, {machine['ram_bytes'] / 2**30:.1f} GiB RAM; "
        f"{options['spaces']:,} spaces up to {options['max_pages']:,} pages (median {options['median_pages']}), "
        f"Zipf s={options['zipf_s']}; {options['web_workers']} web processes (gunicorn + uvicorn), 1 Celery worker, "
        f"PostgreSQL; {options['seconds']} s a run after {options['warmup_seconds']} s of warm-up",
        f"mix: {', '.join(f'{share}% {name}' for name, share in MIX.items())}; closed loop, no think time; "
        "ms are Locust's percentiles",
        "",
        f"{'cache':<9} {'clients':>7}  {'req/s':>6} {'x 1':>5}  "
        + "  ".join(f"{name + ' p50/p95/p99':>26}" for name in MIX)
        + f"  {'errors':>6} {'hit rate':>8} {'evictions':>9} {'web RSS':>8} {'worker RSS':>10}",
    ]
    base_rate = {}
    for run in results["runs"]:
        f = run["figures"]
        total = f.get("Aggregated", {"per_second": 0.0, "failures": 0})
        base_rate.setdefault(run["cache"], total["per_second"])
        ratio = total["per_second"] / base_rate[run["cache"]] if base_rate[run["cache"]] else 0
        cells = "  ".join(
            f"{f[name]['p50']:>8.0f}/{f[name]['p95']:>7.0f}/{f[name]['p99']:>7.0f}" if name in f else f"{'-':>26}"
            for name in MIX
        )
        cache = run["index_cache"]
        hit = f"{cache['hit_rate']:.3f}" if cache["hit_rate"] is not None else "-"
        lines.append(
            f"{run['cache']:<9} {run['clients']:>7}  {total['per_second']:>6.1f} {ratio:>5.2f}  {cells}  "
            f"{total['failures']:>6} {hit:>8} {cache['evictions']:>9} "
            f"{run['peak_rss'].get('web', 0) / 2**20:>6.0f}Mi {run['peak_rss'].get('worker', 0) / 2**20:>8.0f}Mi"
        )
    lines += [
        "",
        f"Cores kept busy while measuring (of {machine['cores']}; Locust's own share included: the load tool "
        "runs on the same cores), CPU ms per request, and the consolidation jobs that started while measuring:",
        f"{'cache':<9} {'clients':>7}  "
        + " ".join(f"{group:>8}" for group in (*CPU_GROUPS, "machine"))
        + "  ms/req"
        + "  jobs/s pages/job worker ms/job"
        + "  each web process",
    ]
    for run in results["runs"]:
        cores, total = run.get("cores"), run["figures"].get("Aggregated", {})
        if cores:
            per_request = cores["machine"] * 1000 / total["per_second"] if total.get("per_second") else 0
            lines.append(
                f"{run['cache']:<9} {run['clients']:>7}  "
                + " ".join(f"{cores[group]:>8.2f}" for group in (*CPU_GROUPS, "machine"))
                + f"  {per_request:>6.0f}  "
                + _job_cells(run["consolidation"])
                + "  "
                + " / ".join(f"{share:.2f}" for share in cores.get("web processes", []))
            )
    cold = results.get("cold")
    if cold:
        alone, beside = cold["alone"].get("warm retrieve", {}), cold["beside"].get("warm retrieve", {})
        loads = cold["beside"].get("cold retrieve", {})
        ratio = beside.get("p99", 0) / alone["p99"] if alone.get("p99") else 0
        lines += [
            "",
            f"Cold loads next to warm traffic ({cold['clients']} warm clients on the 20 most popular spaces "
            "(of fewer than 40, the more popular half); "
            "one more loading large spaces never touched before, one after another):",
            f"  warm retrieval p50/p95/p99 alone {alone.get('p50', 0):.0f}/{alone.get('p95', 0):.0f}/"
            f"{alone.get('p99', 0):.0f} ms; beside cold loads {beside.get('p50', 0):.0f}/{beside.get('p95', 0):.0f}/"
            f"{beside.get('p99', 0):.0f} ms: p99 x{ratio:.2f} (target <= 2)",
            f"  cold retrievals: {loads.get('requests', 0)}, "
            f"p50/p95 {loads.get('p50', 0):.0f}/{loads.get('p95', 0):.0f} ms; "
            f"index load p95 {cold['index_cache']['index_load_p95_ms']} ms",
        ]
    errors = [error for run in [*results["runs"], cold or {}] for error in run.get("errors", [])]
    lines += ["", f"Failed requests, warm-ups included: {sum(error['occurrences'] for error in errors)}"]
    lines += [f"  {error['occurrences']} x {error['name']}: {error['error'][:300]}" for error in errors]
    turns = results.get("turns", {})
    uneven = [run for run in results["runs"] if run["turns"]["accepted"] != run["turns"]["stored"]]
    lines += [
        "",
        f"Turns the server accepted (201 to a turn, 200 to a chat, in every run, each run on a fresh copy of the "
        f"population): {turns.get('accepted')}; pages stored meanwhile: "
        f"{turns.get('stored')} ({'none lost' if turns.get('accepted') == turns.get('stored') else 'MISMATCH'})",
    ]
    lines += [
        f"  MISMATCH in {run['cache']}, {run['clients']} clients: {run['turns'].get('accepted')} accepted, "
        f"{run['turns'].get('stored')} stored"
        for run in uneven
    ]
    return "\n".join(lines)


def _job_cells(jobs: dict) -> str:
    def cell(value, width: int, form: str) -> str:
        return f"{value:>{width}{form}}" if value is not None else f"{'-':>{width}}"

    return (
        f"{jobs['per_second']:>6.2f} {cell(jobs['pages_per_job'], 9, '.2f')} "
        f"{cell(jobs['worker_ms_per_job'], 13, '.1f')}"
    )


def plot_rss(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(11, 4.5))
    series = defaultdict(list)
    for at, label, role, pid, rss in results["rss"]:
        series[(label, role, pid)].append((at, rss / 2**20))
    for (label, role, _), points in series.items():
        xs, ys = zip(*points, strict=True)
        axis.plot(
            xs,
            ys,
            color="tab:blue" if role == "web" else "tab:orange",
            linewidth=0.8,
            linestyle="-" if "bounded" in label else "--",
        )
    bound = results["options"]["cache_mb"]
    axis.axhline(bound + 1024, color="grey", linewidth=0.8, linestyle=":")
    axis.text(0, bound + 1024, f" web target: cache bound {bound:.0f} MiB + 1 GiB", va="bottom", fontsize=8)
    axis.set_xlabel("seconds since the first run started")
    axis.set_ylabel("RSS (MiB)")
    axis.set_title("RSS of each web (blue) and worker (orange) process; solid: bounded cache, dashed: no bound")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
