"""bench_recall (bench/recall_only.py): a set's questions answered from memory alone, counted."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

SET = {
    "description": "one conversation",
    "conversations": [
        {
            "id": "t-01",
            "user_name": "Ines",
            "identity": [],
            "sessions": [
                {
                    "days_after_previous": 0,
                    "turns": [
                        {"say": "My dog Rex is a beagle and he hates the rain."},
                        {"say": "I work nights at the bakery on Rua Alegre."},
                    ],
                },
                {
                    "days_after_previous": 3,
                    "turns": [
                        {"ask": "What's my dog called again?", "expect": ["Rex"]},
                        {"ask": "What's my blood type?", "not_told": True},
                    ],
                },
            ],
        }
    ],
}


@pytest.mark.django_db
def test_a_set_is_answered_from_memory_alone_and_counted(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(SET))
    out = StringIO()
    call_command("bench_recall", str(path), stdout=out)
    header, _, row = out.getvalue().strip().splitlines()
    assert header.startswith("| set | facts recalled | never told, said so |")
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == "tiny" and cells[1] == "1/1"
    said, guessed, to_model = int(cells[2].split("/")[0]), int(cells[3]), int(cells[4])
    assert cells[2].endswith("/1") and said + guessed + to_model == 1


def test_a_missing_set_is_refused():
    with pytest.raises(CommandError, match="no such set"):
        call_command("bench_recall", "no/such/set.json")
