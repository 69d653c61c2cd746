"""The victim of the hostile-files benchmark (bench/hostile.py runs Locust on this file, headless): one client
chatting with its own space, a reply then HOSTILE_PLAN's "think" seconds, over and over."""

import itertools
import json
import os

from locust import FastHttpUser, constant, task

PLAN = json.loads(open(os.environ["HOSTILE_PLAN"]).read())  # noqa: SIM115, PTH123 (read once at start)
SAID = itertools.cycle(
    [
        "I walked the dog along the canal this morning.",
        "What did I say about the dog?",
        "My sister Ana is visiting on Saturday.",
        "Who is visiting this weekend?",
        "I have started learning the cello.",
        "What instrument am I learning?",
    ]
)


class Victim(FastHttpUser):
    wait_time = constant(PLAN["think"])

    @task
    def chat(self):
        self.client.post(
            f"/api/v1/users/{PLAN['user']}/spaces/helper/chat/",
            json={"query": next(SAID)},
            headers={"Authorization": f"Bearer {PLAN['token']}"},
            name="victim chat",
        )
