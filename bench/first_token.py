"""Time to first token: how soon a chat reply's first words reach the client, beside the whole reply.

    DATABASE_URL=sqlite:///var/bench-first-token.sqlite3 manage.py bench_first_token

A memory space is filled with the first --turns turns of a LoCoMo conversation (stored and moved into
mid-term sessions as a chat would, without promotion, so no LLM is needed), then the production web
server (`scripts/serve web`: gunicorn with one uvicorn worker, DEBUG off) answers the conversation's
questions over HTTP, with each LLM in turn: the bundled offline model, and the scripted OpenAI-compatible
server on 127.0.0.1 (which streams a fixed reply word by word, --fake-token-ms apart: it measures what
the server adds, not a model).

- **cold**: the first reply of a web process just started, with nothing loaded (MEMORYOS_WARM_UP off):
  once streamed, and once more from a fresh process, not streamed;
- **warm**: then --replies questions streamed and the same questions not streamed, alternately.

For a streamed reply it times the first `delta` event (the first words on screen) and the `reply` event
(the turn stored); for a reply not streamed, the whole answer. Consolidation is queued on a Redis of the
benchmark's own that no worker reads, so no job competes with the replies for the cores.
"""

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

from bench.fake_llm_server import FakeLLMServer, nothing_extracted, reply
from bench.latency import percentile
from bench.processes import RedisServer, Role, free_port, healthy, wait_until
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import iter_pages, load_samples
from memory_engine.models import MemoryUser
from memory_engine.services.ingest import TurnIn, ingest
from memory_engine.services.spaces import assistant_create, space_get, user_create, user_memory_delete
from memory_engine.services.tokens import token_create

USER = "bench-first-token"
ASSISTANT = "helper"
# 29 words; each reply is told apart by its number, or the reply guard would reject the second as a copy of
# the first (a reply repeated word for word to another message) and ask again.
FAKE_REPLY = (
    "From what you told me, it sounds like a good plan, and I am glad the weekend went well for you. "
    "Let me know how it goes, note {number}."
)


@dataclass
class Timings:
    """Milliseconds: first words and whole reply of streamed replies; whole reply of replies not streamed."""

    first: list[float] = field(default_factory=list)
    streamed: list[float] = field(default_factory=list)
    plain: list[float] = field(default_factory=list)
    withheld: int = 0  # replies that degenerated twice and were answered with the apology


def questions_and_turns(sample_id: str, turns: int) -> tuple[list[str], list[TurnIn], str]:
    """The sample's questions, its first `turns` turns, and the user's name (speaker_a)."""
    sample = next((s for s in load_samples(memory_settings().locomo_file) if s["sample_id"] == sample_id), None)
    if sample is None:
        raise ValueError(f"no LoCoMo sample {sample_id!r} in the dev split")
    pages = list(iter_pages(sample))[:turns]
    stored = [TurnIn(p.user_input, p.agent_response, p.timestamp) for p in pages]
    return [qa["question"] for qa in sample["qa"]], stored, sample["conversation"]["speaker_a"]


def fill_space(turns: list[TurnIn], name: str) -> str:
    """A fresh space holding `turns`, and a token for it."""
    user = MemoryUser.objects.filter(external_id=USER).first()
    if user is not None:  # left by an earlier run: its spaces, index files and tokens go with it
        user_memory_delete(user=user)
    user_create(user_id=USER, display_name=name)
    assistant_create(assistant_id=ASSISTANT, name="Helper")
    space = space_get(user_id=USER, assistant_id=ASSISTANT)
    ingest(space, turns, promotion=False)
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id=USER), name="bench")
    return secret


def streamed_reply(client: httpx2.Client, url: str, query: str) -> tuple[float, float, bool]:
    """(ms to the first words, ms to the stored turn, whether the reply was withheld) of one streamed reply."""
    began = time.perf_counter()
    first = None
    withheld = False
    with client.stream("POST", url, json={"query": query, "stream": True}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"chat answered {response.status_code}: {response.read()[:300]!r}")
        for line in response.iter_lines():
            if line == "event: delta" and first is None:
                first = time.perf_counter()
            elif line == "event: error":
                raise RuntimeError(f"the reply failed: {next(response.iter_lines())}")
            elif line.startswith("data: ") and '"reply_withheld":true' in line:
                withheld = True
                break
            elif line.startswith("data: ") and '"reply_withheld":false' in line:
                break
    done = time.perf_counter()
    if first is None:
        raise RuntimeError("a streamed reply sent no words")
    return (first - began) * 1000, (done - began) * 1000, withheld


def plain_reply(client: httpx2.Client, url: str, query: str) -> tuple[float, bool]:
    began = time.perf_counter()
    answer = client.post(url, json={"query": query})
    if answer.status_code != 200:
        raise RuntimeError(f"chat answered {answer.status_code}: {answer.text[:300]}")
    return (time.perf_counter() - began) * 1000, answer.json()["reply_withheld"]


