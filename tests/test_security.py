"""Issue 15's findings, each reproduced first: what a hostile account, a crash or a reset finds."""

import pytest

from memory_engine.engine import long_term
from memory_engine.errors import EntryNotActive
from memory_engine.models import LongTermEntry
from tests.api_helpers import SPACE, client_for


@pytest.fixture
def nurse(alice_space):
    return long_term.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test")


def test_an_edit_of_an_entry_deleted_meanwhile_is_refused_and_changes_nothing(nurse):
    seen = LongTermEntry.objects.get(pk=nurse.pk)  # an editor's request read it while it was active
    long_term.entry_delete(entry=nurse, actor="someone else", cause="admin")

    with pytest.raises(EntryNotActive, match="deleted"):
        long_term.entry_edit(entry=seen, value="surgeon", actor="editor")

    stored = LongTermEntry.objects.get(pk=nurse.pk)
    assert (stored.status, stored.value) == ("deleted", "nurse")
    assert [v.after for v in stored.versions.order_by("at", "pk")] == ["nurse", None]


def test_the_api_answers_409_to_an_edit_of_a_deleted_entry(nurse):
    api = client_for("alice")
    url = SPACE.format(user="alice") + f"profile/{nurse.pk}/"
    assert api.delete(url).status_code == 204

    answer = api.patch(url, {"value": "surgeon"}, format="json")

    assert answer.status_code == 409 and "deleted" in answer.data["detail"]
    assert LongTermEntry.objects.get(pk=nurse.pk).value == "nurse"
