"""Work is sent to the workers by task name (services/dispatch.py), looked up in the Celery app's registry:
every process, a web process as much as a worker, has the tasks registered once Django is set up."""

import json
import os
import subprocess
import sys

from memory_engine.services import dispatch
from tests.processes import ROOT

NAMES = [dispatch.CONSOLIDATE, dispatch.SWEEP, dispatch.RUN_IMPORT, dispatch.RUN_BACKGROUND_JOB]


def test_a_process_that_only_set_django_up_knows_every_task_dispatch_sends():
    script = (
        "import django, json; django.setup(); from celery import current_app; "
        "print(json.dumps(sorted(n for n in current_app.tasks if n.startswith('memory_engine.'))))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "playground.settings", "DEBUG": "true"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == sorted(NAMES)
