"""The first of the two commands, `scripts/play`, as a newcomer runs it: on other ports than the usual, and
stopped with Ctrl-C while its worker waits on the LLM."""

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest
import redis

from bench.fake_llm_server import held
from memory_engine.models import ConsolidationRun, Page
from tests.memory_helpers import CAT_TALK, add_turns, extraction
from tests.processes import ROOT, database_url, free_port, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def promotion_calls(fake_llm) -> int:
    return sum("response_format" in request for request in list(fake_llm.requests))


def test_ctrl_c_during_a_promotion_stops_the_web_server_and_the_worker_within_15_s(
    memory, hot_space, fake_llm, broker, settings, tmp_path
):
    """Ctrl-C reaches the terminal's process group: the web server and the script. The worker, in its
    own group, is asked to stop and given PLAYGROUND_STOP_SECONDS (5) to finish its task; a promotion held
    by the LLM does not finish, and is killed with its pool. Nothing stored is lost: the session waits,
    still to be promoted, for the next worker's sweep."""
    gate = threading.Event()  # never set: the LLM never answers
    fake_llm.responder = lambda request: held(gate, extraction())
    settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": "celery"}
    address = f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "PLAYGROUND_ADDR": address,
        "REDIS_PORT": str(broker.port),  # scripts/services finds this Redis up; the broker URL follows
        "DATABASE_URL": database_url(),
        "MEMORYOS_INDEX_DIR": str(tmp_path / "indexes"),
        "MEMORYOS_WARM_UP": "0",
        "MEMORYOS_LLM_PROVIDER": "openai",
        "MEMORYOS_LLM_BASE_URL": fake_llm.base_url,
        "MEMORYOS_LLM_MODEL": "fake-model",
        "MEMORYOS_LLM_API_KEY": "test-key",
        "MEMORYOS_LLM_TIMEOUT_SECONDS": "600",
        "MEMORYOS_CONSOLIDATION_LEASE_SECONDS": "600",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("CELERY_BROKER_URL", None)
    play, log = start_play(env, address, tmp_path)
    try:
        add_turns(memory, [*CAT_TALK, ("ok", "ok")])
        wait_for(
            lambda: promotion_calls(fake_llm),
            progress=lambda: (tmp_path / "play.log").stat().st_size,
            what="the worker to ask the LLM for a promotion",
        )
        assert ConsolidationRun.objects.filter(status="running").exists()
        worker_group = worker_process_group(play.pid)

        asked = time.monotonic()
        os.killpg(play.pid, signal.SIGINT)
        try:
            play.wait(timeout=120)
        except subprocess.TimeoutExpired:
            output = (tmp_path / "play.log").read_text()[-3000:]
            pytest.fail(f"scripts/play runs 120 s after Ctrl-C:\n{processes_of(play.pid, worker_group)}\n{output}")
        took = time.monotonic() - asked
    finally:
        if play.poll() is None:
            os.killpg(play.pid, signal.SIGKILL)
        log.close()
    output = (tmp_path / "play.log").read_text()
    print(f"scripts/play ended {took:.1f} s after SIGINT")
    assert took <= 15, f"scripts/play took {took:.1f} s to stop:\n{output[-3000:]}"
    assert "did not end within 5 s" in output
    # Killed processes finish exiting on their own time; none may live on.
    wait_for(
        lambda: not group_members(worker_group), progress=lambda: 0, what="the worker's processes to exit", stall=60
    )
    assert not answers(f"http://{address}/healthz")
    assert redis_answers(broker.port)  # a Redis that was running already is left running
    # The session is where it was: stored, in mid-term, not yet promoted (the sweep takes it up again).
    assert Page.objects.filter(space=hot_space).count() == 4
    assert Page.objects.filter(space=hot_space, tier="mid", analyzed=False).exists()


