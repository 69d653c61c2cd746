"""The time-to-first-token benchmark: the space it fills holds the sample's first turns and its table says
what it timed; run small with the scripted server (opt-in: `benchmark`), it fills its own benchmark
database, runs the production web server, and prints its table."""

import os
import re
import subprocess
import sys

import pytest

from bench.first_token import USER, Timings, fill_space, questions_and_turns, table
from memory_engine.models import ApiToken, Page
from tests.processes import ROOT


def test_it_fills_a_space_with_the_samples_first_turns_and_tables_what_it_timed(db):
    questions, turns, name = questions_and_turns("conv-26", 6)
    assert len(turns) == 6 and len(questions) > 6 and name
    secret = fill_space(turns, name)
    assert Page.objects.filter(space__user__external_id=USER).count() == 6
    assert ApiToken.objects.filter(memory_user__external_id=USER).count() == 1 and secret
    fill_space(turns[:2], name)  # a second run starts from a fresh space
    assert Page.objects.filter(space__user__external_id=USER).count() == 2

    timed = Timings(first=[100.0, 300.0], streamed=[2000.0, 2400.0], plain=[1000.0, 1000.0], withheld=1)
    (row,) = table({"fake": {"warm": timed}})[2:]
    assert row == "| fake | warm | 200 (p95 300) | 2200 (p95 2400) | 1000 (p95 1000) | 0.20 | 1 of 4 |"


@pytest.mark.benchmark  # the production web server started twice for each LLM
def test_a_small_run_prints_first_words_well_before_the_whole_reply(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/bench-first-token.sqlite3",
        "MEMORYOS_INDEX_DIR": str(tmp_path / "indexes"),
        "DEBUG": "true",
        "HF_HUB_OFFLINE": "1",
    }
    run = subprocess.run(
        [sys.executable, "manage.py", "bench_first_token", "--llm", "fake", "--replies", "2", "--turns", "8",
         "--fake-token-ms", "50"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {
        row[1]: row for row in re.findall(r"^\| (fake) \| (cold|warm) \| (.+?) \| (.+?) \| (.+?) \|", run.stdout, re.M)
    }
    assert set(rows) == {"cold", "warm"}, run.stdout
    for _, phase, first, streamed, plain in rows.values():
        first_ms, whole_ms = float(first.split()[0]), float(streamed.split()[0])
        # 29 words 50 ms apart: a stream that shows the first words only at the end would fail this.
        assert whole_ms >= 29 * 50 and first_ms < whole_ms - 1000, (phase, first, streamed)
        assert float(plain.split()[0]) >= 29 * 50
    assert "| 0 of 4 |" in run.stdout and "| 0 of 2 |" in run.stdout  # no reply withheld
