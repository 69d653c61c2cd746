"""The hostile-files benchmark, run small on the production stack: the victim is answered in both phases,
every attack is refused or bounded (never a server error), and the figures add up."""

import json

import pytest
from django.core.management import call_command

from tests.processes import database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.once]


def test_a_small_run_prints_both_phases_and_what_each_attack_got(tmp_path, capsys):
    base = database_url().rsplit("/", 1)[0] if database_url().startswith("postgres") else None
    url = (base or "postgres://postgres@127.0.0.1:5432") + "/memoryos_bench_hostile_test"
    out = tmp_path / "figures.json"
    call_command(
        "bench_hostile",
        "--seconds", "6", "--warmup-seconds", "3", "--scale", "0.01",
        "--work-dir", str(tmp_path), "--postgres-url", url, "--json", str(out),
    )  # fmt: skip
    printed = capsys.readouterr().out
    figures = json.loads(out.read_text())
    for name in ("alone", "beside the attack"):
        chat = figures["phases"][name]["figures"]["victim chat"]
        assert chat["requests"] > 0 and chat["failures"] == 0, figures["phases"][name]
        assert figures["phases"][name]["consolidation_delays"], name  # its turns were consolidated
    outcomes = {name: attack["outcomes"] for name, attack in figures["attacks"].items()}
    assert not [o for got in outcomes.values() for o in got if o.startswith("5")], outcomes  # no server error
    assert set(outcomes["bodies"]) == {"413 unauthenticated 300 MB"}, outcomes["bodies"]
    assert any(o.startswith("202 import") for o in outcomes["imports"]), outcomes["imports"]
    assert "400 loop" in outcomes["files"], outcomes["files"]  # the looping file refused, quickly
    assert figures["largest_process"] < 1 << 30
    assert "beside the attack / alone: reply p95 x" in printed and "What the attack got" in printed
