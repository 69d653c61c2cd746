"""Hostile accounts and clients do their worst while another account chats: the production stack's fair share.

    manage.py bench_hostile                              # 120 s alone, then 120 s beside the attack
    manage.py bench_hostile --seconds 30 --scale 0.1     # files a tenth the size, for a quick look
    manage.py bench_hostile --attacks idle checks        # 2,000 silent connections, six accounts' largest files

The stack is the production one, through its entrypoint (`scripts/serve`): gunicorn with uvicorn workers
(--web-workers), one Celery worker (one pool process), a private Redis as broker and shared cache, an
OpenAI-compatible fake LLM on 127.0.0.1, and a fresh PostgreSQL database whose name contains "bench"; the
production limits as shipped (rates, sizes, quotas).

1. **The victim alone.** One Locust client chats with its own space (a reply, then --think seconds), whose
   short-term memory holds one turn, so every turn sets off a consolidation job in the worker.
2. **The victim beside the attack.** The same, while another account (its tokens, its spaces) sends, as
   fast as its limits let it, the worst files a hostile account can bring: a 171-byte ChatGPT file whose branches loop,
   a zip of gigabytes of whitespace, a zip holding one 400 MB string, a 200 MB file of one conversation in
   millions of tiny messages (accepted, then imported: millions of turns), a 50 MB ChatGPT export
   imported whole, an 8 MB export restored into one empty space after another, numbers of 100,000 digits,
   and unauthenticated 300 MB POSTs ("files", "imports", "restores", "bodies"); and, from no account, 2,000
   TCP connections to the web port that send nothing, each opened again as soon as the server closes it
   ("idle"); and six more accounts each bringing the 200 MB file of tiny messages, waiting for its check,
   deleting it and bringing it again ("checks").

For each phase: the victim's reply latency (Locust's p50/p95/max), its consolidation delay (from each
turn's storing to the end of the first consolidation job that started after it, from the database), the
peak resident memory of every process of the stack (the file checks' processes included: they are the web
processes' children), and what each attack got (statuses, counts). Targets: the victim's reply
p95 and consolidation delay p95 within 2x of alone, no process past 1 GiB.
"""

import contextlib
import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections import Counter
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import httpx2

from bench.fake_llm_server import FakeLLMServer, nothing_extracted, reply
from bench.imports import write_export
from bench.processes import RedisServer, Role, free_port, healthy, wait_until
from bench.scale import drop_postgres_database, ensure_postgres_database, machine_description, redact
from bench.tenants import RssSampler, locust_errors, production_env, run_locust_file

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/memoryos_bench_hostile"
DEFAULT_WORK_DIR = ROOT / "var" / "bench-hostile"
GIB = 1 << 30
LOOP = b'[{"title":"loop","mapping":{"a":{"parent":null,"children":["b"]},"b":{"parent":"a","children":["a"]}}}]'


ATTACKS = ("files", "imports", "restores", "bodies", "idle", "checks")


@dataclass
class HostileOptions:
    seconds: int = 120
    think_seconds: float = 3.0  # the victim's pause between replies (its chat rate is 30 a minute)
    web_workers: int = 2
    tiny_mb: int = 200
    bomb_mb: int = 4096  # what the whitespace zip unpacks to
    string_mb: int = 400
    export_pages: int = 4900  # an export holds at most 5,000 pages (export_format.MAX_PAGES)
    chatgpt_mb: int = 50
    idle_connections: int = 2000
    filers: int = 6  # accounts bringing the largest file, each one at a time ("checks")
    work_dir: str = str(DEFAULT_WORK_DIR)
    postgres_url: str = DEFAULT_POSTGRES_URL
    attacks: tuple[str, ...] = ATTACKS  # the parts of the attack that run (an import alone: ("imports",))

    warmup_seconds: int = 15

    def scaled(self, share: float) -> "HostileOptions":
        """The same with the attack's files `share` of their size."""
        return HostileOptions(
            **{
                **asdict(self),
                "tiny_mb": max(1, int(self.tiny_mb * share)),
                "bomb_mb": max(1, int(self.bomb_mb * share)),
                "string_mb": max(1, int(self.string_mb * share)),
                "export_pages": max(20, int(self.export_pages * share)),
                "chatgpt_mb": max(1, int(self.chatgpt_mb * share)),
            }
        )


