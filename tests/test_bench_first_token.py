"""The time-to-first-token benchmark, run small with the scripted server: it fills its own benchmark
database, runs the production web server, and prints its table."""

import os
import re
import subprocess
import sys

from tests.processes import ROOT


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
