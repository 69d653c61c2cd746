"""The clients of the multi-tenant benchmark (bench/tenants.py runs Locust on this file, headless).

TENANTS_PLAN: the plan's JSON (each space's user, token, pages and access weight; the queries).
TENANTS_MODE: "mix" (70% retrieve, 20% store a turn, 10% chat, spaces by their Zipf weight); "warm"
(retrievals on the 20 most popular spaces only, or the more popular half of fewer spaces); or
"warm+cold" (the same, plus one client that retrieves from the largest spaces never touched before, one
after another, a second apart).

The clients are FastHttpUsers (geventhttpclient): the load tool shares the server's cores here, and
they spend a fraction of the CPU per request that HttpUser (requests) does.
"""

import itertools
import json
import os
import random

from locust import FastHttpUser, between, constant, task

PLAN = json.loads(open(os.environ["TENANTS_PLAN"]).read())  # noqa: SIM115, PTH123 (read once at start)
MODE = os.environ.get("TENANTS_MODE", "mix")
SPACES = PLAN["spaces"]
WEIGHTS = [space["weight"] for space in SPACES]
QUERIES = PLAN["queries"]
POPULAR = sorted(SPACES, key=lambda space: -space["weight"])[: min(20, len(SPACES) // 2)]
# Large spaces with the least traffic: never loaded by the warm clients.
COLD = iter(sorted((s for s in SPACES if s not in POPULAR), key=lambda space: (-space["pages"], space["weight"])))
TURNS = itertools.count()


def path(space: dict, tail: str) -> str:
    return f"/api/v1/users/{space['user']}/spaces/helper/{tail}"


def headers(space: dict) -> dict:
    return {"Authorization": f"Bearer {space['token']}"}


class Tenant(FastHttpUser):
    """A client of the mixed load: each request for a space drawn by its Zipf weight."""

    wait_time = constant(0)
    abstract = MODE != "mix"  # Locust runs only the classes of the mode

    def space(self) -> dict:
        return random.choices(SPACES, weights=WEIGHTS)[0]

    @task(70)
    def retrieve(self):
        space = self.space()
        self.client.post(
            path(space, "retrieve/"), json={"query": random.choice(QUERIES)}, headers=headers(space), name="retrieve"
        )

    @task(20)
    def store_turn(self):
        space = self.space()
        number = next(TURNS)
        turn = {
            "user_input": f"Today I practised the piano for {number % 90 + 10} minutes.",
            "agent_response": "Well done, keep it up!",
        }
        self.client.post(path(space, "turns/"), json=turn, headers=headers(space), name="store turn")

    @task(10)
    def chat(self):
        space = self.space()
        self.client.post(
            path(space, "chat/"), json={"query": random.choice(QUERIES)}, headers=headers(space), name="chat"
        )


class WarmClient(FastHttpUser):
    """Retrievals on the most popular spaces only: their indexes stay in memory."""

    wait_time = constant(0)
    abstract = MODE == "mix"

    @task
    def retrieve(self):
        space = random.choice(POPULAR)
        self.client.post(
            path(space, "retrieve/"),
            json={"query": random.choice(QUERIES)},
            headers=headers(space),
            name="warm retrieve",
        )


class ColdLoader(FastHttpUser):
    """One client loading a large space never touched before, then the next, a second apart."""

    wait_time = between(1, 1)
    fixed_count = 1
    abstract = MODE != "warm+cold"

    @task
    def retrieve_cold(self):
        space = next(COLD, None)
        if space is None:
            return
        self.client.post(
            path(space, "retrieve/"),
            json={"query": random.choice(QUERIES)},
            headers=headers(space),
            name="cold retrieve",
        )