# --- The files --------------------------------------------------------------------------------------


def _tiny(path: Path, megabytes: int) -> None:
    pair = b'{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},'
    with path.open("wb") as out:
        out.write(b"[")
        for _ in range(megabytes * (1 << 20) // len(pair)):
            out.write(pair)
        out.write(b'{"role":"user","content":"end"}]')


def _zipped(path: Path, head: bytes, filler: bytes, megabytes: int, tail: bytes) -> None:
    block = filler * ((1 << 20) // len(filler))
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("conversations.json", "w", force_zip64=True) as out,
    ):
        out.write(head)
        for _ in range(megabytes):
            out.write(block)
        out.write(tail)


def make_files(options: HostileOptions, progress) -> dict[str, Path]:
    """The attack's files under the work folder, written once for each size."""
    folder = Path(options.work_dir) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    five = json.dumps([[{"role": "user", "content": f"conversation {n}"}] for n in range(5)]).encode()
    makers = {
        "loop.json": lambda p: p.write_bytes(LOOP),
        f"digits-{100_000}.json": lambda p: p.write_bytes(
            b'[{"role": "user", "content": "hi", "timestamp": ' + b"1" * 100_000 + b"}]"
        ),
        f"whitespace-{options.bomb_mb}mb.zip": lambda p: _zipped(p, five[:-1] + b",", b" ", options.bomb_mb, b"[]]"),
        f"string-{options.string_mb}mb.zip": lambda p: _zipped(
            p, b'[{"role": "user", "content": "', b"a", options.string_mb, b'"}]'
        ),
        f"tiny-{options.tiny_mb}mb.json": lambda p: _tiny(p, options.tiny_mb),
        f"chatgpt-{options.chatgpt_mb}mb.json": lambda p: write_export(p, options.chatgpt_mb),
    }
    files = {}
    for name, make in makers.items():
        path = folder / name
        if not path.exists():
            progress(f"writing {name}")
            make(path.with_suffix(".part"))
            path.with_suffix(".part").rename(path)
        files[name.split("-")[0].split(".")[0]] = path
    return files


# --- In a child process on the benchmark database -------------------------------------------------------


def prepare(options: HostileOptions, progress) -> dict:
    """Migrate; the victim's account and space, the attacker's with nine more empty spaces to restore into
    (each a memory user of the account's, with its token); and the export to restore (grown once, kept in
    the work folder). Returns the plan."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from bench.scale import BenchOptions, space_grow
    from memory_engine.services.export import space_export
    from memory_engine.services.spaces import assistant_create, owned_user_create, space_delete, space_get, user_create
    from memory_engine.services.tokens import token_create

    call_command("migrate", verbosity=0, interactive=False)
    assistant_create(assistant_id="helper", name="Helper")
    export = Path(options.work_dir) / "files" / f"export-{options.export_pages}.json"
    if not export.exists() and "restores" in options.attacks:
        progress(f"growing a space of {options.export_pages:,} pages to export")
        user_create(user_id="export-source")
        source = space_get(user_id="export-source", assistant_id="helper")
        space_grow(
            source, target=options.export_pages, options=BenchOptions(work_dir=options.work_dir), progress=progress
        )
        export.write_text(json.dumps(space_export(space=source)))
        space_delete(space=source)
    accounts = {}
    for name in ("victim", "attacker", *(f"filer{n}" for n in range(1, options.filers + 1))):
        account = get_user_model().objects.create_user(name, password=f"pw-{name}-bench-1")
        users = [owned_user_create(owner=account, user_id="me")]
        if name == "attacker":  # empty spaces to restore into, one after another: each a memory user of its own
            users += [owned_user_create(owner=account, user_id=f"empty{number}") for number in range(1, 10)]
        held = []
        for user in users:
            space = space_get(user_id=user.external_id, assistant_id="helper")
            if name == "victim":
                space.stm_capacity = 1  # every turn pushes the one before out: a consolidation job a turn
                space.save(update_fields=["stm_capacity"])
            held.append({"user": user.external_id, "token": token_create(memory_user=user, name="bench")[1]})
        accounts[name] = {**held[0], "empty": held[1:]}
    return {"accounts": accounts, "export": str(export)}


def consolidation_delays(user: str, windows: dict[str, list[float]]) -> dict[str, list[float]]:
    """For each phase (two Unix times), the victim's turns stored in it: seconds from each turn to the end
    of the first consolidation job of its space that started after it."""
    from datetime import UTC, datetime

    from memory_engine.models import ConsolidationRun, Page

    runs = list(
        ConsolidationRun.objects.filter(space__user__external_id=user, finished_at__isnull=False)
        .order_by("started_at")
        .values_list("started_at", "finished_at")
    )
    delays = {}
    for phase, (began, ended) in windows.items():
        start, end = (datetime.fromtimestamp(at, tz=UTC) for at in (began, ended))
        turns = Page.objects.filter(space__user__external_id=user, created_at__gte=start, created_at__lt=end)
        found = []
        for stored in turns.values_list("created_at", flat=True):
            after = next((finished for started, finished in runs if started >= stored), None)
            if after is not None:
                found.append((after - stored).total_seconds())
        delays[phase] = found
    return delays


# --- The attack ---------------------------------------------------------------------------------------


class Attack(threading.Thread):
    """One kind of attack, repeated until told to stop; counts what each try got."""

    def __init__(self, name: str, client: httpx2.Client, step, stop: threading.Event) -> None:
        super().__init__(daemon=True, name=name)
        self.client, self.step, self.stop = client, step, stop
        self.outcomes: Counter = Counter()
        self.seconds: list[float] = []

    def run(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                outcome = self.step(self.client)
            except httpx2.HTTPError as exc:
                outcome = type(exc).__name__
            self.outcomes[str(outcome)] += 1
            self.seconds.append(time.monotonic() - began)
            if str(outcome).startswith("429"):
                self.stop.wait(2)


def _brought(client: httpx2.Client, space: str, path: Path) -> tuple[str, dict | None]:
    """Bring the file and wait for its check (polled as the page does): what the upload got, and the upload."""
    with path.open("rb") as body:
        answer = client.post(f"{space}imports/files/?name={path.name}", content=iter(lambda: body.read(1 << 20), b""))
    if answer.status_code not in (201, 202):
        return str(answer.status_code), None
    upload = answer.json()
    while upload["status"] == "checking":
        time.sleep(2)
        with contextlib.suppress(httpx2.TransportError):  # a connection the server closed: ask again
            upload = client.get(f"{space}imports/files/{upload['id']}/").json()
    refusal = f" ({upload['refusal']})" if upload["refusal"] else ""
    return f"{answer.status_code} then {upload['status']}{refusal}", upload


def _files_step(files: dict[str, Path], space: str):
    names = ["loop", "whitespace", "string", "digits"]
    turn = iter(range(10**9))

    def step(client: httpx2.Client) -> str:
        name = names[next(turn) % len(names)]
        got, _ = _brought(client, space, files[name])
        return f"{got} {name}"

    return step


def _import_step(files: dict[str, Path], space: str):
    """The 50 MB export and the file of tiny messages, each imported whole (their uploads made before the
    attack's other parts start: bench.hostile.imports_started); then imports asked for over and over."""
    uploads: list[int] = []

    def step(client: httpx2.Client) -> str:
        if not uploads:
            for name in ("chatgpt", "tiny"):
                got, upload = _brought(client, space, files[name])
                if upload is None or upload["status"] != "ready":
                    return f"{got} upload of {name}"
                uploads.append(upload["id"])
        answer = client.post(f"{space}imports/", json={"upload": uploads[len(uploads) - 1 - int(time.time()) % 2]})
        return f"{answer.status_code} import"

    return step


def _restore_step(export: Path, empty: list[dict]):
    """The export restored into one empty space after another: the next once the last has ended."""
    body = b'{"export": ' + export.read_bytes() + b"}"  # as the chat page sends it
    targets = list(empty)

    def step(client: httpx2.Client) -> str:
        if not targets:
            time.sleep(1)
            return "no empty space left"
        target = targets[0]
        space = f"/api/v1/users/{target['user']}/spaces/helper/"
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {target['token']}"}
        answer = client.post(f"{space}restore/", content=body, headers=headers)
        if answer.status_code != 202:
            return f"{answer.status_code} restore"
        job = answer.json()
        while job["status"] in ("queued", "running"):
            time.sleep(2)
            with contextlib.suppress(httpx2.TransportError):  # a connection the server closed: ask again
                job = client.get(f"{space}jobs/{job['id']}/", headers=headers).json()
        targets.pop(0)
        return f"202 restore, {job['status']}"

    return step


class IdleConnections(Attack):
    """`count` TCP connections to the web port that never send a byte, each opened again as soon as the
    server closes it (counted as cut), until told to stop."""

    def __init__(self, base: str, count: int, stop: threading.Event) -> None:
        super().__init__("idle", None, None, stop)
        self.address = tuple(base.removeprefix("http://").split(":"))
        self.count = count

    def open(self, watching: selectors.BaseSelector) -> None:
        try:
            connection = socket.create_connection((self.address[0], int(self.address[1])), timeout=10)
        except OSError as exc:
            self.outcomes[f"not opened ({type(exc).__name__})"] += 1
            return
        connection.setblocking(False)
        watching.register(connection, selectors.EVENT_READ)
        self.outcomes["opened"] += 1

    def run(self) -> None:
        with selectors.DefaultSelector() as watching:
            for _ in range(self.count):
                self.open(watching)
            while not self.stop.is_set():
                for key, _ in watching.select(timeout=0.5):
                    watching.unregister(key.fileobj)
                    key.fileobj.close()  # the server closed it (or answered it): a silent one again
                    self.outcomes["cut by the server"] += 1
                    self.open(watching)
            for key in list(watching.get_map().values()):
                key.fileobj.close()
        self.seconds.append(0.0)


def _checks_step(files: dict[str, Path], space: str):
    """The file of tiny messages brought, its check waited for, the upload deleted, and again."""

    def step(client: httpx2.Client) -> str:
        got, upload = _brought(client, space, files["tiny"])
        if upload is not None:
            client.delete(f"{space}imports/files/{upload['id']}/")
        return got

    return step


def _body_step(base: str):
    host, port = base.removeprefix("http://").split(":")

    def step(_client) -> str:
        request = (
            b"POST /api/v1/users/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 314572800\r\n\r\n"
        )
        with socket.create_connection((host, int(port)), timeout=60) as connection:
            connection.sendall(request)
            connection.settimeout(2)
            try:
                connection.sendall(b" " * (8 << 20))
                answer = connection.recv(64)
            except OSError:
                answer = connection.recv(64) if connection.fileno() != -1 else b""
        time.sleep(0.5)
        return f"{answer.split(b' ', 2)[1].decode() if answer else 'no answer'} unauthenticated 300 MB"

    return step


# --- The whole benchmark --------------------------------------------------------------------------------


def _client(base: str, token: str) -> httpx2.Client:
    return httpx2.Client(base_url=base, timeout=900, headers={"Authorization": f"Bearer {token}"})


def start_stack(options: HostileOptions, url: str, run_dir: Path):
    llm = FakeLLMServer(model="fake-model").__enter__()
    llm.responder = lambda request: (
        nothing_extracted() if "response_format" in request else reply("Thanks, I will keep that in mind.")
    )
    redis = RedisServer(run_dir)
    redis.start()
    port = free_port()
    env = {
        **production_env(url=url, redis=redis, llm=llm, run_dir=run_dir, web_workers=options.web_workers),
        "MEMORYOS_IMPORT_DIR": str(run_dir / "imports"),
    }
    web = Role(
        "web",
        {**env, "BIND": f"127.0.0.1:{port}", "MEMORYOS_INDEX_DIR": str(run_dir / "web-indexes")},
        run_dir / "web.log",
    )
    worker = Role("worker", {**env, "MEMORYOS_INDEX_DIR": str(run_dir / "worker-indexes")}, run_dir / "worker.log")
    base = f"http://127.0.0.1:{port}"

    def stop() -> None:
        for role in (web, worker):
            with contextlib.suppress(subprocess.TimeoutExpired):
                role.stop()
        redis.stop()
        llm.__exit__(None, None, None)

    try:
        wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
        wait_until(lambda: " ready." in worker.output() or not worker.running(), timeout=600, what="the worker")
        if not (web.running() and worker.running()):
            raise RuntimeError(f"the stack did not start; see {run_dir}")
    except BaseException:
        stop()
        raise
    return base, web, worker, stop


def _child(role: str, options: HostileOptions, url: str, result: Path, extra: dict | None = None) -> dict:
    command = [sys.executable, "manage.py", "bench_hostile", "--role", role, "--options-json"]
    command += [json.dumps({**asdict(options), **(extra or {})}), "--result", str(result)]
    subprocess.run(command, cwd=ROOT, env={**os.environ, "DATABASE_URL": url, "HF_HUB_OFFLINE": "1"}, check=True)
    return json.loads(result.read_text())


def run_benchmark(options: HostileOptions, progress) -> dict:
    work = Path(options.work_dir)
    run_dir = work / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    files = make_files(options, progress)
    url = options.postgres_url
    drop_postgres_database(url)
    ensure_postgres_database(url)
    progress(f"preparing {redact(url)}")
    plan = _child("prepare", options, url, run_dir / "plan.json")
    victim, attacker = plan["accounts"]["victim"], plan["accounts"]["attacker"]
    locust_plan = run_dir / "locust-plan.json"
    locust_plan.write_text(
        json.dumps({"user": victim["user"], "token": victim["token"], "think": options.think_seconds})
    )
    base, web, worker, stop_stack = start_stack(options, url, run_dir)
    began = time.time()
    sampler = RssSampler("all", [web, worker], began)
    sampler.start()
    phases, windows, attacks = {}, {}, []
    try:
        progress("the victim warms up (not measured)")
        run_locust_file(
            base, ROOT / "bench" / "locust_hostile.py", {"HOSTILE_PLAN": str(locust_plan)},
            clients=1, seconds=options.warmup_seconds, csv_prefix=run_dir / "warm-up",
        )  # fmt: skip
        for phase in ("alone", "beside the attack"):
            stop = threading.Event()
            if phase != "alone":
                progress("the attack starts")
                space = f"/api/v1/users/{attacker['user']}/spaces/helper/"
                steps = {
                    "files": partial(_files_step, files, space),
                    "imports": partial(_import_step, files, space),
                    "restores": partial(_restore_step, Path(plan["export"]), attacker["empty"]),
                    "bodies": partial(_body_step, base),
                }
                # A client each: a request refused before its body was read closes its connection.
                attacks = [
                    Attack(name, _client(base, attacker["token"]), steps[name](), stop)
                    for name in options.attacks
                    if name in steps
                ]
                if "idle" in options.attacks:
                    attacks.append(IdleConnections(base, options.idle_connections, stop))
                if "checks" in options.attacks:
                    filers = [plan["accounts"][f"filer{n}"] for n in range(1, options.filers + 1)]
                    attacks += [
                        Attack(
                            f"checks {f['user']}",
                            _client(base, f["token"]),
                            _checks_step(files, f"/api/v1/users/{f['user']}/spaces/helper/"),
                            stop,
                        )
                        for f in filers
                    ]
                for attack in attacks:  # the imports under way first: the worker has millions of turns to store
                    if attack.name == "imports":
                        attack.step(attack.client)
                for attack in attacks:
                    attack.start()
                time.sleep(10)  # the restores under way too before the victim is measured
            progress(f"the victim chats, {phase}: {options.seconds} s")
            samples_from = len(sampler.samples)
            window = [time.time()]
            figures = run_locust_file(
                base, ROOT / "bench" / "locust_hostile.py", {"HOSTILE_PLAN": str(locust_plan)},
                clients=1, seconds=options.seconds, csv_prefix=run_dir / phase.replace(" ", "-"),
            )  # fmt: skip
            window.append(time.time())
            windows[phase] = window
            phases[phase] = {
                "figures": figures,
                "errors": locust_errors(run_dir / phase.replace(" ", "-")),
                "peak_rss": _peaks(sampler.samples[samples_from:]),
            }
            stop.set()
        for attack in attacks:
            attack.join(timeout=120)
    finally:
        sampler.stopping.set()
        sampler.join()
        stop_stack()
    delays = _child("delays", options, url, run_dir / "delays.json", {"user": victim["user"], "windows": windows})
    for phase, found in delays.items():
        phases[phase]["consolidation_delays"] = found
    return {
        "machine": machine_description(),
        "options": {**asdict(options), "postgres_url": redact(url)},
        "files": {name: path.stat().st_size for name, path in files.items()}
        | ({"export": Path(plan["export"]).stat().st_size} if Path(plan["export"]).exists() else {}),
        "phases": phases,
        "attacks": {a.name: {"outcomes": dict(a.outcomes), "tries": len(a.seconds)} for a in attacks},
        "peak_rss": _peaks(sampler.samples),
        "largest_process": max((rss for *_, rss in sampler.samples), default=0),
    }


def _peaks(samples) -> dict[str, int]:
    peaks: dict[str, int] = {}
    for _, _, role, _, rss in samples:
        peaks[role] = max(peaks.get(role, 0), rss)
    return peaks


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def render_report(results: dict) -> str:
    options, machine, phases = results["options"], results["machine"], results["phases"]
    alone, beside = phases["alone"], phases["beside the attack"]
    lines = [
        f"MemoryOS beside hostile accounts and clients ({', '.join(options['attacks'])}): {machine['cores']} cores; "
        f"{options['web_workers']} web processes "
        f"(gunicorn + uvicorn), 1 Celery worker, PostgreSQL; the production limits; {options['seconds']} s a phase",
        "files: " + ", ".join(f"{name} {size / 2**20:,.1f} MB" for name, size in results["files"].items()),
        "",
        f"{'the victim':<20} {'replies':>8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'failed':>7}  "
        f"{'consolidation delay p50 / p95 / max s':>38} {'web RSS':>8} {'worker RSS':>10}",
    ]
    for name, phase in phases.items():
        chat = phase["figures"].get("victim chat", {})
        delays = phase["consolidation_delays"]
        lines.append(
            f"{name:<20} {chat.get('requests', 0):>8} {chat.get('p50', 0):>8.0f} {chat.get('p95', 0):>8.0f} "
            f"{chat.get('max', 0):>8.0f} {chat.get('failures', 0):>7}  "
            f"{_percentile(delays, 0.5):>14.1f} / {_percentile(delays, 0.95):>5.1f} / {max(delays, default=0):>5.1f} "
            f"({len(delays)} turns)  {phase['peak_rss'].get('web', 0) / 2**20:>6.0f}Mi "
            f"{phase['peak_rss'].get('worker', 0) / 2**20:>8.0f}Mi"
        )
    reply_ratio = beside["figures"].get("victim chat", {}).get("p95", 0) / max(
        alone["figures"].get("victim chat", {}).get("p95", 0), 1e-9
    )
    delay_ratio = _percentile(beside["consolidation_delays"], 0.95) / max(
        _percentile(alone["consolidation_delays"], 0.95), 1e-9
    )
    largest = results["largest_process"]
    lines += [
        "",
        f"beside the attack / alone: reply p95 x{reply_ratio:.2f}, consolidation delay p95 x{delay_ratio:.2f} "
        f"(target <= 2); the largest process {largest / 2**20:,.0f} MiB (target < 1,024)",
        "",
        "What the attack got (status and what was sent, how many times):",
    ]
    for name, attack in results["attacks"].items():
        got = ", ".join(f"{outcome} x{count}" for outcome, count in sorted(attack["outcomes"].items()))
        lines.append(f"  {name} ({attack['tries']} tries): {got}")
    return "\n".join(lines)
