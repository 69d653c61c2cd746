"""The hostile-files benchmark: the files it attacks with are what the upload check refuses or bounds, and,
run small on the production stack (opt-in: `benchmark`), the victim is answered in both phases, every
attack is refused or bounded (never a server error), and the figures add up."""

import json

import pytest
from django.core.management import call_command

from bench.hostile import HostileOptions, make_files
from memory_engine.formats.common import FormatError
from memory_engine.models import ImportUpload
from memory_engine.services.dispatch import upload_start
from tests.processes import database_url


def test_its_files_written_small_are_refused_by_the_upload_check_or_read_whole(alice_space, tmp_path):
    files = make_files(HostileOptions(work_dir=str(tmp_path)).scaled(0.001), progress=lambda line: None)
    assert set(files) == {"loop", "digits", "whitespace", "string", "tiny", "chatgpt"}

    def upload(name: str) -> ImportUpload:
        with files[name].open("rb") as body:
            return upload_start(space=alice_space, chunks=iter(lambda: body.read(1 << 20), b""), name=name)

    with pytest.raises(FormatError, match="cycle"):
        upload("loop")
    with pytest.raises(FormatError, match="longer than"):
        upload("digits")
    assert not ImportUpload.objects.exists()
    # Small, the zips unpack within the limits: what they hold is read, bounded, and kept.
    assert upload("whitespace").turns == 5
    assert upload("string").cut >= 1
    assert upload("tiny").turns > 1000 and upload("chatgpt").format == "chatgpt"


@pytest.mark.benchmark
@pytest.mark.once
@pytest.mark.django_db(transaction=True)
def test_a_small_run_prints_both_phases_and_what_each_attack_got(tmp_path, capsys):
    base = database_url().rsplit("/", 1)[0] if database_url().startswith("postgres") else None
    url = (base or "postgres://postgres@127.0.0.1:5432") + "/memoryos_bench_hostile_test"
    out = tmp_path / "figures.json"
    call_command(
        "bench_hostile",
        "--seconds", "6", "--warmup-seconds", "3", "--scale", "0.01",
        "--work-dir", str(tmp_path), "--postgres-url", url, "--json", str(out),
        "--idle-connections", "300", "--filers", "2",
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
    assert "202 then refused (format) loop" in outcomes["files"], outcomes["files"]  # the looping file refused
    assert outcomes["idle"]["opened"] >= 300 and outcomes["idle"]["cut by the server"] > 0, outcomes["idle"]
    checks = [got for name, got in outcomes.items() if name.startswith("checks ")]
    assert len(checks) == 2 and all("202 then ready" in got for got in checks), checks
    assert figures["largest_process"] < 1 << 30
    assert "beside the attack / alone: reply p95 x" in printed and "What the attack got" in printed
