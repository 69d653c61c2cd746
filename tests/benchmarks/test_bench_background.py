"""manage.py bench_background on a small input: every figure is printed and the throwaway memory is gone
afterwards (no timed assertions)."""

import json
from io import StringIO

from django.core.management import call_command

from memory_engine.models import BackgroundJob, MemoryUser, Page


def test_it_prints_both_paths_side_by_side_and_leaves_nothing_behind(db, tmp_path):
    out = StringIO()
    figures_file = tmp_path / "figures.json"
    call_command(
        "bench_background", "--pages", "25", "--questions", "4", "--k", "5", "--json", figures_file, stdout=out
    )
    printed = out.getvalue()
    assert "restore of 25 pages" in printed and "comparison of 4 questions x k=5" in printed
    figures = json.loads(figures_file.read_text())
    assert figures["pages"] == 25 and figures["questions"] == 4
    assert all(figures[f"{work}_{part}_s"] > 0 for work in ("restore", "compare") for part in ("before", "request"))
    assert figures["compare_answer_bytes"] > 0
    assert not MemoryUser.objects.filter(external_id__startswith="bench-background-").exists()
    assert not Page.objects.exists() and not BackgroundJob.objects.exists()
