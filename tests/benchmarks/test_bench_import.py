"""The import benchmark (bench/imports.py): its export is one the reader takes, and a small run prints
every figure for the web part and the worker part, each in a process of its own."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from bench.imports import write_export
from memory_engine import formats


def test_the_generated_export_is_a_chatgpt_export_of_the_size_asked(tmp_path):
    path = tmp_path / "export.json"
    made = write_export(path, 0.3)
    assert 0.3 * 1024 * 1024 <= made["bytes"] < 0.4 * 1024 * 1024
    listed = formats.scan(path)
    assert listed.format == formats.CHATGPT
    assert (len(listed.conversations), listed.turns) == (made["conversations"], made["turns"])
    first = next(formats.records(path))  # an edited first message: its old branch left behind
    assert all("an earlier wording" not in m.text for m in first.messages) and len(first.messages) == 20


@pytest.mark.once  # two processes of its own, on a database of its own: nothing to run twice
def test_a_small_run_prints_the_web_and_worker_parts(tmp_path):
    out = StringIO()
    figures = tmp_path / "figures.json"
    call_command(
        "bench_import",
        "--sizes-mb",
        "0.2",
        "--store-turns",
        "15",
        "--work-dir",
        str(tmp_path / "work"),
        "--json",
        str(figures),
        stdout=out,
    )
    (row,) = json.loads(figures.read_text())
    assert row["web"]["turns"] == row["file"]["turns"] > 15
    assert row["worker"]["status"] == "succeeded" and 15 <= row["worker"]["turns"] < 30  # whole conversations
    for part in ("web", "worker"):
        assert row[part]["peak_mib"] >= row[part]["before_mib"] > 0 and row[part]["seconds"] > 0
    assert "| 0.2 MB |" in out.getvalue()