def test_ctrl_c_stops_the_redis_the_playground_started_and_its_log_says_things_once(tmp_path):
    """With no Redis on its port, scripts/play starts one (scripts/services) and uses it as the broker;
    Ctrl-C stops it with the web server and the worker, as the README says (it was left running). Its
    log has the worker's lines once and no line for a request answered."""
    port, address = free_port(), f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "PLAYGROUND_ADDR": address,
        "REDIS_PORT": str(port),
        "DATABASE_URL": database_url(),
        "MEMORYOS_INDEX_DIR": str(tmp_path / "indexes"),
        "MEMORYOS_WARM_UP": "0",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("CELERY_BROKER_URL", None)
    play, log = start_play(env, address, tmp_path)
    try:
        assert redis_answers(port) and "starting redis" in (tmp_path / "play.log").read_text()
        assert answers(f"http://{address}/healthz")
        # Its log says what matters, once: the worker's lines were written twice, every request had one.
        ready = "embedding model loaded"
        wait_for(
            lambda: ready in (tmp_path / "play.log").read_text(),
            progress=lambda: (tmp_path / "play.log").stat().st_size,
            what="the worker to be ready",
        )
        output = (tmp_path / "play.log").read_text()
        assert output.count(ready) == 1, output[-3000:]
        assert "GET /healthz" not in output, output[-3000:]
        os.killpg(play.pid, signal.SIGINT)
        play.wait(timeout=120)
    finally:
        if play.poll() is None:
            os.killpg(play.pid, signal.SIGKILL)
        log.close()
    try:
        wait_for(lambda: not redis_answers(port), progress=lambda: 0, what="the playground's Redis to stop", stall=60)
    finally:
        if redis_answers(port):  # left running: not left to the rest of the suite
            with contextlib.suppress(redis.RedisError):
                redis.Redis(port=port).shutdown(nosave=True)
    assert not answers(f"http://{address}/healthz")


def start_play(env: dict, address: str, tmp_path: Path):
    """scripts/play started as a terminal starts a command, its output in tmp_path/play.log; returns once
    its web server answers (the process and the open log)."""
    log = (tmp_path / "play.log").open("w")
    # A session of its own, as a terminal gives the command it runs: Ctrl-C is SIGINT to its group. And
    # SIGINT at its default, as a terminal's command has it: a suite started in the background (`nohup
    # .ci/run &`) runs with SIGINT ignored, which a child inherits and bash cannot trap (two busy runs
    # failed so). A signal a process catches is at its default after exec; one it ignores stays ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        play = subprocess.Popen(
            ["scripts/play"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        wait_for(
            lambda: answers(f"http://{address}/healthz"),
            progress=lambda: (tmp_path / "play.log").stat().st_size,
            what="the playground's web server",
        )
    except BaseException:
        os.killpg(play.pid, signal.SIGKILL)
        log.close()
        raise
    return play, log


def redis_answers(port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def answers(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=5).status_code == 200
    except httpx2.HTTPError:
        return False


def worker_process_group(script_pid: int) -> int:
    """The process group of the script's Celery worker (the script's child that leads a group)."""
    children = subprocess.run(
        ["ps", "-o", "pid=,pgid=,args=", "--ppid", str(script_pid)], capture_output=True, text=True
    )
    for line in children.stdout.splitlines():
        pid, pgid, args = line.split(None, 2)
        if "celery" in args and pid == pgid:
            return int(pgid)
    raise AssertionError(f"no worker among the script's children:\n{children.stdout}")


def processes_of(session: int, worker_group: int) -> str:
    """The processes of the script's session and of the worker's group, with what each is waiting in."""
    listing = subprocess.run(
        ["ps", "-eo", "pid,ppid,pgid,sid,stat,wchan:24,etime,args"], capture_output=True, text=True
    )
    lines = listing.stdout.splitlines()
    wanted = [line for line in lines[1:] if line.split()[3] == str(session) or line.split()[2] == str(worker_group)]
    return "\n".join([lines[0], *wanted])


def group_members(pgid: int) -> list[str]:
    """The live processes of a process group (a zombie, killed and waiting to be reaped, is not alive)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        state, group = fields[0], int(fields[2])
        if group == pgid and state != "Z":
            members.append(stat.parent.name)
    return members