class WebServer:
    """`scripts/serve web` with the benchmark's environment; `chat_url` and a client with the token."""

    def __init__(self, env: dict, run_dir: Path, secret: str, name: str) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.role = Role("web", {**env, "BIND": f"127.0.0.1:{port}"}, run_dir / f"web-{name}.log")
        self.client = httpx2.Client(headers={"Authorization": f"Bearer {secret}"}, timeout=600)
        self.chat_url = f"{self.base}/api/v1/users/{USER}/spaces/{ASSISTANT}/chat/"

    def __enter__(self) -> "WebServer":
        role = self.role
        wait_until(lambda: healthy(f"{self.base}/healthz") or not role.running(), timeout=300, what="the web server")
        if not role.running():
            raise RuntimeError(f"the web server did not start:\n{role.output()[-3000:]}")
        return self

    def __exit__(self, *exc) -> None:
        self.client.close()
        self.role.stop()


def measure(llm: str, *, env: dict, run_dir: Path, secret: str, questions: list[str], replies: int, log) -> Timings:
    """Cold and warm timings of one LLM through a web process of its own."""
    cold, warm = Timings(), Timings()
    with WebServer(env, run_dir, secret, f"{llm}-cold-streamed") as web:
        first, whole, withheld = streamed_reply(web.client, web.chat_url, questions[0])
        cold.first.append(first)
        cold.streamed.append(whole)
        cold.withheld += withheld
        log(f"{llm} cold, streamed: first words {first:.0f} ms, reply {whole:.0f} ms")
        for number, query in enumerate(questions[1 : replies + 1], start=1):
            first, whole, withheld = streamed_reply(web.client, web.chat_url, query)
            plain, plain_withheld = plain_reply(web.client, web.chat_url, query)
            warm.first.append(first)
            warm.streamed.append(whole)
            warm.plain.append(plain)
            warm.withheld += withheld + plain_withheld
            log(
                f"{llm} warm {number}/{replies}: first words {first:.0f} ms, reply {whole:.0f} ms streamed, "
                f"{plain:.0f} ms not{' (a reply withheld)' if withheld or plain_withheld else ''}"
            )
    with WebServer(env, run_dir, secret, f"{llm}-cold-plain") as web:
        plain, withheld = plain_reply(web.client, web.chat_url, questions[0])
        cold.plain.append(plain)
        cold.withheld += withheld
        log(f"{llm} cold, not streamed: reply {plain:.0f} ms")
    return {"cold": cold, "warm": warm}


def run(*, sample: str, turns: int, replies: int, llms: list[str], fake_token_ms: float, run_dir: Path, log) -> dict:
    questions, stored, name = questions_and_turns(sample, turns)
    log(f"filling a space with {len(stored)} turns of {sample}")
    secret = fill_space(stored, name)
    redis = RedisServer(run_dir)
    redis.start()
    fake = FakeLLMServer(model="fake-model").start()
    numbers = iter(range(10**9))
    fake.responder = lambda request: (
        nothing_extracted()
        if "response_format" in request
        else reply(FAKE_REPLY.format(number=next(numbers)), chunk_seconds=fake_token_ms / 1000)
    )
    base_env = {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + os.urandom(24).hex(),
        "CELERY_BROKER_URL": redis.url,
        "STATIC_ROOT": str(run_dir / "static"),
        # The index files the filling wrote, as a deployment's index volume holds them.
        "MEMORYOS_INDEX_DIR": str(memory_settings().index_dir),
        "WEB_WORKERS": "1",
        "MEMORYOS_WARM_UP": "false",
        "MEMORYOS_API_CHAT_RATE": "100000/min",
        "HF_HUB_OFFLINE": "1",
    }
    envs = {
        "offline": {**base_env, "MEMORYOS_LLM_PROVIDER": "offline"},
        "fake": {
            **base_env,
            "MEMORYOS_LLM_PROVIDER": "openai",
            "MEMORYOS_LLM_BASE_URL": fake.base_url,
            "MEMORYOS_LLM_MODEL": "fake-model",
        },
    }
    try:
        return {
            llm: measure(
                llm, env=envs[llm], run_dir=run_dir, secret=secret, questions=questions, replies=replies, log=log
            )
            for llm in llms
        }
    finally:
        fake.stop()
        redis.stop()


def summary(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.0f}"
    return f"{statistics.median(values):.0f} (p95 {percentile(values, 0.95):.0f})"


def table(results: dict) -> list[str]:
    lines = [
        "| LLM | process | first words, streamed (ms) | reply stored, streamed (ms) | reply, not streamed (ms) "
        "| first words / reply not streamed | replies withheld |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for llm, by_phase in results.items():
        for phase, t in by_phase.items():
            ratio = statistics.median(t.first) / statistics.median(t.plain)
            lines.append(
                f"| {llm} | {phase} | {summary(t.first)} | {summary(t.streamed)} | {summary(t.plain)} | {ratio:.2f} "
                f"| {t.withheld} of {len(t.streamed) + len(t.plain)} |"
            )
    return lines
