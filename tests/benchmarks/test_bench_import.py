"""The import benchmark (bench/imports.py): its export is one the reader takes, and a small run prints
every figure for the web part and the worker's three measures (the embedder alone, bulk, turn by turn),
each in a process of its own."""

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


@pytest.mark.once  # processes of its own, on a database of its own: nothing to run twice
def test_a_small_run_prints_the_web_part_and_the_embedder_bulk_and_turn_by_turn_side_by_side(tmp_path):
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
    turns = row["file"]["turns"]
    assert row["web"]["turns"] == turns > 15
    assert row["embedder"]["turns"] == turns  # fewer than the sample: all of them
    assert row["turn"]["status"] == "succeeded" and 15 <= row["turn"]["turns"] < 30  # whole conversations
    assert row["bulk"]["status"] == "succeeded" and row["bulk"]["turns"] == turns
    for part in ("turn", "bulk"):  # an import ends consolidated: its history in mid-term memory
        assert row[part]["short_term"] == 0 and row[part]["sessions"] >= 1
        # every page embedded once, with the facts and summaries: part of the part's time
        assert row[part]["embedded_texts"] > row[part]["turns"]
        assert 0 < row[part]["embedding_seconds"] < row[part]["seconds"]
    for part in ("web", "embedder", "turn", "bulk"):
        assert row[part]["peak_mib"] >= row[part]["before_mib"] > 0 and row[part]["seconds"] > 0
    printed = out.getvalue()
    assert "| 0.2 MB |" in printed and "| 0.2 MB | bulk |" in printed and "| 0.2 MB | turn by turn |" in printed
